package filters

import (
	"fmt"
	"math/bits"
	"slices"
)

// FuseBuilder builds XOR and binary fuse filters and keeps its scratch
// buffers (about 27 bytes per key for a 3-wise fuse filter) between builds,
// so a process that builds one filter per table pays for them once.
//
// Ownership: a filter returned by a FuseBuilder owns its fingerprints; they
// are allocated fresh for every build and never alias the builder's scratch,
// so the builder may be reused (or dropped) at once and the filter kept. The
// builder only reads the hashes slice it is given and never retains it. The
// zero value is ready to use. A FuseBuilder is not safe for concurrent use;
// use one per goroutine.
type FuseBuilder struct {
	dedup  []uint64 // sorted, deduplicated copy of the input, made after a failed attempt
	mixed  []uint64 // per-attempt mixed hashes; after insertion, the peel order
	sorted []uint64 // mixed hashes grouped by first segment (fuse layouts)
	hist   []uint32 // counting-sort buckets, one per segment
	count  []uint8  // per slot: (number of keys << 2) | XOR of their roles
	xors   []uint64 // per slot: XOR of the mixed hashes of its keys
	roles  []uint8  // per peeled key: which of its slots it was peeled from
	stack  []uint32 // slots whose count just dropped to one
}

// staticGrow returns s with length n, reallocating only if its capacity is
// short. Callers clear what they need cleared.
func staticGrow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
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
		if b.attempt(&l, keys, seed) {
			return peeled{layout: l, seed: seed, order: b.mixed[:len(keys)], roles: b.roles[:len(keys)]}, nil
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

// attempt runs one construction with one seed and reports whether every key
// was peeled. On success b.mixed[:n] holds the peel order and b.roles[:n]
// the slot index (0..arity-1) each key was peeled from.
func (b *FuseBuilder) attempt(l *staticLayout, keys []uint64, seed uint64) bool {
	n, size, arity := len(keys), int(l.size), int(l.arity)
	b.count = staticGrow(b.count, size)
	b.xors = staticGrow(b.xors, size)
	b.mixed = staticGrow(b.mixed, n)
	b.roles = staticGrow(b.roles, n)
	count, xors, mixed := b.count, b.xors, b.mixed
	clear(count)
	clear(xors)
	for i, h := range keys {
		mixed[i] = staticMix(h, seed)
	}

	// Fuse layouts: group the keys by the segment of their first slot with
	// one counting-sort pass ([FUSE] section 5). A key's slots then lie in
	// a window of arity segments that slides forward as the loop below
	// advances, so the count/xors updates stay in cache at any n. (XOR
	// filter slots span the whole table, so sorting would not help them.)
	ins := mixed
	if l.kind != layoutXor {
		segs := uint64(l.segCount)
		b.hist = staticGrow(b.hist, int(segs))
		b.sorted = staticGrow(b.sorted, n)
		hist, sorted := b.hist, b.sorted
		clear(hist)
		for _, hh := range mixed {
			// Equals p0>>segLog: floor(floor(hh*segCountLen/2^64)/segLen)
			// = floor(hh*segCount/2^64).
			s, _ := bits.Mul64(hh, segs)
			hist[s]++
		}
		var start uint32
		for i, c := range hist {
			hist[i] = start
			start += c
		}
		for _, hh := range mixed {
			s, _ := bits.Mul64(hh, segs)
			sorted[hist[s]] = hh
			hist[s]++
		}
		ins = sorted
	}

	for _, hh := range ins {
		p := l.positions(hh)
		for j := 0; j < arity; j++ {
			c := count[p[j]]
			if c >= 0xfc {
				// A 64th key in one slot would overflow the 6-bit count.
				// Only duplicates (or hostile hashes) get here; fail the
				// attempt so peel deduplicates.
				return false
			}
			count[p[j]] = (c + 4) ^ uint8(j)
			xors[p[j]] ^= hh
		}
	}

	// Peel: a slot holding exactly one key fixes that key's fingerprint
	// relation, so remove the key from its other slots and continue from any
	// slot that is now down to one. Scanning slots in order and following
	// the newly freed slots depth-first keeps the work inside a window of
	// segments (cache-friendly for fuse layouts). mixed is dead after the
	// insertion loop, so it receives the peel order.
	order, roles := mixed, b.roles
	k := 0
	stack := b.stack[:0]
	for i := 0; i < size; i++ {
		if count[i]>>2 != 1 {
			continue
		}
		stack = append(stack, uint32(i))
		for len(stack) > 0 {
			s := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			c := count[s]
			if c>>2 != 1 {
				continue
			}
			hh, role := xors[s], c&3
			p := l.positions(hh)
			if p[role] != s || k == n {
				// Impossible with exact counts; refuse rather than build
				// a filter with a false negative (invariant F1).
				b.stack = stack
				return false
			}
			order[k], roles[k] = hh, role
			k++
			count[s], xors[s] = 0, 0
			for j := 0; j < arity; j++ {
				if uint8(j) == role {
					continue
				}
				q := p[j]
				cq := (count[q] - 4) ^ uint8(j)
				count[q] = cq
				xors[q] ^= hh
				if cq>>2 == 1 {
					stack = append(stack, q)
				}
			}
		}
	}
	b.stack = stack
	return k == n
}

// hashKeys hashes every key with Hash, for the [][]byte builders.
func hashKeys(keys [][]byte) []uint64 {
	hs := make([]uint64, len(keys))
	for i, k := range keys {
		hs[i] = Hash(k)
	}
	return hs
}
