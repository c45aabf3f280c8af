package base

import (
	"bytes"
	"encoding/binary"
	"fmt"
)

// Kind says what an internal key records.
//
// Do not renumber: these values are on disk (table keys, WAL batches).
type Kind uint8

const (
	// KindDelete is a tombstone: the user key has no value at this seqnum.
	KindDelete Kind = 0
	// KindSet records a value for the user key.
	KindSet Kind = 1

	// KindMax is the largest valid kind. A search key built with it sorts
	// before every real entry with the same user key and seqnum (B1, B3).
	KindMax = KindSet

	// KindRangeDelete is a range tombstone: every user key in a range has
	// no value below this seqnum (package internal/rangedel). It is not a
	// point kind, so Valid rejects it: it appears in WAL batches and as
	// the kind of a table bound that a range tombstone sets, never as the
	// kind of an entry in a data block or a memtable.
	KindRangeDelete Kind = 2
)

// kindNames name the kinds for messages and tests, indexed by their
// on-disk values.
var kindNames = [...]string{KindDelete: "DEL", KindSet: "SET", KindRangeDelete: "RANGEDEL"}

// String names the kind for messages and tests.
func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("KIND(%d)", uint8(k))
}

// Valid reports whether k is a point kind (KindDelete or KindSet).
func (k Kind) Valid() bool { return k <= KindMax }

// SeqNum is a 56-bit sequence number; every write gets the next one.
type SeqNum uint64

const (
	// SeqNumMax is the largest sequence number a trailer can hold (2^56-1).
	// Reading at SeqNumMax sees every write.
	SeqNumMax SeqNum = 1<<56 - 1

	// TrailerMax is the largest trailer (SeqNumMax, KindMax). Under B1
	// (userKey, TrailerMax) is the smallest internal key with that user key.
	TrailerMax = uint64(SeqNumMax)<<8 | uint64(KindMax)

	// TrailerLen is the size of an encoded trailer (B2).
	TrailerLen = 8
)

// Visible reports whether an entry written at seq is visible to a read at
// snapshot (B3).
func Visible(seq, snapshot SeqNum) bool { return seq <= snapshot }

// MakeTrailer packs a sequence number and a kind (B2). seq must be at most
// SeqNumMax.
func MakeTrailer(seq SeqNum, kind Kind) uint64 {
	return uint64(seq)<<8 | uint64(kind)
}

// InternalKey is a user key plus its trailer. UserKey aliases the caller's
// memory; use Clone to keep a key beyond the life of that buffer.
type InternalKey struct {
	UserKey []byte
	Trailer uint64
}

// MakeInternalKey builds an internal key; it does not copy userKey.
func MakeInternalKey(userKey []byte, seq SeqNum, kind Kind) InternalKey {
	return InternalKey{UserKey: userKey, Trailer: MakeTrailer(seq, kind)}
}

// MakeSearchKey is the key to SeekGE for the newest version of userKey
// visible at snapshot (B3).
func MakeSearchKey(userKey []byte, snapshot SeqNum) InternalKey {
	return InternalKey{UserKey: userKey, Trailer: MakeTrailer(snapshot, KindMax)}
}

// SeqNum returns the key's sequence number.
func (k InternalKey) SeqNum() SeqNum { return SeqNum(k.Trailer >> 8) }

// Kind returns the key's kind.
func (k InternalKey) Kind() Kind { return Kind(k.Trailer) }

// Size is the length of the encoded key (B2).
func (k InternalKey) Size() int { return len(k.UserKey) + TrailerLen }

// Encode appends the encoded key (user key, then trailer little-endian) to
// dst and returns the extended slice.
func (k InternalKey) Encode(dst []byte) []byte {
	dst = append(dst, k.UserKey...)
	return binary.LittleEndian.AppendUint64(dst, k.Trailer)
}

// Clone returns a copy of k that owns its user key.
func (k InternalKey) Clone() InternalKey {
	return InternalKey{UserKey: append([]byte(nil), k.UserKey...), Trailer: k.Trailer}
}

// String formats the key as "userkey#seq,KIND" with the user key quoted.
func (k InternalKey) String() string {
	return fmt.Sprintf("%q#%d,%s", k.UserKey, k.SeqNum(), k.Kind())
}

// DecodeInternalKey splits an encoded key (B2). It reports false if b is
// shorter than a trailer. The result aliases b.
func DecodeInternalKey(b []byte) (InternalKey, bool) {
	n := len(b) - TrailerLen
	if n < 0 {
		return InternalKey{}, false
	}
	return InternalKey{UserKey: b[:n:n], Trailer: binary.LittleEndian.Uint64(b[n:])}, true
}

// Compare orders internal keys (B1): user key ascending, then trailer
// descending. It returns -1, 0 or +1.
func Compare(a, b InternalKey) int {
	if c := bytes.Compare(a.UserKey, b.UserKey); c != 0 {
		return c
	}
	switch {
	case a.Trailer > b.Trailer:
		return -1
	case a.Trailer < b.Trailer:
		return 1
	}
	return 0
}

// UserKeyPrefix returns a user key's first 8 bytes as a big-endian
// integer, zero-padded when the key is shorter. Whenever two keys'
// prefixes differ, their order is the keys' order (a zero pad sorts like
// the end of the shorter key), so a search over prefixes held in a flat
// array settles most comparisons without loading the keys themselves;
// only equal prefixes need CompareUserKeys.
func UserKeyPrefix(k []byte) uint64 {
	if len(k) >= 8 {
		return binary.BigEndian.Uint64(k)
	}
	var b [8]byte
	copy(b[:], k)
	return binary.BigEndian.Uint64(b[:])
}

// CompareUserKeys orders user keys; it is bytes.Compare, named so that call
// sites say which order they mean.
func CompareUserKeys(a, b []byte) int { return bytes.Compare(a, b) }
