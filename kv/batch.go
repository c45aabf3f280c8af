package kv

import (
	"encoding/binary"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/sievekv/sievekv/internal/base"
)

// A Batch collects writes that Apply commits atomically: after a crash
// either all of them are present or none is. A Batch is not safe for
// concurrent use (Apply refuses, with ErrInvalidArgument, a batch another
// Apply is committing); it may be reused after Reset.
//
// Its encoding is also the payload of a WAL record (docs/format.md, "Batch"):
//
//	offset  size  field
//	0       8     sequence number of the first entry, little-endian
//	8       4     entry count, little-endian
//	12      ...   entries: kind (1 byte, base.Kind) | uvarint key length |
//	              key | for KindSet: uvarint value length | value |
//	              for KindRangeDelete: the key is the range's start, then
//	              uvarint end length | end
type Batch struct {
	data []byte // header + entries; the header is filled at commit
	n    uint32 // number of entries
	err  error  // the first invalid write recorded; Apply returns it
	// keyBytes is the bytes of its keys and range deletions' ends, bound
	// by maxBatchKeyBytes.
	keyBytes int
	// applying is set while an Apply holds the batch: the commit stamps
	// its sequence number into data, so a second Apply of it at the same
	// time (on this DB or another) would write one of them under the
	// other's numbers, and is refused.
	applying atomic.Bool
}

const batchHeaderLen = 12

// maxBatchSize bounds one batch so its WAL record and memtable insert stay
// reasonable; larger writes should be split by the caller.
const maxBatchSize = 1 << 30

// maxEntrySize bounds one write's key and value (a range's start and end)
// together. An entry goes whole into one table block, and a reader refuses
// a block past 1 GiB as corrupt (sstable's bound on untrusted lengths): a
// value just under maxBatchSize made a block a few bytes over it, so the
// write was acknowledged and its table unreadable once flushed. The
// margin covers the block's entry header, trailer and restart array.
const maxEntrySize = maxBatchSize - 64<<10

// MaxKeySize is the longest key a write takes (each of a range deletion's
// start and end counts as a key); longer keys are ErrInvalidArgument.
// Values may be far larger (up to 1 GiB - 64 KiB with their key), but keys
// are repeated where values are not: in index entries, in a table's
// smallest and largest keys, in range deletions. Two 540 MiB keys that no
// separator could shorten made an index block past the 1 GiB a reader
// accepts, and a flush wrote a table whose every entry was then lost.
// With keys bounded, the table writer ends a table before its metadata
// nears that limit (kv's metadataCut). 1 MiB is far beyond any key we know
// of in practice (bbolt's limit is 32 KiB, Badger's 64 KB).
const MaxKeySize = 1 << 20

// maxBatchKeyBytes bounds the bytes of one batch's keys (and range
// deletions' ends), and memTableKeyLimit rotates a memtable holding more.
// A table ends only between user keys, between range deletions only
// where their starts differ, and never where the tombstones it would carry
// into the next table come to half the metadata cut (rangeDelOutput), so
// the metadata cut cannot end a table among the versions of one key that
// snapshots keep, or among range deletions sharing a start or reaching
// far past it together; bounding a flush's keys bounds those tables'
// index and range-deletion blocks all the same. (A compaction has no such
// bound: it can merge many flushes' worth of such keys, which the
// writer's ErrBlockTooLarge then refuses rather than write.) (These limits came
// first, when a table could not end inside a range deletion either: one
// batch of a DeleteRange and 1,000 keys of 1 MiB inside it made a flush
// fail on a 1 GiB index, and every reopen replayed the WAL into the same
// failure.) A memtable holds at most memTableKeyLimit + one batch + one
// commit group of keys, and a flush merges memtables up to 256 MiB of keys
// (flushPrefixLocked): their index and range deletions stay well below
// the 1 GiB a reader accepts.
const maxBatchKeyBytes = 64 << 20

// memTableKeyLimit is a variable so that tests reach it with few keys.
var memTableKeyLimit int64 = 64 << 20

// NewBatch returns an empty batch.
func (d *DB) NewBatch() *Batch { return newBatch() }

func newBatch() *Batch { return &Batch{data: make([]byte, batchHeaderLen, 256)} }

// batches recycles the one-write batches of DB.Set and DB.Delete, so that
// a Set allocates nothing of its own on the way to the WAL and memtable.
var batches = sync.Pool{New: func() any { return newBatch() }}

