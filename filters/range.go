package filters

import (
	"bytes"
	"fmt"
	"math"
	"math/bits"
	"slices"
)

// RangeFilter answers "might any key lie in [lo, hi)?" for the keys it was
// built from, so a scan can skip a table that holds nothing in its range.
// It is Grafite (Costa, Ferragina, Vinciguerra, SIGMOD 2024) applied to the
// codes of a keyCoder:
//
//  1. Each key becomes a uint64 code by an order-preserving map learned from
//     the keys (range_keycode.go), so a range of keys is a range of codes
//     about as wide as the keys' own alphabet makes it.
//  2. Codes are hashed into a reduced universe [0, r) by a locality-
//     preserving hash, h(x) = (q(x div L) + x mod L) mod r, with L the
//     largest power of two <= r and q a seeded hash of the block: codes of
//     one block keep their order and spacing (a cyclic shift), blocks land
//     at independent random offsets.
//  3. The distinct hashed codes are stored in an Elias-Fano sequence.
//
// A query maps [lo, hi) to codes [a, b], cuts it at block boundaries and
// asks the sequence for a value in each piece's image. When the codes'
// universe is no larger than r, the hash is the identity (exact mode) and
// the filter stores the codes themselves.
//
// False positives (invariant R3): for an empty query of code width
// w = b-a+1 over n distinct codes, a key in the same block as a query piece
// never collides with it (the block is shifted, not scattered, and L <= r),
// and a key of another block hits a piece of length l with probability
// l/r. So
//
//	P[false positive] <= n*w/r = w / 2^(B-2)   (hashed mode, r = n*2^(B-2))
//	P[false positive]  = 0                      (exact mode)
//
// at B bits per key, for any key set and any query, over the choice of
// seed. Beyond this, keys that agree on every position the coder reads
// share a code, so a query between two such keys is a (deterministic)
// false positive; the coder reads to the keys' distinguishing depth, so
// only queries that fall between a key and its own extensions are affected.
//
// Space: Elias-Fano takes lowBits+1 bits per code plus r>>lowBits+1 bits,
// at most B bits per key, plus the coder's header (the prefix and up to 33
// bytes per position read).
//
// The zero value is an empty filter: every point and range query answers
// "absent", Len and FPBound are 0, and MarshalBinary returns an error
// wrapping ErrInvalidArgument (it has no encoding). MayContainHash answers
// "maybe" as it does for every RangeFilter (a hash carries no order).
type RangeFilter struct {
	coder keyCoder
	exact bool
	// r is the hashed universe (the code universe in exact mode).
	r uint64
	// blockShift is log2(L), L the largest power of two <= r.
	blockShift uint
	seed       uint64
	set        eliasFano
}

// rangeFormatVersion is the body version MarshalBinary writes.
//
//	1: initial format (docs/format.md, "Range filter").
const rangeFormatVersion = 1

// rangeSeed is the block hash seed new filters use; it is stored, so a
// later build may choose differently without breaking old tables.
const rangeSeed = 0x5bd1e9955bd1e995

// maxRangeKeyBytes is how much of each key a RangeBuilder keeps: the coder
// never reads further, so longer keys cost no more memory.
const maxRangeKeyBytes = 256

// maxRangeBitsPerKey bounds the budget; beyond it the bound is below any
// rate a test could observe and r would near the coder's universe cap.
const maxRangeBitsPerKey = 48

// RangeBuilder collects keys for a RangeFilter. Keys may arrive in any
// order and repeat; sorted input (a table writer's) avoids a sort and a
// second look at each key. The builder copies the first 256 bytes of each
// key and owns those copies; Finish resets it for reuse.
type RangeBuilder struct {
	bitsPerKey float64
	keys       frontCodedKeys
	// shape is learnt while input is sorted; out-of-order input leaves it
	// to Finish, after sorting.
	shape  keyShape
	minLen int
	sorted bool
	// codes and sortScratch are Finish's scratch, kept for the next build.
	codes, sortScratch []uint64
}

// NewRangeBuilder returns a builder of filters of bitsPerKey bits per key,
// in [3, 48]. The error wraps ErrInvalidArgument.
func NewRangeBuilder(bitsPerKey float64) (*RangeBuilder, error) {
	b := &RangeBuilder{}
	if err := b.SetBitsPerKey(bitsPerKey); err != nil {
		return nil, err
	}
	b.Reset()
	return b, nil
}

// SetBitsPerKey changes the budget of the filters Finish builds, so one
// builder (and the memory it has grown) can serve tables of any budget.
// The error wraps ErrInvalidArgument and leaves the budget as it was.
func (b *RangeBuilder) SetBitsPerKey(bitsPerKey float64) error {
	if !(bitsPerKey >= 3 && bitsPerKey <= maxRangeBitsPerKey) {
		return fmt.Errorf("%w: range filter bits per key %v outside [3, %d]",
			ErrInvalidArgument, bitsPerKey, maxRangeBitsPerKey)
	}
	b.bitsPerKey = bitsPerKey
	return nil
}

