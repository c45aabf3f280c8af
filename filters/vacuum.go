package filters

import (
	"fmt"
	"math"
)

// Vacuum is a vacuum filter (Wang, Zhou, Shi and Qian, "Vacuum Filters: More
// Space-Efficient and Faster Replacement for Bloom and Cuckoo Filters", VLDB
// 2019): a cuckoo filter whose table is cut into chunks of L buckets, L a
// power of two, with both candidate buckets of a key in the same chunk. The
// alternate bucket is i XOR (hash(fp) mod L), which stays inside the aligned
// chunk, so the table needs only be a multiple of L buckets instead of a
// power of two: a filter for 1.1M keys is not rounded up to 2^21 slots.
//
// Layout: as Cuckoo, buckets of four w-bit slots (w = 4..16, any width),
// bucket i one 4w-bit entry of a packedArray; fingerprint 0 marks an empty
// slot.
//
// Deviation from the paper: the paper gives the items four different
// alternate ranges (by fingerprint) so that most pairs of buckets are close
// together in memory; here every key uses the full chunk. One range keeps
// the code and the format simple; the chunk size is chosen by a
// balls-into-bins bound so the most loaded chunk still fits (see
// vacuumShape).
//
// Remove must only be called for keys known to be members (see the package
// doc). A Vacuum is not safe for concurrent mutation; a filter that is no
// longer mutated may be queried from many goroutines.
//
// The zero value (a Vacuum no constructor or UnmarshalBinary made) is an
// empty filter with no slots: queries answer "absent", Remove finds nothing,
// Len and LoadFactor are 0, Add returns an error wrapping ErrFull (it has
// nowhere to put a key) and MarshalBinary one wrapping ErrInvalidArgument
// (it has no encoding). A declared-but-unmade filter thus fails loudly on
// its first Add instead of indexing an empty table.
type Vacuum struct {
	laneTable        // altMask is L - 1: the partner stays in the chunk
	logChunk  uint   // L = 2^logChunk buckets per chunk
	chunks    uint64 // the table has chunks · L buckets (laneTable.slots.n)
}

const (
	vacuumSlots = laneSlots // see laneSlots
	// vacuumChunkLoad is the load one chunk is assumed to fill to; Fan et al. report 95.5% achievable
	// load for 4-slot buckets, and our cuckoo filter reached 0.957-0.961
	// (docs/filters.md, "Cuckoo and quotient against
	// github.com/seiflotfy/cuckoofilter").
	vacuumChunkLoad = 0.955
	// vacuumSigmas is the safety margin on the most loaded chunk, in
	// standard deviations of a Poisson chunk load: the maximum of k
	// Poisson(μ) chunk loads exceeds μ by about sqrt(2 ln k) σ, which is
	// below 3.5 for k < 400 chunks; 3.5 keeps the constructor's promise (n
	// keys fit) with margin. Measured in TestVacuumHoldsN.
	vacuumSigmas = 3.5
	// vacuumMaxLogChunk bounds L at 2^16 buckets: larger chunks only waste
	// more when rounding the table up to a multiple of L.
	vacuumMaxLogChunk = 16
	// vacuumMaxBuckets keeps bucket indexes within reduce32 of the low 32
	// hash bits, disjoint from the high bits the fingerprint comes from.
	vacuumMaxBuckets = 1 << 32
	vacuumVersion    = 1
	vacuumSeed       = 0x5eed_7ac0_5eed_7ac0
)

var errVacuumFull = laneFull("vacuum")

// vacuumFingerprintBits checks the sizing and takes the cuckoo bound
// (laneFingerprintBits; Wang et al. use the same), but any width from 4 to
// 16 instead of 8/12/16 only.
func vacuumFingerprintBits(n int, fpRate float64) (uint, error) {
	f, err := laneFingerprintBits("vacuum", n, fpRate)
	if err != nil {
		return 0, err
	}
	return max(f, 4), nil
}

