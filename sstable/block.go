package sstable

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/sievekv/sievekv/internal/base"
)

// Block contents (after decompression), shared by data and index blocks:
//
//	entry*  restart[0..n) (u32 LE each)  n (u32 LE)
//	entry = uvarint shared | uvarint unshared | uvarint valueLen |
//	        key[shared:] (unshared bytes) | value
//
// Keys are encoded internal keys (base B2). An entry at a restart offset
// has shared = 0, so a reader can start decoding there (T3).

// blockWriter accumulates one block's entries.
type blockWriter struct {
	restartInterval int
	buf             []byte
	restarts        []uint32
	lastKey         []byte
	count           int // entries since the last restart
	entries         int
}

func (w *blockWriter) add(key, value []byte) {
	shared := 0
	if w.count < w.restartInterval && w.entries > 0 {
		n := min(len(key), len(w.lastKey))
		for shared < n && key[shared] == w.lastKey[shared] {
			shared++
		}
	} else {
		w.restarts = append(w.restarts, uint32(len(w.buf)))
		w.count = 0
	}
	w.buf = binary.AppendUvarint(w.buf, uint64(shared))
	w.buf = binary.AppendUvarint(w.buf, uint64(len(key)-shared))
	w.buf = binary.AppendUvarint(w.buf, uint64(len(value)))
	w.buf = append(w.buf, key[shared:]...)
	w.buf = append(w.buf, value...)
	w.lastKey = append(w.lastKey[:0], key...)
	w.count++
	w.entries++
}

// estimatedSize is the size finish would return now.
func (w *blockWriter) estimatedSize() int {
	return len(w.buf) + 4*len(w.restarts) + 4
}

// finish appends the restart array and returns the contents, valid until
// reset. An empty block still has one restart at 0, so every block a
// writer emits has n >= 1.
func (w *blockWriter) finish() []byte {
	if len(w.restarts) == 0 {
		w.restarts = append(w.restarts, 0)
	}
	for _, r := range w.restarts {
		w.buf = binary.LittleEndian.AppendUint32(w.buf, r)
	}
	w.buf = binary.LittleEndian.AppendUint32(w.buf, uint32(len(w.restarts)))
	return w.buf
}

func (w *blockWriter) reset() {
	w.buf, w.restarts, w.lastKey = w.buf[:0], w.restarts[:0], w.lastKey[:0]
	w.count, w.entries = 0, 0
}

// block is a decompressed block whose restart array parseBlock checked
// (T4). It is immutable; a data block's memory belongs to a blockBuf and
// is readable only while a reference to that blockBuf is held (BM1).
type block struct {
	data        []byte // contents, restart array included
	entriesEnd  int    // offset of the restart array
	numRestarts int
}

func (b *block) restart(i int) int {
	return int(binary.LittleEndian.Uint32(b.data[b.entriesEnd+4*i:]))
}

// errMalformed is wrapped, with a reason, by every block validation error.
var errMalformed = errors.New("malformed block")

func malformed(format string, args ...any) error {
	return fmt.Errorf("%w: %s", errMalformed, fmt.Sprintf(format, args...))
}

// decodeEntry decodes the entry at off given the previous key (whose first
// shared bytes it reuses). It returns the key's bytes appended to
// prev[:shared] (reusing prev's storage), the value, and the next offset.
// Every length is checked against the block, so no input makes it read
// outside data[:end] (T4).
func decodeEntry(data []byte, end, off int, prev []byte) (key, value []byte, next int, err error) {
	p := data[off:end]
	var shared, unshared, vlen uint64
	var h int
	if len(p) >= 3 && (p[0]|p[1]|p[2]) < 0x80 {
		// The common entry: a key and a value under 128 bytes each, its
		// three lengths one byte apiece. binary.Uvarint's loop was a
		// tenth of a cached Get.
		shared, unshared, vlen, h = uint64(p[0]), uint64(p[1]), uint64(p[2]), 3
	} else {
		var n1, n2, n3 int
		shared, n1 = binary.Uvarint(p)
		if n1 <= 0 {
			return nil, nil, 0, malformed("bad shared-length varint at %d", off)
		}
		unshared, n2 = binary.Uvarint(p[n1:])
		if n2 <= 0 {
			return nil, nil, 0, malformed("bad key-length varint at %d", off)
		}
		vlen, n3 = binary.Uvarint(p[n1+n2:])
		if n3 <= 0 {
			return nil, nil, 0, malformed("bad value-length varint at %d", off)
		}
		h = n1 + n2 + n3
	}
	rest := uint64(len(p) - h)
	if shared > uint64(len(prev)) {
		return nil, nil, 0, malformed("entry at %d shares %d bytes of a %d-byte key", off, shared, len(prev))
	}
	if unshared > rest || vlen > rest-unshared {
		return nil, nil, 0, malformed("entry at %d overruns the block (key %d + value %d > %d bytes left)", off, unshared, vlen, rest)
	}
	key = append(prev[:shared], p[h:h+int(unshared)]...)
	vs := h + int(unshared)
	value = p[vs : vs+int(vlen) : vs+int(vlen)]
	return key, value, off + vs + int(vlen), nil
}