// Reset forgets every key added.
func (b *RangeBuilder) Reset() {
	b.keys.reset()
	b.shape.reset()
	b.minLen = math.MaxInt
	b.sorted = true
}

// Add records key. It is on every table build's per-key path, so it
// looks at each byte of the key once past the bytes it shares with the
// last key: one fused loop stores the new bytes (keys.add) and, while
// input is sorted, records their symbols (shape.observe).
func (b *RangeBuilder) Add(key []byte) {
	shared := 0
	if b.keys.n > 0 {
		shared = SharedPrefixLen(b.keys.last(), key)
	}
	b.AddAfter(key, shared)
}

// AddAfter records key, which shares its first shared bytes with the key
// added just before it: SharedPrefixLen of the two (ignored for the first
// key). A table writer compares each key with the previous one to find
// repeats, so passing that length in saves the builder the same compare.
// A shared that is not the two keys' common prefix builds a wrong filter
// (false negatives); a negative one counts as 0. Add is the call for a
// caller without it.
func (b *RangeBuilder) AddAfter(key []byte, shared int) {
	b.minLen = min(b.minLen, len(key))
	k := key[:min(len(key), maxRangeKeyBytes)]
	if b.keys.n == 0 {
		shared = 0
	} else {
		// The stored last key is the previous key truncated as k is (or
		// an earlier key the previous one repeated once truncated): the
		// common prefix of the truncations is the caller's, capped.
		last := b.keys.last()
		shared = max(0, min(shared, len(k), len(last)))
		switch {
		case shared == len(k) && shared == len(last):
			return // a repeat of the last key
		case shared == len(k) || (shared < len(last) && last[shared] > k[shared]):
			b.sorted = false
		}
	}
	if !b.sorted {
		b.keys.add(k, shared)
		return
	}
	b.addSorted(k, shared)
}

// addSorted stores k, which sorts after the last key and shares its first
// shared bytes, and learns its shape. The new bytes are copied into the
// arena and the last key, and their symbols recorded, in one loop: the
// suffixes are a few bytes long, where two copies and a third loop cost
// more than the work.
func (b *RangeBuilder) addSorted(k []byte, shared int) {
	// The key's lengths, and what to learn of its bytes: positions from
	// shared to end. Bytes below shared are the previous key's, already
	// learnt; at and past learnEnd the coder reads nothing (R4). The
	// common case is written here, not called: it runs once per key.
	s := &b.shape
	if s.n == 0 || shared+2 > s.learnEnd {
		s.observeRare(k, shared, &b.keys)
	} else {
		s.prefixLen = min(s.prefixLen, shared)
		s.maxShared = max(s.maxShared, shared) // shared+2 <= learnEnd
	}
	s.n++
	s.maxLen = max(s.maxLen, len(k))
	end := min(len(k), s.learnEnd)
	suffix := k[shared:]
	l := &b.keys
	var dst []byte
	if n, arena := len(suffix), l.arena; shared < 0x80 && n < 0x80 && cap(arena)-len(arena) >= n+2 {
		start := len(arena) + 2
		l.arena = append(arena, byte(shared), byte(n))[:start+n]
		dst = l.arena[start:]
	} else {
		dst = l.grow(shared, n)
	}
	last := l.lastBuf[shared:len(k)]
	alpha := b.shape.alpha[shared:max(end, shared)]
	for j, c := range suffix {
		dst[j] = c
		last[j] = c
		if j < len(alpha) {
			alpha[j].add(int(c) + 1)
		}
	}
	l.lastLen = len(k)
	l.n++
}

// Len is the number of keys recorded (adjacent repeats count once).
func (b *RangeBuilder) Len() int { return b.keys.n }

// RetainedBytes is the memory the builder keeps across Reset and Finish
// (its key arena and Finish's scratch), for a caller deciding whether
// keeping it for the next table is worth that memory.
func (b *RangeBuilder) RetainedBytes() int {
	return cap(b.keys.arena) + 8*(cap(b.codes)+cap(b.sortScratch))
}

// Finish builds the filter of every key added and resets the builder.
func (b *RangeBuilder) Finish() (*RangeFilter, error) {
	if !b.sorted {
		b.sortKeys()
	}
	f := b.build()
	b.Reset()
	return f, nil
}

// sortKeys puts the keys in order without repeats and learns their shape,
// as if they had been added sorted.
func (b *RangeBuilder) sortKeys() {
	all := make([][]byte, b.keys.n)
	buf := make([]byte, 0, b.keys.n*b.keys.lastLen)
	cur := b.keys.cursor()
	for i := range all {
		k := cur.next()
		start := len(buf)
		buf = append(buf, k...)
		all[i] = buf[start:len(buf):len(buf)]
	}
	slices.SortFunc(all, bytes.Compare)
	all = slices.CompactFunc(all, bytes.Equal)
	minLen := b.minLen // of the keys before truncation: keep it
	b.Reset()
	for _, k := range all {
		b.Add(k)
	}
	b.minLen = minLen
}

// NewRangeFilter builds a filter of keys at bitsPerKey bits per key.
func NewRangeFilter(keys [][]byte, bitsPerKey float64) (*RangeFilter, error) {
	b, err := NewRangeBuilder(bitsPerKey)
	if err != nil {
		return nil, err
	}
	for _, k := range keys {
		b.Add(k)
	}
	return b.Finish()
}

