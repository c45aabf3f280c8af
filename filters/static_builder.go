package filters

import (
	"fmt"
	"math/bits"
	"slices"
)

// FuseBuilder builds XOR and binary fuse filters and keeps its scratch
// buffers between builds, so a process that builds one filter per table
// pays for them once: about 23 bytes per key for a 3-wise fuse filter (12
// bytes of slot state for 1.13 slots per key, the sorted hashes, a role
// byte), 29 for Xor8, and 8 more when the input holds duplicates.
//
// Ownership: a filter returned by a FuseBuilder owns its fingerprints; they
// are allocated fresh for every build and never alias the builder's scratch,
// so the builder may be reused (or dropped) at once and the filter kept. The
// builder only reads the hashes slice it is given and never retains it. The
// zero value is ready to use. A FuseBuilder is not safe for concurrent use;
// use one per goroutine.
type FuseBuilder struct {
	dedup  []uint64   // sorted, deduplicated copy of the input, made after a failed attempt
	sorted []uint64   // mixed hashes grouped by the region of their first slot; after insertion, the peel order
	hist   []uint32   // counting-sort buckets
	slots  []peelSlot // XOR layouts: per-slot state
	counts []uint32   // fuse layouts: per-slot (number of keys << 2) | XOR of their roles
	xors   []uint64   // fuse layouts: per-slot XOR of the mixed hashes of its keys
	roles  []uint8    // per peeled key: which of its slots it was peeled from
	stack  []uint32   // slots whose count just dropped to one
}

// staticGrow returns s with length n, reallocating only if its capacity is
// short. Callers clear what they need cleared.
func staticGrow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

// staticGrowZero is staticGrow for a slice that must start zeroed; a fresh
// allocation already is, so only reused memory is cleared.
func staticGrowZero[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	s = s[:n]
	clear(s)
	return s
}

// peeled is the outcome of a successful construction: the geometry, the
// seed, and the keys (as mixed hashes) in the order they were peeled, each
// with the index of the slot it was peeled from. Assigning fingerprints in
// reverse peel order yields the filter. order and roles alias the builder.
type peeled struct {
	layout staticLayout
	seed   uint64
	order  []uint64
	roles  []uint8
}

// peel finds a seed for which the keys' hypergraph on layoutFor(n) slots is
// peelable ([XOR] section 3, [FUSE] section 3) and returns the peel order.
//
// Duplicates: two equal hashes share all their slots, so neither can ever be
// alone in a slot and the peel fails. The first attempt assumes distinct
// input (the common case costs nothing extra); when an attempt fails, the
// builder sorts a copy of the input once, removes duplicates and, if any were
// removed, resizes for the distinct count before trying the next seed. A
// successful peel therefore implies the keys it peeled are distinct, and
// Len() of the result is the number of distinct hashes.
func (b *FuseBuilder) peel(hashes []uint64, layoutFor func(n int) staticLayout) (peeled, error) {
	if len(hashes) > staticMaxKeys {
		return peeled{}, invalidf("%d keys exceed the maximum of %d", len(hashes), staticMaxKeys)
	}
	keys := hashes
	l := layoutFor(len(keys))
	if len(keys) == 0 {
		return peeled{layout: l}, nil
	}
	deduped := false
	for attempt := 0; attempt < staticMaxAttempts; attempt++ {
		seed := staticSeed(attempt)
		try := l
		if attempt%fuseHalfSegmentsEvery == fuseHalfSegmentsEvery-1 {
			try = l.halfSegments()
		}
		if b.attempt(&try, keys, seed) {
			return peeled{layout: try, seed: seed, order: b.sorted[:len(keys)], roles: b.roles[:len(keys)]}, nil
		}
		if !deduped {
			deduped = true
			b.dedup = append(b.dedup[:0], keys...)
			slices.Sort(b.dedup)
			b.dedup = slices.Compact(b.dedup)
			if len(b.dedup) != len(keys) {
				keys = b.dedup
				l = layoutFor(len(keys))
			}
		}
	}
	return peeled{}, fmt.Errorf("%w (%d seeds, %d distinct keys)", ErrBuildFailed, staticMaxAttempts, len(keys))
}

