package filters

import (
	"fmt"
	"math"
	"math/bits"
)

// Cuckoo is a cuckoo filter (Fan, Andersen, Kaminsky and Mitzenmacher,
// "Cuckoo Filter: Practically Better Than Bloom", CoNEXT 2014): a table of
// buckets of four fingerprint slots in which every key has exactly two
// candidate buckets. It supports Add and Remove at loads up to about 95%, and
// is sievekv's mutable tombstone index.
//
// Layout: bucket i is one packed entry of 4·w bits (w = 8, 12 or 16) in a
// packedArray, so a 12-bit filter pays exactly 12 bits per slot. Lane j of a
// bucket (bits j·w .. j·w+w-1) is slot j; fingerprint 0 marks an empty slot.
//
// Remove must only be called for keys known to be members: removing a key
// that was never added can delete the fingerprint of a different key that
// collides with it, which then reads as absent (see the package doc).
//
// A Cuckoo is not safe for concurrent mutation; a filter that is no longer
// mutated may be queried from many goroutines.
type Cuckoo struct {
	slots      packedArray // one entry per bucket, 4 lanes of fpBits each
	fpBits     uint        // 8, 12 or 16
	fpMax      uint64      // 2^fpBits - 1: fingerprints are 1..fpMax
	lanesLo    uint64      // bit 0 of every lane: fp*lanesLo repeats fp in each lane
	lanesHi    uint64      // top bit of every lane
	bucketMask uint64      // bucket count - 1 (bucket count is a power of two)
	logBuckets uint
	// wordAligned is set for 8- and 16-bit fingerprints, whose 32- and
	// 64-bit buckets never straddle a word: bucket then reads one word.
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
	// cuckooSlots is the bucket size. Four slots per bucket is the paper's
	// recommendation (Fan et al., §5.1): it reaches ~95% load with a
	// fingerprint only 3 bits longer than the one-slot design would need.
	cuckooSlots = 4
	// cuckooMaxLoad is the load the constructor sizes for. Fan et al. report
	// 95.5% achievable load for b=4; our own fill-to-failure measurement is in
	// docs/filters.md, "Cuckoo and quotient against
	// github.com/seiflotfy/cuckoofilter".
	cuckooMaxLoad = 0.95
	// cuckooMaxKicks bounds the random walk, as in the paper's reference
	// implementation (500 displacements).
	cuckooMaxKicks = 500
	// cuckooMaxLogBuckets keeps bucket indexes within the low 32 bits of the
	// key hash, disjoint from the high 32 bits the fingerprint comes from.
	cuckooMaxLogBuckets = 32
	// cuckooVersion is the body format version: 1 is the first (and only)
	// layout, described in docs/format.md, "Cuckoo filter (type 9)".
	cuckooVersion = 1
	// cuckooSeed seeds the random walk of a new filter. Any constant works;
	// a fixed one makes every run reproducible.
	cuckooSeed = 0x5eed_c0c0_5eed_c0c0
)

// errCuckooFull is returned by a failed Add; it is static so that the
// failure path allocates nothing.
var errCuckooFull = fmt.Errorf("filters: cuckoo: no free slot within %d displacements: %w",
	cuckooMaxKicks, ErrFull)

// cuckooFingerprintBits chooses the fingerprint width for a target rate: the
// paper's bound ε ≤ 2b/2^f with b = 4 gives f = ceil(log2(8/ε)), rounded up
// to a width the packed layout supports.
func cuckooFingerprintBits(fpRate float64) (uint, error) {
	f := math.Ceil(math.Log2(2 * cuckooSlots / fpRate))
	switch {
	case f <= 8:
		return 8, nil
	case f <= 12:
		return 12, nil
	case f <= 16:
		return 16, nil
	}
	return 0, invalidf("cuckoo: false-positive rate %v needs %v-bit fingerprints; the widest is 16 (rate >= %.3g)",
		fpRate, f, 2*cuckooSlots/math.Exp2(16))
}

// NewCuckoo returns an empty cuckoo filter for n keys at false-positive rate
// fpRate: buckets of four slots, the bucket count the smallest power of two
// that keeps n keys at load ≤ 0.95, and fingerprints of 8, 12 or 16 bits
// (ceil(log2(8/fpRate)) rounded up). Rates below 8/2^16 ≈ 1.2e-4 would need
// wider fingerprints and are rejected with ErrInvalidArgument.
func NewCuckoo(n int, fpRate float64) (*Cuckoo, error) {
	if err := checkSizing(n, fpRate); err != nil {
		return nil, err
	}
	fpBits, err := cuckooFingerprintBits(fpRate)
	if err != nil {
		return nil, err
	}
	need := math.Ceil(float64(n) / (cuckooSlots * cuckooMaxLoad))
	logBuckets := uint(0)
	for math.Exp2(float64(logBuckets)) < need {
		logBuckets++
	}
	if logBuckets > cuckooMaxLogBuckets {
		return nil, invalidf("cuckoo: n = %d needs more than 2^%d buckets", n, cuckooMaxLogBuckets)
	}
	return newCuckooShape(logBuckets, fpBits), nil
}

