package filters

import (
	"fmt"
	"math"
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
//
// The zero value (a Cuckoo no constructor or UnmarshalBinary made) is an
// empty filter with no slots: queries answer "absent", Remove and CopiesHash find nothing,
// Len and LoadFactor are 0, Add (and AddHashes) returns an error wrapping ErrFull (it has
// nowhere to put a key) and MarshalBinary one wrapping ErrInvalidArgument
// (it has no encoding). A declared-but-unmade filter thus fails loudly on
// its first Add instead of indexing an empty table.
type Cuckoo struct {
	laneTable  // altMask is bucket count - 1: the partner may be any bucket
	logBuckets uint
	// loadSink keeps the batch calls' bucket loads alive (loadBuckets).
	loadSink uint64
}

const (
	// cuckooSlots is the bucket size (see laneSlots).
	cuckooSlots = laneSlots
	// cuckooMaxLoad is the load the constructor sizes for. Fan et al. report
	// 95.5% achievable load for b=4; our own fill-to-failure measurement is in
	// docs/filters.md, "Cuckoo and quotient against
	// github.com/seiflotfy/cuckoofilter".
	cuckooMaxLoad = 0.95
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
var errCuckooFull = laneFull("cuckoo")

// cuckooFingerprintBits checks the sizing and chooses the fingerprint width
// for fpRate: the paper's bound (laneFingerprintBits), rounded up to a width
// the packed layout supports.
func cuckooFingerprintBits(n int, fpRate float64) (uint, error) {
	f, err := laneFingerprintBits("cuckoo", n, fpRate)
	switch {
	case err != nil:
		return 0, err
	case f <= 8:
		return 8, nil
	case f <= 12:
		return 12, nil
	}
	return 16, nil
}

// NewCuckoo returns an empty cuckoo filter for n keys at false-positive rate
// fpRate: buckets of four slots, the bucket count the smallest power of two
// that keeps n keys at load ≤ 0.95, and fingerprints of 8, 12 or 16 bits
// (ceil(log2(8/fpRate)) rounded up). Rates below 8/2^16 ≈ 1.2e-4 would need
// wider fingerprints and are rejected with ErrInvalidArgument.
func NewCuckoo(n int, fpRate float64) (*Cuckoo, error) {
	fpBits, err := cuckooFingerprintBits(n, fpRate)
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
	return &Cuckoo{
		laneTable:  newLaneTable(1<<logBuckets, fpBits, false, 1<<logBuckets-1, cuckooSeed, errCuckooFull),
		logBuckets: logBuckets,
	}
}

// CopiesHash counts the stored copies of h's fingerprint in h's two
// buckets. Keys with the same fingerprint and the same first bucket share
// both buckets (the partner is a function of bucket and fingerprint alone),
// so the count is that of h's whole alias class (see AliasHash): a caller
// keeping a multiset can bound the copies per class and count the rest
// elsewhere, since a bucket pair holds at most 8 copies of one fingerprint.
func (c *Cuckoo) CopiesHash(h uint64) int {
	if c.emptyTable() {
		return 0
	}
	fp, i1 := c.derive(h)
	i2 := c.alt(i1, fp)
	b1, b2 := c.bucket(i1), uint64(0)
	if i2 != i1 {
		b2 = c.bucket(i2)
	}
	// Most keys have no copy: one SWAR test per bucket says so without
	// counting lane by lane (a multiset's every add asks first).
	if c.matchLanes(b1, fp)|c.matchLanes(b2, fp) == 0 {
		return 0
	}
	return c.countLanes(b1, fp) + c.countLanes(b2, fp)
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

// MarshalBinary encodes the filter (docs/format.md, "Cuckoo filter").
func (c *Cuckoo) MarshalBinary() ([]byte, error) {
	if c.fpBits == 0 {
		return nil, invalidf("filters: Cuckoo.MarshalBinary: zero-value filter")
	}
	w := newDynBody(28+8*len(c.slots.words), uint8(c.fpBits), cuckooSlots, uint8(c.logBuckets))
	c.appendState(&w)
	return cuckooCodec.seal(w.buf), nil
}

// EncodedLen is len(MarshalBinary()), computed without encoding: a
// caller reporting the filter's memory as it changes need not copy the
// table twice each time.
func (c *Cuckoo) EncodedLen() int {
	// Four shape bytes, then count, rng and the word count (appendState).
	return envelopeHeaderSize + 4 + 3*8 + 8*len(c.slots.words) + envelopeTrailer
}

// UnmarshalBinary replaces c with the filter encoded in data. On error c is
// unchanged.
func (c *Cuckoo) UnmarshalBinary(data []byte) error {
	return cuckooCodec.unmarshal(c, data)
}

var cuckooCodec = newDynCodec(TypeCuckoo, cuckooVersion, "cuckoo", 3, decodeCuckoo)

// decodeCuckoo checks every field before building the filter, including
// that the stored count equals the number of occupied slots and that no bit
// outside the table is set, so a decoded filter is one that Add and Remove
// could have produced (F3).
func decodeCuckoo(h dynHeader, r *bodyReader) (*Cuckoo, error) {
	fpBits, slots, logBuckets := uint(h[0]), h[1], uint(h[2])
	st := readWalkState(r)
	r.check(fpBits == 8 || fpBits == 12 || fpBits == 16, "cuckoo: fingerprint width %d is not 8, 12 or 16", fpBits)
	r.check(slots == cuckooSlots, "cuckoo: %d slots per bucket, want %d", slots, cuckooSlots)
	r.check(logBuckets <= cuckooMaxLogBuckets, "cuckoo: 2^%d buckets is too many", logBuckets)
	if r.fail != nil {
		return nil, fmt.Errorf("filters: %w", r.fail)
	}
	words, err := readDynWords(r, "cuckoo", st.nWords, packedWords(1<<logBuckets, cuckooSlots*fpBits))
	if err != nil {
		return nil, err
	}
	c := newCuckooShape(logBuckets, fpBits)
	if err := c.load("cuckoo", words, st.count, st.rng); err != nil {
		return nil, err
	}
	return c, nil
}

// Compile-time check that Cuckoo is a Filter.
var _ Filter = (*Cuckoo)(nil)