// fuseHalfSegmentsEvery: one attempt in this many tries the fuse layout
// with segments half as long (halfSegments). Just after the segment length
// doubles (arity 3: n near 11,190, where fuseLayout's formula steps from
// 512 to 1024), the formula leaves a filter of only 12 segments, and near
// the top of that plateau (n of 11,480 to 11,521, 80% load) a seed peels
// about one time in sixty: a hundred seeds then fail for about one key set
// in five (TestFuseBuildsAtSegmentStep). Half-length segments over the
// same slots peel almost always, so the build never depends on that luck.
// Attempt 0 keeps the formula's layout, so a build that succeeds at once,
// as nearly every one does, is what it always was.
const fuseHalfSegmentsEvery = 3

// halfSegments returns l with segments half as long and twice as many
// (plus the arity-1 trailing ones the shorter segments leave over), over
// exactly the same slots: (2*segCount + arity-1 + arity-1) * segLen/2 =
// (segCount + arity-1) * segLen. The payload's size is unchanged, so a
// table filter's predicted size (TableChoice.PayloadBits) stays exact, and
// decoders need nothing new: the header carries segLog and segCount.
// Layouts that cannot halve (XOR, empty, one-slot segments) are returned
// as they are.
func (l staticLayout) halfSegments() staticLayout {
	if l.kind == layoutXor || l.segLog == 0 || l.segCount == 0 {
		return l
	}
	h := l
	h.segLog--
	h.segLen >>= 1
	h.segMask = h.segLen - 1
	h.segCount = 2*l.segCount + (l.arity - 1)
	h.segCountLen = uint64(h.segCount) << h.segLog
	return h
}

// peelSlot is the XOR filter builder's per-slot state. Keeping the count
// next to the XOR of hashes means one cache line per slot touched: that
// halves the misses of the XOR filter, whose slots are spread over the
// whole table. Fuse layouts work inside a cache-resident window of
// segments, so they use two plain arrays instead (12 bytes per slot, not 16).
type peelSlot struct {
	xor   uint64 // XOR of the mixed hashes of the slot's keys
	count uint32 // (number of keys << 2) | XOR of their roles (0..arity-1)
}

// attempt runs one construction with one seed and reports whether every key
// was peeled. On success b.sorted[:n] holds the peel order and b.roles[:n]
// the slot index (0..arity-1) each key was peeled from.
//
// Counts are exact: a slot holds at most n <= staticMaxKeys = 2^30 keys, so
// count<<2 cannot overflow 32 bits even if every hash is the same. A slot
// whose count is one therefore holds exactly one key, whose mixed hash is
// the slot's xor and whose role is the count's low bits.
func (b *FuseBuilder) attempt(l *staticLayout, keys []uint64, seed uint64) bool {
	n, size := len(keys), int(l.size)
	if l.kind == layoutXor {
		b.slots = staticGrowZero(b.slots, size)
	} else {
		b.counts = staticGrowZero(b.counts, size)
		b.xors = staticGrowZero(b.xors, size)
	}
	b.roles = staticGrow(b.roles, n)

	// Group the keys by the region of their first slot with one
	// counting-sort pass ([FUSE] section 5). For fuse layouts the bucket is
	// the first slot's segment, so a key's slots lie in a window of arity
	// segments that slides forward as the insertion loop advances and its
	// slot updates stay in cache at any n. XOR filter slots span the whole
	// table, but ordering by the first block's slot (buckets of ~1024
	// slots) still turns one of the three random accesses into a
	// sequential one.
	//
	// bucket = high64((hh << shift) * buckets). Fuse (shift 0): equals
	// p0>>segLog, since floor(floor(hh*segCountLen/2^64)/segLen) =
	// floor(hh*segCount/2^64). XOR (shift 32): equals
	// (uint32(hh)*buckets)>>32, monotone in uint32(hh) as p0 is.
	buckets, shift := uint64(l.segCount), uint(0)
	if l.kind == layoutXor {
		buckets, shift = uint64(max(l.blockLen>>10, 1)), 32
	}
	// The mix is recomputed in the scatter pass rather than stored: it
	// saves 8 bytes of scratch per key (a fresh build allocates and faults
	// in every byte of it) for two multiplies.
	b.hist = staticGrowZero(b.hist, int(buckets))
	b.sorted = staticGrow(b.sorted, n)
	hist, sorted := b.hist, b.sorted
	for _, h := range keys {
		s, _ := bits.Mul64(staticMix(h, seed)<<shift, buckets)
		hist[s]++
	}
	var start uint32
	for i, c := range hist {
		hist[i] = start
		start += c
	}
	for _, h := range keys {
		hh := staticMix(h, seed)
		s, _ := bits.Mul64(hh<<shift, buckets)
		sorted[hist[s]] = hh
		hist[s]++
	}
	ins := sorted

	// The peel writes its order over sorted: the insertion loop has read
	// all of it by then. The three kinds are written out separately so
	// that each key's positions are computed inline: this is the build's
	// cost. One generic peel for both fuse arities (positions from a type
	// parameter's method, a loop over the arity) made 1M-key builds 1.5 to
	// 1.7 times slower: BenchmarkStaticPairedBuild's median ratio to
	// FastFilter over five alternating runs of each went from 1.06 to 1.73
	// for BinaryFuse3x8 and from 1.04 to 1.50 for BinaryFuse4x8.
	var k int
	switch l.kind {
	case layoutXor:
		k = b.peelXor(l, ins)
	case layoutFuse3:
		k = b.peelFuse3(l, ins)
	default:
		k = b.peelFuse4(l, ins)
	}
	return k == n
}