// maxPooledBatch is the largest buffer put back in the pool: one huge value
// must not pin its buffer for the life of the process.
const maxPooledBatch = 64 << 10

func getBatch() *Batch { return batches.Get().(*Batch) }

func putBatch(b *Batch) {
	if cap(b.data) > maxPooledBatch {
		return
	}
	b.Reset()
	batches.Put(b)
}

// Set records key = value. The batch copies both. A key longer than
// MaxKeySize, a key and value of more than 1 GiB - 64 KiB together
// (maxEntrySize), a batch growing past 1 GiB, or past 64 MiB of keys
// (maxBatchKeyBytes), make Apply fail with ErrInvalidArgument, writing
// nothing.
func (b *Batch) Set(key, value []byte) {
	b.add(base.KindSet, key, value)
}

// Delete records the removal of key. The batch copies it.
func (b *Batch) Delete(key []byte) {
	b.add(base.KindDelete, key, nil)
}

// DeleteRange records the removal of every key in [start, end) as one
// entry (a range tombstone, kv/rangedel.go), whatever the number of keys.
// start >= end makes Apply fail with ErrInvalidArgument, writing nothing
// of the batch. The batch copies both.
func (b *Batch) DeleteRange(start, end []byte) {
	if err := checkRange(start, end); err != nil {
		b.fail(err)
		return
	}
	b.add(base.KindRangeDelete, start, end)
}

// fail records err as the batch's error unless it has one: Apply returns
// the first and writes nothing of the batch.
func (b *Batch) fail(err error) {
	if b.err == nil {
		b.err = err
	}
}

func (b *Batch) add(kind base.Kind, key, value []byte) {
	// Refused before copying: a batch over the limit must not first take
	// the memory of the write it cannot apply.
	keyBytes := len(key)
	if kind == base.KindRangeDelete {
		keyBytes += len(value)
	}
	switch n := len(key) + len(value); {
	case len(key) > MaxKeySize:
		b.fail(fmt.Errorf("%w: a %d-byte key exceeds the %d-byte key limit", ErrInvalidArgument, len(key), MaxKeySize))
		return
	case kind == base.KindRangeDelete && len(value) > MaxKeySize:
		b.fail(fmt.Errorf("%w: a range deletion's %d-byte end key exceeds the %d-byte key limit", ErrInvalidArgument, len(value), MaxKeySize))
		return
	case b.keyBytes+keyBytes > maxBatchKeyBytes:
		b.fail(fmt.Errorf("%w: batch keys would exceed %d bytes (keys repeat in table indexes; split the batch)", ErrInvalidArgument, maxBatchKeyBytes))
		return
	case n > maxEntrySize:
		b.fail(fmt.Errorf("%w: a write of a %d-byte key and %d-byte value exceeds the %d-byte entry limit", ErrInvalidArgument, len(key), len(value), maxEntrySize))
		return
	case b.Len()+n > maxBatchSize:
		b.fail(fmt.Errorf("%w: batch would exceed the %d-byte limit", ErrInvalidArgument, maxBatchSize))
		return
	}
	if len(b.data) < batchHeaderLen {
		b.data = make([]byte, batchHeaderLen, 256)
	}
	b.data = append(b.data, byte(kind))
	b.data = binary.AppendUvarint(b.data, uint64(len(key)))
	b.data = append(b.data, key...)
	if kindHasValue(kind) {
		b.data = binary.AppendUvarint(b.data, uint64(len(value)))
		b.data = append(b.data, value...)
	}
	b.n++
	b.keyBytes += keyBytes
}

// Count returns the number of writes in the batch.
func (b *Batch) Count() int { return int(b.n) }

// Len returns the size of the batch's encoding in bytes.
func (b *Batch) Len() int { return max(len(b.data), batchHeaderLen) }

// Empty reports whether the batch holds no writes.
func (b *Batch) Empty() bool { return b.n == 0 }

// Reset empties the batch for reuse, keeping its buffer.
func (b *Batch) Reset() {
	b.data = append(b.data[:0], zeroHeader[:]...)
	b.n = 0
	b.err = nil
	b.keyBytes = 0
}

var zeroHeader [batchHeaderLen]byte

