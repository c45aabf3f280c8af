package filters

import (
	"fmt"
	"math"
	"math/bits"
)

// laneTable is the bucket table Cuckoo and Vacuum share: buckets of
// laneSlots fingerprint lanes of fpBits each, one packed entry per bucket,
// fingerprint 0 marking an empty lane; the partner bucket is a function of
// bucket and fingerprint alone; and Adds that find both buckets full run a
// random walk of displacements that is rolled back if it gives up (F1, F2).
// The two filters differ only in how a key picks its first bucket
// (chunked) and in altMask, how far its partner may lie: anywhere in a
// power-of-two table (Cuckoo) or within an aligned chunk (Vacuum). The
// table therefore carries both filters' public key operations (MayContain,
// Add, Remove and their Hash forms), promoted to each.
type laneTable struct {
	slots   packedArray // one entry per bucket, laneSlots lanes of fpBits each
	fpBits  uint
	fpMax   uint64 // 2^fpBits - 1: fingerprints are 1..fpMax
	lanesLo uint64 // bit 0 of every lane: fp*lanesLo repeats fp in each lane
	lanesHi uint64 // top bit of every lane
	// altMask bounds the partner's offset: alt(i) = i XOR (hash(fp) & altMask).
	altMask uint64
	// chunked picks the first bucket by multiply-shift onto any bucket count
	// (Vacuum) instead of by mask in a power-of-two table (Cuckoo); see derive.
	chunked bool
	// full is the error a failed Add returns: the filter's own, made once so
	// that the failure path allocates nothing (laneFull).
	full error
	// wordAligned is set when a bucket is 16, 32 or 64 bits wide and so never
	// straddles a word: bucket then reads one word.
	wordAligned bool
	bucketShift uint // log2 of the bucket width, when wordAligned
	count       uint64
	// rng is the state of the splitmix64 generator that drives the random
	// walk. It is part of the filter (and of its encoding) so that the same
	// sequence of operations always yields the same table; a failed Add puts
	// it back too, so a failed Add leaves the filter exactly as it was (F2).
	rng  uint64
	undo []cuckooUndo // scratch for rolling back a failed random walk
}

// cuckooUndo records a bucket's contents before a displacement overwrote it.
type cuckooUndo struct {
	bucket uint64
	old    uint64
}

const (
	// laneSlots is the bucket size. Four slots per bucket is the cuckoo
	// paper's recommendation (Fan et al., §5.1): it reaches ~95% load with a
	// fingerprint only 3 bits longer than the one-slot design would need.
	// The walk draws a victim lane with 2 random bits, so it must stay 4.
	laneSlots = 4
	// laneMaxKicks bounds the random walk, as in the cuckoo paper's reference
	// implementation (500 displacements).
	laneMaxKicks = 500
)

// laneFull returns the error a failed Add of the lane filter called name
// returns. Each filter makes its own once, at package level, so that the
// failure path allocates nothing.
func laneFull(name string) error {
	return fmt.Errorf("filters: %s: no free slot within %d displacements: %w", name, laneMaxKicks, ErrFull)
}

// laneFingerprintBits checks a constructor's n and fpRate (checkSizing),
// then returns the narrowest fingerprint for rate fpRate by the cuckoo
// paper's bound ε ≤ 2b/2^f with b = laneSlots: f = ceil(log2(8/ε)).
// Widths above 16, the widest either filter packs, are refused; name
// prefixes that error. Each filter then rounds f to the widths it supports.
func laneFingerprintBits(name string, n int, fpRate float64) (uint, error) {
	if err := checkSizing(n, fpRate); err != nil {
		return 0, err
	}
	f := math.Ceil(math.Log2(2 * laneSlots / fpRate))
	if !(f <= 16) { // also NaN, as Cuckoo's switch on f refused it

		return 0, invalidf("%s: false-positive rate %v needs %v-bit fingerprints; the widest is 16 (rate >= %.3g)",
			name, fpRate, f, 2*laneSlots/math.Exp2(16))
	}
	return uint(f), nil
}