// Peeling, shared by the three kinds below: a slot holding exactly one key
// fixes that key's fingerprint relation, so the key is recorded and removed
// from all its slots (its own slot then drops to zero), and any slot that
// falls to one key is pushed. Scanning slots in order and following the
// freed slots depth-first keeps the work inside a window of segments for
// fuse layouts. Each returns how many keys it peeled; the peel order goes
// to b.sorted (which is ins, fully consumed by then) and the roles to
// b.roles, never past len(ins) entries.

func (b *FuseBuilder) peelXor(l *staticLayout, ins []uint64) int {
	slots, order, roles := b.slots, b.sorted, b.roles
	bl := l.blockLen
	for _, hh := range ins {
		p0, p1, p2 := xorPositions(hh, bl)
		slots[p0].count += 4
		slots[p0].xor ^= hh
		slots[p1].count = (slots[p1].count + 4) ^ 1
		slots[p1].xor ^= hh
		slots[p2].count = (slots[p2].count + 4) ^ 2
		slots[p2].xor ^= hh
	}
	k, n := 0, len(ins)
	stack := b.stack[:0]
	for i := range slots {
		if slots[i].count>>2 != 1 {
			continue
		}
		stack = append(stack, uint32(i))
		for len(stack) > 0 {
			s := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			c := slots[s].count
			if c>>2 != 1 {
				continue
			}
			if k == n {
				break // impossible with exact counts; the caller sees k != n
			}
			hh := slots[s].xor
			order[k], roles[k] = hh, uint8(c&3)
			k++
			p0, p1, p2 := xorPositions(hh, bl)
			c0 := slots[p0].count - 4
			slots[p0].count, slots[p0].xor = c0, slots[p0].xor^hh
			c1 := (slots[p1].count - 4) ^ 1
			slots[p1].count, slots[p1].xor = c1, slots[p1].xor^hh
			c2 := (slots[p2].count - 4) ^ 2
			slots[p2].count, slots[p2].xor = c2, slots[p2].xor^hh
			if c0>>2 == 1 {
				stack = append(stack, p0)
			}
			if c1>>2 == 1 {
				stack = append(stack, p1)
			}
			if c2>>2 == 1 {
				stack = append(stack, p2)
			}
		}
	}
	b.stack = stack
	return k
}