// parseBlock checks what every read of the block relies on, in time
// proportional to the restart count rather than the entry count (T4): the
// restart array lies inside the block, starts at 0 and strictly increases.
// Entries are checked as they are decoded (decodeEntry's bounds, loadAt's
// key shape), so a block that passes cannot make an iterator panic or
// return bytes from outside it. Entry order and restart alignment are
// validate's job: the reader runs it on index blocks, on every block in
// invariants builds, and VerifyBlocks (kv.Check) runs it on every block.
func parseBlock(data []byte) (*block, error) {
	b := new(block)
	if err := b.parse(data); err != nil {
		return nil, err
	}
	return b, nil
}

// parse is parseBlock into an existing block, so a pooled blockBuf can
// hold its parsed view without a separate allocation. On error b is left
// zero.
func (b *block) parse(data []byte) error {
	*b = block{}
	if len(data) < 4 {
		return malformed("%d bytes is too short for a restart count", len(data))
	}
	n := binary.LittleEndian.Uint32(data[len(data)-4:])
	if n == 0 || uint64(n) > uint64(len(data)-4)/4 {
		return malformed("restart count %d impossible in %d bytes", n, len(data))
	}
	p := block{data: data, entriesEnd: len(data) - 4 - 4*int(n), numRestarts: int(n)}
	prevRestart := -1
	for i := range p.numRestarts {
		r := p.restart(i)
		if (i == 0 && r != 0) || r <= prevRestart || (r >= p.entriesEnd && !(r == 0 && p.entriesEnd == 0)) {
			return malformed("restart %d at offset %d out of order or outside the entries", i, r)
		}
		prevRestart = r
	}
	*b = p
	return nil
}

// validate walks every entry of a parsed block and checks what parseBlock
// leaves to the iterators (T4): every entry decodes inside the entries
// region; each restart offset is an entry boundary with shared = 0 (T3);
// every key is a valid internal key (at least a trailer, known kind); and
// keys strictly increase under base.Compare. It returns the entry count.
// It costs a full decode of the block, which is why the read path runs it
// only on index blocks and in invariants builds.
func (b *block) validate() (entries int, err error) {
	var key, prevKey []byte
	nextRestart := 0
	for off := 0; off < b.entriesEnd; {
		isRestart := nextRestart < b.numRestarts && b.restart(nextRestart) == off
		if nextRestart < b.numRestarts && b.restart(nextRestart) < off {
			return 0, malformed("restart %d at %d is not an entry boundary", nextRestart, b.restart(nextRestart))
		}
		if isRestart {
			nextRestart++
			if shared, _ := binary.Uvarint(b.data[off:b.entriesEnd]); shared != 0 {
				return 0, malformed("entry at restart offset %d shares %d bytes", off, shared)
			}
		}
		k, _, next, err := decodeEntry(b.data, b.entriesEnd, off, key)
		if err != nil {
			return 0, err
		}
		key = k
		ik, ok := base.DecodeInternalKey(key)
		if !ok || !ik.Kind().Valid() {
			return 0, malformed("entry at %d has an invalid internal key", off)
		}
		if entries > 0 {
			pk, _ := base.DecodeInternalKey(prevKey)
			if base.Compare(pk, ik) >= 0 {
				return 0, malformed("key at %d does not sort after its predecessor", off)
			}
		}
		prevKey = append(prevKey[:0], key...)
		entries++
		off = next
	}
	if nextRestart != b.numRestarts && b.entriesEnd > 0 {
		return 0, malformed("restart %d at %d is not an entry boundary", nextRestart, b.restart(nextRestart))
	}
	return entries, nil
}