// newCuckooShape builds an empty filter of 2^logBuckets buckets.
func newCuckooShape(logBuckets, fpBits uint) *Cuckoo {
	lo := uint64(0)
	for j := uint(0); j < cuckooSlots; j++ {
		lo |= 1 << (j * fpBits)
	}
	return &Cuckoo{
		wordAligned: fpBits != 12,
		bucketShift: uint(bits.TrailingZeros(cuckooSlots * fpBits)),
		slots:       newPackedArray(1<<logBuckets, cuckooSlots*fpBits),
		fpBits:      fpBits,
		fpMax:       1<<fpBits - 1,
		lanesLo:     lo,
		lanesHi:     lo << (fpBits - 1),
		bucketMask:  1<<logBuckets - 1,
		logBuckets:  logBuckets,
		rng:         cuckooSeed,
	}
}

// derive splits a key hash into its fingerprint (from the high 32 bits,
// mapped onto 1..fpMax so 0 stays free for "empty") and its first bucket
// (from the low bits).
func (c *Cuckoo) derive(h uint64) (fp, i1 uint64) {
	fp = (h>>32)*c.fpMax>>32 + 1
	return fp, h & c.bucketMask
}

// alt is the partner bucket: i XOR a hash of the fingerprint alone, so it
// can be computed from either bucket without the key (partial-key cuckoo
// hashing, Fan et al. §3.1). The multiply-and-take-high-bits hash spreads
// every fingerprint bit over the offset; masking keeps the XOR reversible
// because the bucket count is a power of two.
func (c *Cuckoo) alt(i, fp uint64) uint64 {
	return (i ^ (fp*0x9e3779b97f4a7c15)>>32) & c.bucketMask
}

// bucket reads bucket i. 32- and 64-bit buckets take one word; 48-bit ones
// read two words without branching on whether they straddle: packedArray
// keeps a spare word, and a Go shift by 64 yields 0. The wordAligned branch
// is the same for every call on a filter, so it predicts perfectly; the
// one-word path was worth about 10% on absent-key queries.
func (c *Cuckoo) bucket(i uint64) uint64 {
	if c.wordAligned {
		bit := i << c.bucketShift
		return c.slots.words[bit>>6] >> (bit & 63) & c.slots.mask
	}
	bit := i * uint64(c.slots.width)
	w, off := bit>>6, bit&63
	return (c.slots.words[w]>>off | c.slots.words[w+1]<<(64-off)) & c.slots.mask
}

// setBucket writes bucket i, again without a straddle branch: when the
// bucket fits in one word the second word's mask and value shift to zero.
func (c *Cuckoo) setBucket(i, v uint64) {
	bit := i * uint64(c.slots.width)
	w, off := bit>>6, bit&63
	m := c.slots.mask
	c.slots.words[w] = c.slots.words[w]&^(m<<off) | v<<off
	c.slots.words[w+1] = c.slots.words[w+1]&^(m>>(64-off)) | v>>(64-off)
}

// laneOf converts a matchLanes result to the bit offset of the lowest
// flagged lane: the flag is that lane's top bit.
func (c *Cuckoo) laneOf(m uint64) uint {
	return uint(bits.TrailingZeros64(m)) + 1 - c.fpBits
}

// matchLanes returns a word with the top bit of a lane set for the lowest
// lane of b equal to fp (and possibly spurious bits above it); it is zero iff
// no lane equals fp. This is the SWAR "has zero byte" test generalised to
// w-bit lanes, applied to b XOR fp-in-every-lane.
func (c *Cuckoo) matchLanes(b, fp uint64) uint64 {
	x := b ^ fp*c.lanesLo
	return (x - c.lanesLo) &^ x & c.lanesHi
}

// MayContain reports whether key may have been added.
func (c *Cuckoo) MayContain(key []byte) bool {
	// The body of MayContainHash, repeated because it is too large to
	// inline: one call per query instead of two.
	fp, i1 := c.derive(Hash(key))
	b1, b2 := c.bucket(i1), c.bucket(c.alt(i1, fp))
	return c.matchLanes(b1, fp)|c.matchLanes(b2, fp) != 0
}