// newLaneTable returns an empty table of buckets buckets of fpBits-bit
// lanes whose walk starts from seed; chunked, altMask and full are the
// filter's (see laneTable).
func newLaneTable(buckets uint64, fpBits uint, chunked bool, altMask, seed uint64, full error) laneTable {
	lo := uint64(0)
	for j := uint(0); j < laneSlots; j++ {
		lo |= 1 << (j * fpBits)
	}
	width := laneSlots * fpBits
	return laneTable{
		slots:       newPackedArray(buckets, width),
		fpBits:      fpBits,
		fpMax:       1<<fpBits - 1,
		lanesLo:     lo,
		lanesHi:     lo << (fpBits - 1),
		altMask:     altMask,
		chunked:     chunked,
		full:        full,
		wordAligned: width&(width-1) == 0,
		bucketShift: uint(bits.TrailingZeros(width)),
		rng:         seed,
	}
}

// derive splits a key hash into its fingerprint (from the high 32 bits,
// mapped onto 1..fpMax so 0 stays free for "empty") and its first bucket
// (from the low 32 bits, disjoint from them). A power-of-two table takes
// the low bits masked; a chunked one maps them onto [0, buckets) by
// multiply-shift (reduce32's method, widened so that exactly 2^32 buckets
// also works). The branch goes the same way on every call to a filter, so
// it predicts perfectly.
func (t *laneTable) derive(h uint64) (fp, i1 uint64) {
	fp = (h>>32)*t.fpMax>>32 + 1
	if t.chunked {
		return fp, uint64(uint32(h)) * t.slots.n >> 32
	}
	return fp, h & t.altMask
}

// MayContain reports whether key may have been added.
func (t *laneTable) MayContain(key []byte) bool {
	// The body of MayContainHash, repeated because it is too large to
	// inline: one call per query instead of two.
	if t.emptyTable() {
		return false
	}
	fp, i1 := t.derive(Hash(key))
	b1, b2 := t.bucket(i1), t.bucket(t.alt(i1, fp))
	return t.matchLanes(b1, fp)|t.matchLanes(b2, fp) != 0
}

// MayContainHash is MayContain for a key whose Hash the caller holds.
//
// Both buckets are loaded unconditionally: the two loads are independent, so
// their cache misses overlap, and there is no branch to mispredict between
// keys found in the first bucket and keys that are not (measured in
// docs/filters.md, "Cuckoo and quotient against
// github.com/seiflotfy/cuckoofilter").
func (t *laneTable) MayContainHash(h uint64) bool {
	if t.emptyTable() {
		return false
	}
	fp, i1 := t.derive(h)
	b1, b2 := t.bucket(i1), t.bucket(t.alt(i1, fp))
	return t.matchLanes(b1, fp)|t.matchLanes(b2, fp) != 0
}

// Add inserts key. It returns an error wrapping ErrFull, and leaves the
// filter exactly as it was, if no free slot is reachable within 500
// displacements.
func (t *laneTable) Add(key []byte) error { return t.AddHash(Hash(key)) }

// AddHash is Add for a key whose Hash the caller holds.
func (t *laneTable) AddHash(h uint64) error {
	if t.emptyTable() {
		return errZeroValueFull
	}
	fp, i1 := t.derive(h)
	return t.add(i1, fp)
}

// Remove deletes one copy of key's fingerprint and reports whether it found
// one. Only remove keys known to be members: removing another key can
// delete the fingerprint of a member it collides with.
func (t *laneTable) Remove(key []byte) bool { return t.RemoveHash(Hash(key)) }

// RemoveHash is Remove for a key whose Hash the caller holds.
func (t *laneTable) RemoveHash(h uint64) bool {
	if t.emptyTable() {
		return false
	}
	fp, i1 := t.derive(h)
	return t.remove(i1, fp)
}