// build builds the filter of the builder's keys, sorted and distinct.
func (b *RangeBuilder) build() *RangeFilter {
	f := &RangeFilter{coder: newKeyCoder(&b.shape, &b.keys, b.minLen, maxRangeKeyBytes)}
	codes := f.coder.codes(&b.keys, slices.Grow(b.codes[:0], b.keys.n))
	b.codes = codes // the sequence copies the codes: the slice is scratch
	bitsPerKey := b.bitsPerKey
	n := uint64(len(codes))
	target := float64(max(n, 1)) * math.Exp2(bitsPerKey-2)
	if target >= float64(f.coder.universe) {
		f.exact, f.r = true, f.coder.universe
		f.set = newEliasFano(codes, f.r)
		return f
	}
	f.r = max(uint64(target), 1)
	f.blockShift = uint(bits.Len64(f.r) - 1)
	f.seed = rangeSeed
	// h(c) = (q(c div L) + c mod L) mod r for ascending codes (both terms
	// are below r, so the mod is one subtraction): a table's codes fall in
	// few blocks, so the block's offset is computed once per block, not per
	// code.
	mask := uint64(1)<<f.blockShift - 1
	block, offset := uint64(0), f.blockOffset(0)
	for i, c := range codes {
		if c>>f.blockShift != block {
			block = c >> f.blockShift
			offset = f.blockOffset(block)
		}
		h := offset + c&mask
		if h >= f.r {
			h -= f.r
		}
		codes[i] = h
	}
	b.sortScratch = sortRuns(codes, b.sortScratch)
	codes = slices.Compact(codes)
	f.set = newEliasFano(codes, f.r)
	return f
}

// blockOffset is q(block): where the block's codes start in [0, r).
func (f *RangeFilter) blockOffset(block uint64) uint64 {
	return reduce64(mix64(block^f.seed), f.r)
}

// MayContainRange reports false only if no key the filter was built from
// lies in [lo, hi) (invariant R1). A nil lo or hi leaves that side open.
func (f *RangeFilter) MayContainRange(lo, hi []byte) bool {
	a, b, ok := f.coder.codeRange(lo, hi)
	if !ok {
		return false
	}
	return f.mayContainCodes(a, b)
}

// MayContain reports false only if key was not among the keys built from.
func (f *RangeFilter) MayContain(key []byte) bool {
	a, ok := f.coder.ceil(key)
	if !ok {
		return false
	}
	// Built keys <= key: the floor before key's successor key+"\x00".
	b, ok := f.coder.floorBefore(append(key[:len(key):len(key)], 0))
	return ok && a <= b && f.mayContainCodes(a, b)
}

// MayContainHash returns true: a range filter orders keys and cannot
// answer from a hash, and true keeps invariant F1.
func (f *RangeFilter) MayContainHash(uint64) bool { return true }

// mayContainCodes reports whether a stored code may lie in [a, b].
func (f *RangeFilter) mayContainCodes(a, b uint64) bool {
	if f.exact {
		return f.set.anyIn(a, b)
	}
	if b-a >= f.r-1 {
		return f.set.n > 0 // the pieces' images cover all of [0, r)
	}
	mask := uint64(1)<<f.blockShift - 1
	for block := a >> f.blockShift; block <= b>>f.blockShift; block++ {
		lo, hi := uint64(0), mask
		if block == a>>f.blockShift {
			lo = a & mask
		}
		if block == b>>f.blockShift {
			hi = b & mask
		}
		start := f.blockOffset(block) + lo
		end := start + (hi - lo)
		if start >= f.r {
			start -= f.r
			end -= f.r
		}
		if end < f.r {
			if f.set.anyIn(start, end) {
				return true
			}
		} else if f.set.anyIn(start, f.r-1) || f.set.anyIn(0, end-f.r) {
			return true
		}
	}
	return false
}

// CodeWidth is the number of codes [lo, hi) covers, the w of the FP bound
// (0 when the coder alone proves the range empty).
func (f *RangeFilter) CodeWidth(lo, hi []byte) uint64 {
	a, b, ok := f.coder.codeRange(lo, hi)
	if !ok {
		return 0
	}
	return b - a + 1
}

// FPBound is the bound of invariant R3 on the false-positive probability of
// an empty query of code width w.
func (f *RangeFilter) FPBound(w uint64) float64 {
	if f.exact || w == 0 || f.set.n == 0 {
		return 0
	}
	return min(1, float64(f.set.n)*float64(w)/float64(f.r))
}

// Exact reports whether the filter stores codes unhashed (no hashing false
// positives).
func (f *RangeFilter) Exact() bool { return f.exact }

// Len is the number of distinct stored values.
func (f *RangeFilter) Len() int { return int(f.set.n) }

// SizeBits is the size of the encoding in bits.
func (f *RangeFilter) SizeBits() uint64 {
	enc, _ := f.MarshalBinary()
	return 8 * uint64(len(enc))
}