// setSeq stamps the sequence number of the first entry and the count into
// the header, making data a complete WAL payload.
func (b *Batch) setSeq(seq base.SeqNum) {
	if len(b.data) < batchHeaderLen {
		b.data = make([]byte, batchHeaderLen, 256)
	}
	binary.LittleEndian.PutUint64(b.data[0:8], uint64(seq))
	binary.LittleEndian.PutUint32(b.data[8:12], b.n)
}

// kindHasValue reports the entry kinds whose encoding carries a second
// length-prefixed field: a Set's value, a range deletion's end.
func kindHasValue(k base.Kind) bool { return k == base.KindSet || k == base.KindRangeDelete }

// batchEntry is one decoded write; Key and Value alias the batch bytes
// (for KindRangeDelete, the range's start and end).
type batchEntry struct {
	Kind  base.Kind
	Key   []byte
	Value []byte
}

// decodeBatch validates an encoded batch and calls fn for each entry with
// its sequence number, in order. It is the one decoder of WAL payloads, so
// it treats its input as untrusted: every length is checked against the
// bytes that remain, and malformed input returns an error wrapping
// ErrCorruption without calling fn for any entry past the damage.
func decodeBatch(data []byte, fn func(seq base.SeqNum, e batchEntry) error) (first base.SeqNum, count uint32, err error) {
	if len(data) < batchHeaderLen {
		return 0, 0, base.CorruptionErrorf("kv: batch of %d bytes is shorter than its %d-byte header", len(data), batchHeaderLen)
	}
	first = base.SeqNum(binary.LittleEndian.Uint64(data[0:8]))
	count = binary.LittleEndian.Uint32(data[8:12])
	if uint64(first)+uint64(count) > uint64(base.SeqNumMax) {
		return 0, 0, base.CorruptionErrorf("kv: batch sequence numbers %d+%d overflow", first, count)
	}
	rest := data[batchHeaderLen:]
	for i := uint32(0); i < count; i++ {
		var e batchEntry
		if len(rest) == 0 {
			return 0, 0, base.CorruptionErrorf("kv: batch ends after %d of %d entries", i, count)
		}
		e.Kind = base.Kind(rest[0])
		rest = rest[1:]
		if !e.Kind.Valid() && e.Kind != base.KindRangeDelete {
			return 0, 0, base.CorruptionErrorf("kv: batch entry %d has unknown kind %d", i, e.Kind)
		}
		if e.Key, rest, err = takeLengthPrefixed(rest, "key", i); err != nil {
			return 0, 0, err
		}
		if kindHasValue(e.Kind) {
			if e.Value, rest, err = takeLengthPrefixed(rest, "value", i); err != nil {
				return 0, 0, err
			}
		}
		if e.Kind == base.KindRangeDelete && checkRange(e.Key, e.Value) != nil {
			return 0, 0, base.CorruptionErrorf("kv: batch entry %d: range deletion [%q, %q) is empty", i, e.Key, e.Value)
		}
		if fn != nil {
			if err := fn(first+base.SeqNum(i), e); err != nil {
				return 0, 0, err
			}
		}
	}
	if len(rest) != 0 {
		return 0, 0, base.CorruptionErrorf("kv: batch has %d trailing bytes after %d entries", len(rest), count)
	}
	return first, count, nil
}

func takeLengthPrefixed(b []byte, what string, entry uint32) (field, rest []byte, err error) {
	n, w := binary.Uvarint(b)
	// Only the minimal varint encoding is accepted, so a batch has exactly
	// one encoding (the builder writes no other).
	if w <= 0 || w != uvarintLen(n) {
		return nil, nil, base.CorruptionErrorf("kv: batch entry %d: bad %s length varint", entry, what)
	}
	b = b[w:]
	if n > uint64(len(b)) {
		return nil, nil, base.CorruptionErrorf("kv: batch entry %d: %s length %d exceeds the %d bytes left", entry, what, n, len(b))
	}
	return b[:n:n], b[n:], nil
}

// validate checks a batch built by the caller before commit.
func (b *Batch) validate() error {
	if b.err != nil {
		return b.err
	}
	if b.Len() > maxBatchSize {
		return fmt.Errorf("%w: batch of %d bytes exceeds the %d-byte limit", ErrInvalidArgument, b.Len(), maxBatchSize)
	}
	return nil
}

func uvarintLen(n uint64) int {
	l := 1
	for ; n >= 0x80; n >>= 7 {
		l++
	}
	return l
}
