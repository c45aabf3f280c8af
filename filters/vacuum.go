package filters

import (
	"fmt"
	"math"
	"math/bits"
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
type Vacuum struct {
	slots     packedArray // one entry per bucket, 4 lanes of fpBits each
	fpBits    uint
	fpMax     uint64 // fingerprints are 1..fpMax
	lanesLo   uint64 // bit 0 of every lane
	lanesHi   uint64 // top bit of every lane
	logChunk  uint   // L = 2^logChunk buckets per chunk
	chunkMask uint64 // L - 1
	chunks    uint64
	buckets   uint64 // chunks · L
	count     uint64
	// rng drives the random walk; stored and restored as in Cuckoo so that
	// a failed Add leaves the filter exactly as it was (F2).
	rng  uint64
	undo []cuckooUndo
}

const (
	vacuumSlots = 4
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
	vacuumMaxKicks   = 500
	vacuumVersion    = 1
	vacuumSeed       = 0x5eed_7ac0_5eed_7ac0
)

var errVacuumFull = fmt.Errorf("filters: vacuum: no free slot within %d displacements: %w",
	vacuumMaxKicks, ErrFull)

// vacuumFingerprintBits is the cuckoo bound ε ≤ 2b/2^w with b = 4 (Fan et
// al.; Wang et al. use the same), w = ceil(log2(8/ε)), but any width from 4
// to 16 instead of 8/12/16 only.
func vacuumFingerprintBits(fpRate float64) (uint, error) {
	f := math.Ceil(math.Log2(2 * vacuumSlots / fpRate))
	if f > 16 {
		return 0, invalidf("vacuum: false-positive rate %v needs %v-bit fingerprints; the widest is 16 (rate >= %.3g)",
			fpRate, f, 2*vacuumSlots/math.Exp2(16))
	}
	return uint(max(f, 4)), nil
}

// vacuumShape chooses the chunk size L and the chunk count C for n keys:
// for every L = 2^0 .. 2^16 it takes the fewest chunks for which the most
// loaded chunk, estimated as μ + 3.5·sqrt(μ) keys with μ = n/C, stays within
// 95.5% of the chunk's 4L slots, and keeps the L giving the smallest table
// (ties: the larger L, which balances better). The table is then at most a
// few percent above n/0.955 slots for any n, where a power of two costs up
// to twice that.
func vacuumShape(n int) (logChunk uint, chunks uint64) {
	best := uint64(math.MaxUint64)
	for lg := uint(0); lg <= vacuumMaxLogChunk; lg++ {
		l := float64(uint64(1) << lg)
		c := math.Max(1, math.Ceil(float64(n)/(vacuumSlots*vacuumChunkLoad*l)))
		for {
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
	if err := checkSizing(n, fpRate); err != nil {
		return nil, err
	}
	fpBits, err := vacuumFingerprintBits(fpRate)
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
	lo := uint64(0)
	for j := uint(0); j < vacuumSlots; j++ {
		lo |= 1 << (j * fpBits)
	}
	m := chunks << logChunk
	return &Vacuum{
		slots:     newPackedArray(m, vacuumSlots*fpBits),
		fpBits:    fpBits,
		fpMax:     1<<fpBits - 1,
		lanesLo:   lo,
		lanesHi:   lo << (fpBits - 1),
		logChunk:  logChunk,
		chunkMask: 1<<logChunk - 1,
		chunks:    chunks,
		buckets:   m,
		rng:       vacuumSeed,
	}
}

// derive maps the high 32 hash bits onto fingerprints 1..fpMax and the low
// 32 onto a first bucket in [0, buckets) by multiply-shift (reduce32's
// method, widened so that exactly 2^32 buckets also works).
func (v *Vacuum) derive(h uint64) (fp, i1 uint64) {
	fp = (h>>32)*v.fpMax>>32 + 1
	return fp, uint64(uint32(h)) * v.buckets >> 32
}

// alt XORs i with a hash of fp below L: an involution that keeps i's chunk
// because chunks are aligned multiples of L (Wang et al. §4.2).
func (v *Vacuum) alt(i, fp uint64) uint64 {
	return i ^ (fp*0x9e3779b97f4a7c15)>>32&v.chunkMask
}

// bucket reads bucket i with two unconditional word loads (packedArray keeps
// a spare word; a shift by 64 is 0 in Go).
func (v *Vacuum) bucket(i uint64) uint64 {
	bit := i * uint64(v.slots.width)
	w, off := bit>>6, bit&63
	return (v.slots.words[w]>>off | v.slots.words[w+1]<<(64-off)) & v.slots.mask
}

func (v *Vacuum) setBucket(i, b uint64) {
	bit := i * uint64(v.slots.width)
	w, off := bit>>6, bit&63
	m := v.slots.mask
	v.slots.words[w] = v.slots.words[w]&^(m<<off) | b<<off
	v.slots.words[w+1] = v.slots.words[w+1]&^(m>>(64-off)) | b>>(64-off)
}

// matchLanes is Cuckoo.matchLanes: nonzero iff a lane of b equals fp, with
// the top bit of the lowest such lane set.
func (v *Vacuum) matchLanes(b, fp uint64) uint64 {
	x := b ^ fp*v.lanesLo
	return (x - v.lanesLo) &^ x & v.lanesHi
}

func (v *Vacuum) laneOf(m uint64) uint {
	return uint(bits.TrailingZeros64(m)) + 1 - v.fpBits
}

// MayContain reports whether key may have been added.
func (v *Vacuum) MayContain(key []byte) bool { return v.MayContainHash(Hash(key)) }

// MayContainHash is MayContain for a key whose Hash the caller holds. Both
// buckets are loaded before either is tested, as in Cuckoo.
func (v *Vacuum) MayContainHash(h uint64) bool {
	fp, i1 := v.derive(h)
	b1, b2 := v.bucket(i1), v.bucket(v.alt(i1, fp))
	return v.matchLanes(b1, fp)|v.matchLanes(b2, fp) != 0
}

func (v *Vacuum) tryPut(i, fp uint64) bool {
	b := v.bucket(i)
	m := v.matchLanes(b, 0)
	if m == 0 {
		return false
	}
	v.setBucket(i, b|fp<<v.laneOf(m))
	return true
}

// Add inserts key. It returns an error wrapping ErrFull, and leaves the
// filter exactly as it was, if no free slot is reachable within 500
// displacements.
func (v *Vacuum) Add(key []byte) error { return v.AddHash(Hash(key)) }

// AddHash is Add for a key whose Hash the caller holds.
func (v *Vacuum) AddHash(h uint64) error {
	fp, i1 := v.derive(h)
	if v.tryPut(i1, fp) {
		v.count++
		return nil
	}
	i2 := v.alt(i1, fp)
	if v.tryPut(i2, fp) {
		v.count++
		return nil
	}
	return v.walk(i1, i2, fp)
}

func (v *Vacuum) next() uint64 {
	v.rng += 0x9e3779b97f4a7c15
	return mix64(v.rng)
}

// walk is Cuckoo.walk: a random walk of displacements, every overwritten
// bucket logged and restored (with the generator) if it gives up (F1, F2).
func (v *Vacuum) walk(i1, i2, fp uint64) error {
	savedRNG := v.rng
	v.undo = v.undo[:0]
	r := v.next()
	i := i1
	if r&1 != 0 {
		i = i2
	}
	for k := 0; k < vacuumMaxKicks; k++ {
		if k > 0 && k%30 == 0 {
			r = v.next()
		}
		lane := uint((r>>(1+2*(k%30)))&3) * v.fpBits
		b := v.bucket(i)
		v.undo = append(v.undo, cuckooUndo{bucket: i, old: b})
		victim := b >> lane & v.fpMax
		v.setBucket(i, b&^(v.fpMax<<lane)|fp<<lane)
		fp = victim
		i = v.alt(i, fp)
		if v.tryPut(i, fp) {
			v.count++
			return nil
		}
	}
	for k := len(v.undo) - 1; k >= 0; k-- {
		v.setBucket(v.undo[k].bucket, v.undo[k].old)
	}
	v.rng = savedRNG
	return errVacuumFull
}

// Remove deletes one copy of key's fingerprint and reports whether it found
// one. Only remove keys known to be members.
func (v *Vacuum) Remove(key []byte) bool { return v.RemoveHash(Hash(key)) }

// RemoveHash is Remove for a key whose Hash the caller holds.
func (v *Vacuum) RemoveHash(h uint64) bool {
	fp, i1 := v.derive(h)
	if v.clear(i1, fp) || v.clear(v.alt(i1, fp), fp) {
		v.count--
		return true
	}
	return false
}

func (v *Vacuum) clear(i, fp uint64) bool {
	b := v.bucket(i)
	m := v.matchLanes(b, fp)
	if m == 0 {
		return false
	}
	v.setBucket(i, b&^(v.fpMax<<v.laneOf(m)))
	return true
}

// Len returns the number of fingerprints stored.
func (v *Vacuum) Len() int { return int(v.count) }

// Cap returns the number of slots, the hard upper bound on Len.
func (v *Vacuum) Cap() int { return int(v.buckets) * vacuumSlots }

// LoadFactor returns Len()/Cap().
func (v *Vacuum) LoadFactor() float64 { return float64(v.count) / float64(v.Cap()) }

// FingerprintBits returns the fingerprint width.
func (v *Vacuum) FingerprintBits() int { return int(v.fpBits) }

// ChunkBuckets returns L, the number of buckets per chunk.
func (v *Vacuum) ChunkBuckets() int { return 1 << v.logChunk }

// MarshalBinary encodes the filter (docs/format.md, "Vacuum filter").
func (v *Vacuum) MarshalBinary() ([]byte, error) {
	var w bodyWriter
	w.buf = make([]byte, 0, 36+8*len(v.slots.words))
	w.u8(uint8(v.fpBits))
	w.u8(vacuumSlots)
	w.u8(uint8(v.logChunk))
	w.u8(0)
	w.u64(v.chunks)
	w.u64(v.count)
	w.u64(v.rng)
	w.u64(uint64(len(v.slots.words)))
	w.u64s(v.slots.words)
	return vacuumCodec.seal(w.buf), nil
}

// UnmarshalBinary replaces v with the filter encoded in data. On error v is
// unchanged.
func (v *Vacuum) UnmarshalBinary(data []byte) error {
	return vacuumCodec.unmarshal(v, data)
}

var vacuumCodec = newCodec(TypeVacuum, vacuumVersion, "vacuum", decodeVacuum)

// decodeVacuum checks the shape before allocating, then that no bit outside
// the table is set and that the count equals the occupied slots, so every
// accepted filter is one Add and Remove could have produced (F3).
func decodeVacuum(body []byte) (*Vacuum, error) {
	r := bodyReader{buf: body}
	fpBits := uint(r.u8("fingerprint bits"))
	slots := r.u8("slots per bucket")
	logChunk := uint(r.u8("log2 chunk buckets"))
	reserved := r.u8("reserved")
	chunks := r.u64("chunk count")
	count := r.u64("count")
	rng := r.u64("random state")
	nWords := r.u64("word count")
	r.check(fpBits >= 4 && fpBits <= 16, "vacuum: fingerprint width %d outside 4..16", fpBits)
	r.check(slots == vacuumSlots, "vacuum: %d slots per bucket, want %d", slots, vacuumSlots)
	r.check(logChunk <= vacuumMaxLogChunk, "vacuum: chunks of 2^%d buckets is too many", logChunk)
	r.check(reserved == 0, "vacuum: reserved byte is %d", reserved)
	r.check(chunks >= 1 && chunks <= vacuumMaxBuckets>>logChunk,
		"vacuum: %d chunks of 2^%d buckets", chunks, logChunk)
	if r.fail != nil {
		return nil, fmt.Errorf("filters: %w", r.fail)
	}
	want := packedWords(chunks<<logChunk, vacuumSlots*fpBits)
	r.check(nWords == want, "vacuum: %d words, shape needs %d", nWords, want)
	if r.fail != nil {
		return nil, fmt.Errorf("filters: %w", r.fail)
	}
	words := r.u64s(nWords, "table")
	if err := r.finish(); err != nil {
		return nil, fmt.Errorf("filters: %w", err)
	}
	v := newVacuumShape(logChunk, chunks, fpBits)
	copy(v.slots.words, words)
	v.rng = rng
	used := v.slots.n * uint64(v.slots.width)
	for k := used / 64; k < uint64(len(words)); k++ {
		w := words[k]
		if k == used/64 {
			w >>= used % 64
		}
		if w != 0 {
			return nil, corruptf("vacuum: bits set past the end of the table (word %d)", k)
		}
	}
	var occupied uint64
	for i := uint64(0); i < v.buckets; i++ {
		b := v.bucket(i)
		for lane := uint(0); lane < vacuumSlots*fpBits; lane += fpBits {
			if b>>lane&v.fpMax != 0 {
				occupied++
			}
		}
	}
	if occupied != count {
		return nil, corruptf("vacuum: header counts %d keys, table holds %d", count, occupied)
	}
	v.count = count
	return v, nil
}

var _ Filter = (*Vacuum)(nil)