// blockIter walks a parsed block. parseBlock checked only the restart
// array, so every decode can fail on a malformed (but checksum-valid)
// entry: the iterator then stops with the error, never panics, and never
// yields a key that is not a well-formed internal key.
type blockIter struct {
	b         *block
	off, next int // current entry and the one after it
	keyBuf    []byte
	key       base.InternalKey
	value     []byte
	valid     bool
	err       error
}

func (it *blockIter) init(b *block) {
	it.b, it.valid, it.err = b, false, nil
}

// loadAt decodes the entry at off; keyBuf must hold the previous key when
// off is not a restart.
func (it *blockIter) loadAt(off int) bool {
	if off >= it.b.entriesEnd {
		it.valid = false
		return false
	}
	k, v, next, err := decodeEntry(it.b.data, it.b.entriesEnd, off, it.keyBuf)
	if err != nil {
		it.err, it.valid = err, false
		return false
	}
	ik, ok := base.DecodeInternalKey(k)
	if !ok || !ik.Kind().Valid() {
		it.err, it.valid = malformed("entry at %d has an invalid internal key", off), false
		return false
	}
	it.keyBuf, it.value, it.off, it.next = k, v, off, next
	it.key = ik
	it.valid = true
	return true
}

// loadRestart decodes the entry at a restart offset. It passes no previous
// key, so an entry there that claims shared bytes (breaking T3) is a
// decode error rather than a key spliced from whatever was decoded last.
func (it *blockIter) loadRestart(off int) bool {
	it.keyBuf = it.keyBuf[:0]
	return it.loadAt(off)
}

// restartKey decodes the full key at restart i (shared = 0 there, T3).
func (it *blockIter) restartKey(i int) (base.InternalKey, bool) {
	if !it.loadRestart(it.b.restart(i)) {
		return base.InternalKey{}, false
	}
	return it.key, true
}

// searchRestarts returns the last restart whose key is < key, or -1.
func (it *blockIter) searchRestarts(key base.InternalKey) int {
	lo, hi := 0, it.b.numRestarts // invariant: restarts < lo are < key, >= hi are >= key
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		k, ok := it.restartKey(mid)
		if !ok {
			return -1
		}
		if base.Compare(k, key) < 0 {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo - 1
}

func (it *blockIter) first() bool {
	return it.loadRestart(0)
}

func (it *blockIter) last() bool {
	if it.b.entriesEnd == 0 {
		it.valid = false
		return false
	}
	if !it.loadRestart(it.b.restart(it.b.numRestarts - 1)) {
		return false
	}
	for it.next < it.b.entriesEnd {
		if !it.loadAt(it.next) {
			return false
		}
	}
	return true
}

func (it *blockIter) nextEntry() bool {
	if !it.valid {
		return false
	}
	return it.loadAt(it.next)
}

// prevEntry re-decodes forward from the closest restart before the current
// entry: prefix compression makes entries decodable only forwards.
func (it *blockIter) prevEntry() bool {
	if !it.valid {
		return false
	}
	target := it.off
	if target == 0 {
		it.valid = false
		return false
	}
	lo, hi := 0, it.b.numRestarts // find the last restart < target
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if it.b.restart(mid) < target {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	if !it.loadRestart(it.b.restart(lo - 1)) {
		return false
	}
	for it.next < target {
		if !it.loadAt(it.next) {
			return false
		}
	}
	return true
}

// seekGE positions on the first entry >= key.
func (it *blockIter) seekGE(key base.InternalKey) bool {
	r := it.searchRestarts(key)
	if it.err != nil {
		return false
	}
	if r < 0 {
		r = 0
	}
	if !it.loadRestart(it.b.restart(r)) {
		return false
	}
	for base.Compare(it.key, key) < 0 {
		if !it.loadAt(it.next) {
			return false
		}
	}
	return true
}

// seekLT positions on the last entry < key: the entry before the first
// one >= key, or the last entry when every entry is < key.
func (it *blockIter) seekLT(key base.InternalKey) bool {
	if it.seekGE(key) {
		return it.prevEntry()
	}
	if it.err != nil {
		return false
	}
	return it.last()
}