// MayContainHash is MayContain for a key whose Hash the caller holds.
//
// Both buckets are loaded unconditionally: the two loads are independent, so
// their cache misses overlap, and there is no branch to mispredict between
// keys found in the first bucket and keys that are not (measured in
// docs/filters.md, "Cuckoo and quotient against
// github.com/seiflotfy/cuckoofilter").
func (c *Cuckoo) MayContainHash(h uint64) bool {
	fp, i1 := c.derive(h)
	b1, b2 := c.bucket(i1), c.bucket(c.alt(i1, fp))
	return c.matchLanes(b1, fp)|c.matchLanes(b2, fp) != 0
}

// tryPut stores fp in a free slot of bucket i, if there is one.
func (c *Cuckoo) tryPut(i, fp uint64) bool {
	b := c.bucket(i)
	m := c.matchLanes(b, 0)
	if m == 0 {
		return false
	}
	// The lowest flagged lane is exact (spurious flags only appear above a
	// true match), so it is a free slot.
	c.setBucket(i, b|fp<<c.laneOf(m))
	return true
}

// Add inserts key. It returns an error wrapping ErrFull, and leaves the
// filter exactly as it was, if no free slot is reachable within 500
// displacements.
func (c *Cuckoo) Add(key []byte) error { return c.AddHash(Hash(key)) }

// AddHash is Add for a key whose Hash the caller holds.
func (c *Cuckoo) AddHash(h uint64) error {
	fp, i1 := c.derive(h)
	if c.tryPut(i1, fp) {
		c.count++
		return nil
	}
	i2 := c.alt(i1, fp)
	if c.tryPut(i2, fp) {
		c.count++
		return nil
	}
	return c.walk(i1, i2, fp)
}

// next advances the walk's splitmix64 generator.
func (c *Cuckoo) next() uint64 {
	c.rng += 0x9e3779b97f4a7c15
	return mix64(c.rng)
}

// walk is the random-walk eviction of Fan et al. §3.1 with one addition:
// every overwritten bucket is logged, so that when the kick limit is reached
// the log is replayed backwards and the table (and the generator) return to
// their state before the Add. Without the rollback, the fingerprint carried
// when the walk gives up would be lost, and with it a key that was added
// earlier (keeps F1 and F2).
func (c *Cuckoo) walk(i1, i2, fp uint64) error {
	savedRNG := c.rng
	c.undo = c.undo[:0]
	r := c.next()
	i := i1
	if r&1 != 0 {
		i = i2
	}
	for k := 0; k < cuckooMaxKicks; k++ {
		if k > 0 && k%30 == 0 {
			r = c.next() // 2 random bits per kick, 64 bits per draw
		}
		lane := uint((r>>(1+2*(k%30)))&3) * c.fpBits
		b := c.bucket(i)
		c.undo = append(c.undo, cuckooUndo{bucket: i, old: b})
		victim := b >> lane & c.fpMax
		c.setBucket(i, b&^(c.fpMax<<lane)|fp<<lane)
		fp = victim
		i = c.alt(i, fp)
		if c.tryPut(i, fp) {
			c.count++
			return nil
		}
	}
	for k := len(c.undo) - 1; k >= 0; k-- {
		c.setBucket(c.undo[k].bucket, c.undo[k].old)
	}
	c.rng = savedRNG
	return errCuckooFull
}

// Remove deletes one copy of key's fingerprint and reports whether it found
// one. Only remove keys known to be members (see the type doc).
func (c *Cuckoo) Remove(key []byte) bool { return c.RemoveHash(Hash(key)) }

// RemoveHash is Remove for a key whose Hash the caller holds.
func (c *Cuckoo) RemoveHash(h uint64) bool {
	fp, i1 := c.derive(h)
	if c.clear(i1, fp) || c.clear(c.alt(i1, fp), fp) {
		c.count--
		return true
	}
	return false
}

// CopiesHash counts the stored copies of h's fingerprint in h's two
// buckets. Keys with the same fingerprint and the same first bucket share
// both buckets (the partner is a function of bucket and fingerprint alone),
// so the count is that of h's whole alias class (see AliasHash): a caller
// keeping a multiset can bound the copies per class and count the rest
// elsewhere, since a bucket pair holds at most 8 copies of one fingerprint.
func (c *Cuckoo) CopiesHash(h uint64) int {
	fp, i1 := c.derive(h)
	i2 := c.alt(i1, fp)
	n := c.countLanes(c.bucket(i1), fp)
	if i2 != i1 {
		n += c.countLanes(c.bucket(i2), fp)
	}
	return n
}

// AliasHash names h's alias class: the keys this filter cannot tell apart
// (same fingerprint, same bucket pair). Adding or removing any member of a
// class adds or removes a copy visible to every member.
func (c *Cuckoo) AliasHash(h uint64) uint64 {
	fp, i1 := c.derive(h)
	return fp<<cuckooMaxLogBuckets | min(i1, c.alt(i1, fp))
}