// alt is the partner bucket: i XOR a hash of the fingerprint alone, so it
// can be computed from either bucket without the key (partial-key cuckoo
// hashing, Fan et al. §3.1). The multiply-and-take-high-bits hash spreads
// every fingerprint bit over the offset; masking with a power of two minus
// one, no larger than the table, keeps the XOR an involution inside the
// table (and, for Vacuum, inside i's aligned chunk).
func (t *laneTable) alt(i, fp uint64) uint64 {
	return i ^ (fp*0x9e3779b97f4a7c15)>>32&t.altMask
}

// bucket reads bucket i. 16-, 32- and 64-bit buckets take one word; others
// read two words without branching on whether they straddle: packedArray
// keeps a spare word, and a Go shift by 64 yields 0. The wordAligned branch
// is the same for every call on a filter, so it predicts perfectly; the
// one-word path was worth about 10% on absent-key queries.
func (t *laneTable) bucket(i uint64) uint64 {
	if t.wordAligned {
		bit := i << t.bucketShift
		return t.slots.words[bit>>6] >> (bit & 63) & t.slots.mask
	}
	bit := i * uint64(t.slots.width)
	w, off := bit>>6, bit&63
	return (t.slots.words[w]>>off | t.slots.words[w+1]<<(64-off)) & t.slots.mask
}

// setBucket writes bucket i, again without a straddle branch: when the
// bucket fits in one word the second word's mask and value shift to zero.
func (t *laneTable) setBucket(i, v uint64) {
	bit := i * uint64(t.slots.width)
	w, off := bit>>6, bit&63
	m := t.slots.mask
	t.slots.words[w] = t.slots.words[w]&^(m<<off) | v<<off
	t.slots.words[w+1] = t.slots.words[w+1]&^(m>>(64-off)) | v>>(64-off)
}

// laneOf converts a matchLanes result to the bit offset of the lowest
// flagged lane: the flag is that lane's top bit.
func (t *laneTable) laneOf(m uint64) uint {
	return uint(bits.TrailingZeros64(m)) + 1 - t.fpBits
}

// matchLanes returns a word with the top bit of a lane set for the lowest
// lane of b equal to fp (and possibly spurious bits above it); it is zero iff
// no lane equals fp. This is the SWAR "has zero byte" test generalised to
// w-bit lanes, applied to b XOR fp-in-every-lane.
func (t *laneTable) matchLanes(b, fp uint64) uint64 {
	x := b ^ fp*t.lanesLo
	return (x - t.lanesLo) &^ x & t.lanesHi
}

// tryPut stores fp in a free slot of bucket i, if there is one.
func (t *laneTable) tryPut(i, fp uint64) bool {
	b := t.bucket(i)
	m := t.matchLanes(b, 0)
	if m == 0 {
		return false
	}
	// The lowest flagged lane is exact (spurious flags only appear above a
	// true match), so it is a free slot.
	t.setBucket(i, b|fp<<t.laneOf(m))
	return true
}

// add stores fp in bucket i1, its partner, or by displacement.
func (t *laneTable) add(i1, fp uint64) error {
	if t.tryPut(i1, fp) {
		t.count++
		return nil
	}
	i2 := t.alt(i1, fp)
	if t.tryPut(i2, fp) {
		t.count++
		return nil
	}
	return t.walk(i1, i2, fp)
}

// next advances the walk's splitmix64 generator.
func (t *laneTable) next() uint64 {
	t.rng += 0x9e3779b97f4a7c15
	return mix64(t.rng)
}

