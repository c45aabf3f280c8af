package raftstore

import "encoding/binary"

// Every key of a Store's DB starts with one of these bytes; the two ranges
// never meet, so the log range can be iterated and compacted on its own.
// Do not renumber: on disk.
const (
	logPrefix    byte = 'l'
	stablePrefix byte = 's'
)

const logKeyLen = 1 + 8

// logKey is the key of the entry at index (keeps R1).
func logKey(index uint64) []byte {
	k := make([]byte, logKeyLen)
	k[0] = logPrefix
	binary.BigEndian.PutUint64(k[1:], index)
	return k
}

// logKeyIndex is the index in a key of the log range; ok is false for a key
// that is not a well-formed log key.
func logKeyIndex(k []byte) (index uint64, ok bool) {
	if len(k) != logKeyLen || k[0] != logPrefix {
		return 0, false
	}
	return binary.BigEndian.Uint64(k[1:]), true
}

// logRangeEnd is the exclusive upper bound of every log key.
var logRangeEnd = []byte{logPrefix + 1}

// logRangeStart is the inclusive lower bound of every log key.
var logRangeStart = []byte{logPrefix}

// logKeyAfter is the exclusive upper bound of the keys of indexes <= index.
func logKeyAfter(index uint64) []byte {
	if index == ^uint64(0) {
		return logRangeEnd
	}
	return logKey(index + 1)
}

// stableKey is the key under which the stable store keeps key.
func stableKey(key []byte) []byte {
	k := make([]byte, 0, 1+len(key))
	k = append(k, stablePrefix)
	return append(k, key...)
}