// vacuumShape chooses the chunk size L and the chunk count C for n keys:
// for every L = 2^0 .. 2^16 it takes the fewest chunks for which the most
// loaded chunk, estimated as μ + 3.5·sqrt(μ) keys with μ = n/C, stays within
// 95.5% of the chunk's 4L slots, and keeps the L giving the smallest table
// (ties: the larger L, which balances better). The table is then at most a
// few percent above n/0.955 slots for any n, where a power of two costs up
// to twice that. The search for C starts two below the closed-form
// solution of μ + 3.5·sqrt(μ) = 0.955·4L, so it takes a few steps whatever
// n is, and gives up on an L whose table would exceed 2^32 buckets.
func vacuumShape(n int) (logChunk uint, chunks uint64) {
	best := uint64(math.MaxUint64)
	for lg := uint(0); lg <= vacuumMaxLogChunk; lg++ {
		l := float64(uint64(1) << lg)
		limit := vacuumChunkLoad * vacuumSlots * l
		c := math.Max(1, math.Ceil(float64(n)/limit))
		// sqrt(μ) ≤ x solves μ + s·sqrt(μ) ≤ limit; the condition below is
		// monotone in c, so starting anywhere at or below its first c
		// finds that c.
		x := (math.Sqrt(vacuumSigmas*vacuumSigmas+4*limit) - vacuumSigmas) / 2
		c = math.Max(c, math.Ceil(float64(n)/(x*x))-2)
		for c*l <= float64(vacuumMaxBuckets) {
			mu := float64(n) / c
			if mu+vacuumSigmas*math.Sqrt(mu) <= vacuumChunkLoad*vacuumSlots*l {
				break
			}
			c++
		}
		if c*l > float64(vacuumMaxBuckets) {
			continue
		}
		if m := uint64(c) << lg; m <= best {
			best, logChunk, chunks = m, lg, uint64(c)
		}
	}
	return logChunk, chunks
}

// NewVacuum returns an empty vacuum filter that holds n keys at
// false-positive rate fpRate: fingerprints of ceil(log2(8/fpRate)) bits
// (4..16; rates below 8/2^16 ≈ 1.2e-4 are refused with ErrInvalidArgument)
// and the smallest table of whole chunks that keeps n keys within reach of
// the 95.5% load a 4-slot cuckoo table fills to.
func NewVacuum(n int, fpRate float64) (*Vacuum, error) {
	fpBits, err := vacuumFingerprintBits(n, fpRate)
	if err != nil {
		return nil, err
	}
	logChunk, chunks := vacuumShape(n)
	if chunks == 0 {
		return nil, invalidf("vacuum: n = %d needs more than 2^32 buckets", n)
	}
	return newVacuumShape(logChunk, chunks, fpBits), nil
}

func newVacuumShape(logChunk uint, chunks uint64, fpBits uint) *Vacuum {
	m := chunks << logChunk
	return &Vacuum{
		laneTable: newLaneTable(m, fpBits, true, 1<<logChunk-1, vacuumSeed, errVacuumFull),
		logChunk:  logChunk,
		chunks:    chunks,
	}
}

// ChunkBuckets returns L, the number of buckets per chunk.
func (v *Vacuum) ChunkBuckets() int { return 1 << v.logChunk }

// MarshalBinary encodes the filter (docs/format.md, "Vacuum filter").
func (v *Vacuum) MarshalBinary() ([]byte, error) {
	if v.fpBits == 0 {
		return nil, invalidf("filters: Vacuum.MarshalBinary: zero-value filter")
	}
	w := newDynBody(36+8*len(v.slots.words), uint8(v.fpBits), vacuumSlots, uint8(v.logChunk))
	w.u64(v.chunks)
	v.appendState(&w)
	return vacuumCodec.seal(w.buf), nil
}

// UnmarshalBinary replaces v with the filter encoded in data. On error v is
// unchanged.
func (v *Vacuum) UnmarshalBinary(data []byte) error {
	return vacuumCodec.unmarshal(v, data)
}

var vacuumCodec = newDynCodec(TypeVacuum, vacuumVersion, "vacuum", 3, decodeVacuum)

// decodeVacuum checks the shape before allocating, then that no bit outside
// the table is set and that the count equals the occupied slots, so every
// accepted filter is one Add and Remove could have produced (F3).
func decodeVacuum(h dynHeader, r *bodyReader) (*Vacuum, error) {
	fpBits, slots, logChunk := uint(h[0]), h[1], uint(h[2])
	chunks := r.u64("chunk count")
	st := readWalkState(r)
	r.check(fpBits >= 4 && fpBits <= 16, "vacuum: fingerprint width %d outside 4..16", fpBits)
	r.check(slots == vacuumSlots, "vacuum: %d slots per bucket, want %d", slots, vacuumSlots)
	r.check(logChunk <= vacuumMaxLogChunk, "vacuum: chunks of 2^%d buckets is too many", logChunk)
	r.check(chunks >= 1 && chunks <= vacuumMaxBuckets>>logChunk,
		"vacuum: %d chunks of 2^%d buckets", chunks, logChunk)
	if r.fail != nil {
		return nil, fmt.Errorf("filters: %w", r.fail)
	}
	words, err := readDynWords(r, "vacuum", st.nWords, packedWords(chunks<<logChunk, vacuumSlots*fpBits))
	if err != nil {
		return nil, err
	}
	v := newVacuumShape(logChunk, chunks, fpBits)
	if err := v.load("vacuum", words, st.count, st.rng); err != nil {
		return nil, err
	}
	return v, nil
}

var _ Filter = (*Vacuum)(nil)