// walk is the random-walk eviction of Fan et al. §3.1 with one addition:
// every overwritten bucket is logged, so that when the kick limit is reached
// the log is replayed backwards and the table (and the generator) return to
// their state before the Add. Without the rollback, the fingerprint carried
// when the walk gives up would be lost, and with it a key that was added
// earlier (keeps F1 and F2).
func (t *laneTable) walk(i1, i2, fp uint64) error {
	savedRNG := t.rng
	t.undo = t.undo[:0]
	r := t.next()
	i := i1
	if r&1 != 0 {
		i = i2
	}
	for k := 0; k < laneMaxKicks; k++ {
		if k > 0 && k%30 == 0 {
			r = t.next() // 2 random bits per kick, 64 bits per draw
		}
		lane := uint((r>>(1+2*(k%30)))&3) * t.fpBits
		b := t.bucket(i)
		t.undo = append(t.undo, cuckooUndo{bucket: i, old: b})
		victim := b >> lane & t.fpMax
		t.setBucket(i, b&^(t.fpMax<<lane)|fp<<lane)
		fp = victim
		i = t.alt(i, fp)
		if t.tryPut(i, fp) {
			t.count++
			return nil
		}
	}
	for k := len(t.undo) - 1; k >= 0; k-- {
		t.setBucket(t.undo[k].bucket, t.undo[k].old)
	}
	t.rng = savedRNG
	return t.full
}

// remove deletes one copy of fp from bucket i1 or its partner.
func (t *laneTable) remove(i1, fp uint64) bool {
	if t.clear(i1, fp) || t.clear(t.alt(i1, fp), fp) {
		t.count--
		return true
	}
	return false
}

// clear empties the lowest slot of bucket i holding fp, if any.
func (t *laneTable) clear(i, fp uint64) bool {
	b := t.bucket(i)
	m := t.matchLanes(b, fp)
	if m == 0 {
		return false
	}
	t.setBucket(i, b&^(t.fpMax<<t.laneOf(m)))
	return true
}

// Len returns the number of fingerprints stored (keys added minus keys
// removed).
func (t *laneTable) Len() int { return int(t.count) }

// Cap returns the number of slots, the hard upper bound on Len.
func (t *laneTable) Cap() int { return int(t.slots.n) * laneSlots }

// LoadFactor returns Len()/Cap().
func (t *laneTable) LoadFactor() float64 { return loadOf(t.count, uint64(t.Cap())) }

// emptyTable reports whether the table has no buckets: the zero value of
// Cuckoo or Vacuum, which no constructor made. Its bucket array is empty,
// so every key operation would index past it; instead the zero value is an
// empty filter that is already full (queries answer absent, Remove finds
// nothing, Add returns an error wrapping ErrFull), as a user holding a
// declared-but-unmade filter expects. The one branch is the same on every
// call to a filter, so it predicts perfectly.
func (t *laneTable) emptyTable() bool { return t.slots.n == 0 }

// FingerprintBits returns the fingerprint width chosen at construction.
func (t *laneTable) FingerprintBits() int { return int(t.fpBits) }

// appendState writes the walk state and the table after a filter's shape
// fields (appendWalkState).
func (t *laneTable) appendState(w *bodyWriter) { appendWalkState(w, t.count, t.rng, t.slots.words) }

// load fills an empty table of the decoded shape from words and checks that
// no bit outside the table is set (including the spare word) and that the
// stored count equals the occupied slots, so the table is one Add and
// Remove could have produced (F3). name prefixes its errors.
func (t *laneTable) load(name string, words []uint64, count, rng uint64) error {
	copy(t.slots.words, words)
	t.rng = rng
	if k := t.slots.dirtyWord(words); k >= 0 {
		return corruptf("%s: bits set past the end of the table (word %d)", name, k)
	}
	var occupied uint64
	for i := uint64(0); i < t.slots.n; i++ {
		b := t.bucket(i)
		for lane := uint(0); lane < laneSlots*t.fpBits; lane += t.fpBits {
			if b>>lane&t.fpMax != 0 {
				occupied++
			}
		}
	}
	if occupied != count {
		return corruptf("%s: header counts %d keys, table holds %d", name, count, occupied)
	}
	t.count = count
	return nil
}