func (b *FuseBuilder) peelFuse3(l *staticLayout, ins []uint64) int {
	counts, xors, order, roles := b.counts, b.xors, b.sorted, b.roles
	scl, sl, sm := l.segCountLen, l.segLen, l.segMask
	for _, hh := range ins {
		p0, p1, p2 := fuse3Positions(hh, scl, sl, sm)
		counts[p0] += 4
		xors[p0] ^= hh
		counts[p1] = (counts[p1] + 4) ^ 1
		xors[p1] ^= hh
		counts[p2] = (counts[p2] + 4) ^ 2
		xors[p2] ^= hh
	}
	k, n := 0, len(ins)
	stack := b.stack[:0]
	for i := range counts {
		if counts[i]>>2 != 1 {
			continue
		}
		stack = append(stack, uint32(i))
		for len(stack) > 0 {
			s := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			c := counts[s]
			if c>>2 != 1 {
				continue
			}
			if k == n {
				break
			}
			hh := xors[s]
			order[k], roles[k] = hh, uint8(c&3)
			k++
			p0, p1, p2 := fuse3Positions(hh, scl, sl, sm)
			c0 := counts[p0] - 4
			counts[p0], xors[p0] = c0, xors[p0]^hh
			c1 := (counts[p1] - 4) ^ 1
			counts[p1], xors[p1] = c1, xors[p1]^hh
			c2 := (counts[p2] - 4) ^ 2
			counts[p2], xors[p2] = c2, xors[p2]^hh
			if c0>>2 == 1 {
				stack = append(stack, p0)
			}
			if c1>>2 == 1 {
				stack = append(stack, p1)
			}
			if c2>>2 == 1 {
				stack = append(stack, p2)
			}
		}
	}
	b.stack = stack
	return k
}

func (b *FuseBuilder) peelFuse4(l *staticLayout, ins []uint64) int {
	counts, xors, order, roles := b.counts, b.xors, b.sorted, b.roles
	scl, sl, sm, lg := l.segCountLen, l.segLen, l.segMask, l.segLog
	for _, hh := range ins {
		p0, p1, p2, p3 := fuse4Positions(hh, scl, sl, sm, lg)
		counts[p0] += 4
		xors[p0] ^= hh
		counts[p1] = (counts[p1] + 4) ^ 1
		xors[p1] ^= hh
		counts[p2] = (counts[p2] + 4) ^ 2
		xors[p2] ^= hh
		counts[p3] = (counts[p3] + 4) ^ 3
		xors[p3] ^= hh
	}
	k, n := 0, len(ins)
	stack := b.stack[:0]
	for i := range counts {
		if counts[i]>>2 != 1 {
			continue
		}
		stack = append(stack, uint32(i))
		for len(stack) > 0 {
			s := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			c := counts[s]
			if c>>2 != 1 {
				continue
			}
			if k == n {
				break
			}
			hh := xors[s]
			order[k], roles[k] = hh, uint8(c&3)
			k++
			p0, p1, p2, p3 := fuse4Positions(hh, scl, sl, sm, lg)
			c0 := counts[p0] - 4
			counts[p0], xors[p0] = c0, xors[p0]^hh
			c1 := (counts[p1] - 4) ^ 1
			counts[p1], xors[p1] = c1, xors[p1]^hh
			c2 := (counts[p2] - 4) ^ 2
			counts[p2], xors[p2] = c2, xors[p2]^hh
			c3 := (counts[p3] - 4) ^ 3
			counts[p3], xors[p3] = c3, xors[p3]^hh
			if c0>>2 == 1 {
				stack = append(stack, p0)
			}
			if c1>>2 == 1 {
				stack = append(stack, p1)
			}
			if c2>>2 == 1 {
				stack = append(stack, p2)
			}
			if c3>>2 == 1 {
				stack = append(stack, p3)
			}
		}
	}
	b.stack = stack
	return k
}

// hashKeys hashes every key with Hash, for the [][]byte builders.
func hashKeys(keys [][]byte) []uint64 {
	hs := make([]uint64, len(keys))
	for i, k := range keys {
		hs[i] = Hash(k)
	}
	return hs
}