// countLanes counts the lanes of bucket b equal to fp.
func (c *Cuckoo) countLanes(b, fp uint64) int {
	n := 0
	for lane := uint(0); lane < cuckooSlots; lane++ {
		if b>>(lane*c.fpBits)&c.fpMax == fp {
			n++
		}
	}
	return n
}

// clear empties the lowest slot of bucket i holding fp, if any.
func (c *Cuckoo) clear(i, fp uint64) bool {
	b := c.bucket(i)
	m := c.matchLanes(b, fp)
	if m == 0 {
		return false
	}
	c.setBucket(i, b&^(c.fpMax<<c.laneOf(m)))
	return true
}

// Len returns the number of fingerprints stored (keys added minus keys
// removed).
func (c *Cuckoo) Len() int { return int(c.count) }

// Cap returns the number of slots, the hard upper bound on Len.
func (c *Cuckoo) Cap() int { return int(c.slots.n) * cuckooSlots }

// LoadFactor returns Len()/Cap().
func (c *Cuckoo) LoadFactor() float64 { return float64(c.count) / float64(c.Cap()) }

// FingerprintBits returns the fingerprint width chosen at construction.
func (c *Cuckoo) FingerprintBits() int { return int(c.fpBits) }

// MarshalBinary encodes the filter (docs/format.md, "Cuckoo filter").
func (c *Cuckoo) MarshalBinary() ([]byte, error) {
	var w bodyWriter
	w.buf = make([]byte, 0, 28+8*len(c.slots.words))
	w.u8(uint8(c.fpBits))
	w.u8(cuckooSlots)
	w.u8(uint8(c.logBuckets))
	w.u8(0)
	w.u64(c.count)
	w.u64(c.rng)
	w.u64(uint64(len(c.slots.words)))
	w.u64s(c.slots.words)
	return cuckooCodec.seal(w.buf), nil
}

// UnmarshalBinary replaces c with the filter encoded in data. On error c is
// unchanged.
func (c *Cuckoo) UnmarshalBinary(data []byte) error {
	return cuckooCodec.unmarshal(c, data)
}

var cuckooCodec = newCodec(TypeCuckoo, cuckooVersion, "cuckoo", decodeCuckoo)

// decodeCuckoo checks every field before building the filter, including
// that the stored count equals the number of occupied slots and that no bit
// outside the table is set, so a decoded filter is one that Add and Remove
// could have produced (F3).
func decodeCuckoo(body []byte) (*Cuckoo, error) {
	r := bodyReader{buf: body}
	fpBits := uint(r.u8("fingerprint bits"))
	slots := r.u8("slots per bucket")
	logBuckets := uint(r.u8("log2 bucket count"))
	reserved := r.u8("reserved")
	count := r.u64("count")
	rng := r.u64("random state")
	nWords := r.u64("word count")
	r.check(fpBits == 8 || fpBits == 12 || fpBits == 16, "cuckoo: fingerprint width %d is not 8, 12 or 16", fpBits)
	r.check(slots == cuckooSlots, "cuckoo: %d slots per bucket, want %d", slots, cuckooSlots)
	r.check(logBuckets <= cuckooMaxLogBuckets, "cuckoo: 2^%d buckets is too many", logBuckets)
	r.check(reserved == 0, "cuckoo: reserved byte is %d", reserved)
	if r.fail != nil {
		return nil, fmt.Errorf("filters: %w", r.fail)
	}
	want := packedWords(1<<logBuckets, cuckooSlots*fpBits)
	r.check(nWords == want, "cuckoo: %d words, shape needs %d", nWords, want)
	words := r.u64s(nWords, "table")
	if err := r.finish(); err != nil {
		return nil, fmt.Errorf("filters: %w", err)
	}
	c := newCuckooShape(logBuckets, fpBits)
	copy(c.slots.words, words)
	c.rng = rng
	// Bits past the last bucket (including the spare word) are never set.
	used := c.slots.n * uint64(c.slots.width)
	for k := used / 64; k < uint64(len(words)); k++ {
		w := words[k]
		if k == used/64 {
			w >>= used % 64
		}
		if w != 0 {
			return nil, corruptf("cuckoo: bits set past the end of the table (word %d)", k)
		}
	}
	var occupied uint64
	for i := uint64(0); i < c.slots.n; i++ {
		b := c.bucket(i)
		for lane := uint(0); lane < cuckooSlots*fpBits; lane += fpBits {
			if b>>lane&c.fpMax != 0 {
				occupied++
			}
		}
	}
	if occupied != count {
		return nil, corruptf("cuckoo: header counts %d keys, table holds %d", count, occupied)
	}
	c.count = count
	return c, nil
}

// Compile-time check that Cuckoo is a Filter.
var _ Filter = (*Cuckoo)(nil)
