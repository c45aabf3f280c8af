package filters

import (
	"fmt"
	"math"
	"math/bits"
	"slices"
)

// Limits shared by the Bloom family. They keep sizes, probe loops and
// decoders bounded; no sensible configuration comes near them.
const (
	// maxBloomBits caps a Bloom-family bit (or counter) array at 2^40 entries
	// (128 GiB of bits), far above any table filter, and keeps every position
	// arithmetic comfortably inside 64 bits.
	maxBloomBits = 1 << 40
	// maxBloomK caps the number of probes. The optimal k is -log2(fpRate), and
	// the smallest positive float64 (~4.9e-324) gives k = 1075, so every valid
	// fpRate fits; the cap bounds the work a hostile encoding can demand.
	maxBloomK = 2048
)

// bloomVersion is the body format version of a standard Bloom encoding.
//
//	1: m (u64, prime), k (u32), ceil(m/64) bit words (u64 LE).
const bloomVersion = 1

// OptimalBloomParams returns the classic sizing of a standard Bloom filter for
// n keys at false-positive rate fpRate:
//
//	m = ceil(-n·ln p / ln²2)    k = max(1, round(m/n · ln 2))
//
// It returns (0, 0) when the arguments are out of range (n <= 0, fpRate
// outside (0, 1)) or m would reach 2^63. NewBloom rounds m up to the
// next prime (see bloomProbes) and keeps k.
func OptimalBloomParams(n int, fpRate float64) (bits uint64, k int) {
	if checkSizing(n, fpRate) != nil {
		return 0, 0
	}
	m := math.Ceil(-float64(n) * math.Log(fpRate) / (math.Ln2 * math.Ln2))
	if !(m < 1<<63) { // also catches +Inf
		return 0, 0
	}
	if m < 1 {
		m = 1
	}
	bits = uint64(m)
	k = int(math.Round(float64(bits) / float64(n) * math.Ln2))
	if k < 1 {
		k = 1
	}
	return bits, k
}

// Bloom is a standard Bloom filter: m bits packed into 64-bit words (bit i in
// word i>>6 at position i&63) and k probes per key, all derived from the one
// 64-bit Hash of the key by Kirsch–Mitzenmacher double hashing.
//
// m is always prime, which makes every key's k probes distinct (see
// bloomProbes). The zero value answers "maybe" for every key and cannot be
// marshalled; build one with NewBloom or UnmarshalBinary. Not safe for
// concurrent mutation (package doc, "Concurrency").
type Bloom struct {
	bits       bitArray
	bloomShape // m is the number of bits, equal to bits.len()
}

// bloomShape is what every filter on the Bloom probe sequence (Bloom,
// CountingBloom) is sized by and encodes first: m cells (bits or
// counters), m prime (bloomProbes needs it), and k probes per key.
type bloomShape struct {
	m uint64
	k int
}

// K returns the number of probes per key.
func (s *bloomShape) K() int { return s.k }

var (
	_ Filter = (*Bloom)(nil)
	_ Filter = (*BlockedBloom)(nil)
	_ Filter = (*CountingBloom)(nil)
	_ Filter = (*ScalableBloom)(nil)
)

// NewBloom returns an empty standard Bloom filter sized by OptimalBloomParams
// for n keys at false-positive rate fpRate, with m rounded up to a prime. At n
// keys its measured false-positive rate stays within 1.2x of fpRate
// (invariant F4; TestBloomFPRate).
func NewBloom(n int, fpRate float64) (*Bloom, error) {
	m, k, err := bloomSizing(n, fpRate)
	if err != nil {
		return nil, fmt.Errorf("filters: NewBloom: %w", err)
	}
	return newBloomMK(m, k), nil
}

// bloomSizing checks the arguments (checkSizing) and returns
// OptimalBloomParams with m rounded up to a prime and the family's limits
// enforced; Bloom and CountingBloom share it.
func bloomSizing(n int, fpRate float64) (m uint64, k int, err error) {
	if err := checkSizing(n, fpRate); err != nil {
		return 0, 0, err
	}
	m, k = OptimalBloomParams(n, fpRate)
	if m == 0 || m > maxBloomBits {
		return 0, 0, invalidf("n=%d at fpRate=%v needs more than %d bits", n, fpRate, uint64(maxBloomBits))
	}
	if k > maxBloomK {
		return 0, 0, invalidf("fpRate=%v needs %d probes, more than %d", fpRate, k, maxBloomK)
	}
	return bloomPrimeAtLeast(m), k, nil
}

// newBloomMK builds an empty filter with exactly m bits (prime) and k probes.
func newBloomMK(m uint64, k int) *Bloom {
	return &Bloom{bits: newBitArray(m), bloomShape: bloomShape{m: m, k: k}}
}

// bloomPrimeAtLeast returns the smallest prime >= max(m, 2). Prime gaps below
// 2^40 are under 1000, so the loop is short.
func bloomPrimeAtLeast(m uint64) uint64 {
	if m <= 2 {
		return 2
	}
	if m%2 == 0 {
		m++
	}
	for !bloomIsPrime(m) {
		m += 2
	}
	return m
}

// bloomIsPrime is a deterministic Miller–Rabin test. The first twelve primes
// as bases decide every n < 3.3·10^24 (Sorenson & Webster, 2015), so every
// uint64; the first six suffice below 3.4·10^12 > 2^40 (Jaeschke, 1993),
// which covers every m a filter may have. (big.Int.ProbablyPrime is exact
// too, but seeds a math/rand source per call: ~10x slower, and decoders call
// this on untrusted input.)
func bloomIsPrime(n uint64) bool {
	bases := [...]uint64{2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37}
	if n < 2 {
		return false
	}
	for _, p := range bases {
		if n%p == 0 {
			return n == p
		}
	}
	d, s := n-1, 0
	for d%2 == 0 {
		d, s = d/2, s+1
	}
	use := bases[:]
	if n < 3_474_749_660_383 {
		use = bases[:6]
	}
	mulmod := func(a, b uint64) uint64 {
		hi, lo := bits.Mul64(a, b)
		return bits.Rem64(hi, lo, n)
	}
next:
	for _, a := range use {
		x := uint64(1)
		for base, e := a, d; e > 0; e >>= 1 { // x = a^d mod n
			if e&1 == 1 {
				x = mulmod(x, base)
			}
			base = mulmod(base, base)
		}
		if x == 1 || x == n-1 {
			continue
		}
		for r := 1; r < s; r++ {
			if x = mulmod(x, x); x == n-1 {
				continue next
			}
		}
		return false
	}
	return true
}

// bloomProbes returns the first probe and the stride of the double-hashing
// sequence p_i = (p0 + i·d) mod m for hash h over a table of m entries.
//
// Why this shape:
//   - Both values come from h alone (no per-probe rehashing): p0 from its
//     high bits, d from its low half rotated to the top, so the two are
//     driven by disjoint hash bits whenever m < 2^32.
//   - Reduction is Lemire's multiply-shift (reduce64), not modulo: one
//     multiply each for p0 and d, and later probes only add d and subtract m
//     at most once, so the hot loop has no division at all. (bits-and-blooms
//     pays a 64-bit modulo per probe.)
//   - d lies in [1, m-1], so the degenerate h2 ≡ 0 (mod m) case, where every
//     probe lands on one bit, cannot occur; and because m is prime, d is a
//     generator of Z_m, so p_0..p_{k-1} are pairwise distinct whenever k <= m
//     (Kirsch & Mitzenmacher, "Less Hashing, Same Performance", 2006, analyse
//     exactly this scheme over a prime modulus). Multiply-shift applied to
//     h1 + i·h2 per probe could not promise distinct probes: nearby values
//     of h1 + i·h2 fall into the same output bucket.
//
// Requires m >= 2.
func bloomProbes(h, m uint64) (p0, d uint64) {
	return reduce64(h, m), 1 + reduce64(bits.RotateLeft64(h, 32), m-1)
}

// bloomNext returns the probe after p: p+d reduced mod m. One conditional
// subtraction is enough because p and d are both below m. Every filter on
// this probe sequence (Bloom, CountingBloom) steps through it here.
func bloomNext(p, d, m uint64) uint64 {
	p += d
	if p >= m {
		p -= m
	}
	return p
}

// Add inserts key.
func (b *Bloom) Add(key []byte) { b.AddHash(Hash(key)) }

// AddHash inserts the key whose Hash is h.
func (b *Bloom) AddHash(h uint64) {
	m := b.m
	p, d := bloomProbes(h, m)
	w := b.bits.words
	for i := b.k; i > 0; i-- {
		w[p>>6] |= 1 << (p & 63)
		p = bloomNext(p, d, m)
	}
}

// MayContain reports false only if key was definitely never added.
func (b *Bloom) MayContain(key []byte) bool { return b.MayContainHash(Hash(key)) }

// MayContainHash is MayContain for a key whose Hash is h. It stops at the
// first clear bit, so an absent key costs about two probes at design load.
func (b *Bloom) MayContainHash(h uint64) bool {
	m := b.m
	p, d := bloomProbes(h, m)
	w := b.bits.words
	for i := b.k; i > 0; i-- {
		if w[p>>6]&(1<<(p&63)) == 0 {
			return false
		}
		p = bloomNext(p, d, m)
	}
	return true
}

// Bits returns m, the number of bits (a prime at least OptimalBloomParams' m).
func (b *Bloom) Bits() uint64 { return b.m }

// FillRatio returns the fraction of bits set, by hardware popcount. It is 0
// for an empty filter and never decreases as keys are added.
func (b *Bloom) FillRatio() float64 {
	if b.m == 0 {
		return 0
	}
	return float64(b.bits.count()) / float64(b.m)
}

// EstimatedFPRate returns FillRatio()^k: the probability that a key never
// added finds all k of its probe bits set in the filter as it is now. Unlike
// the textbook (1-e^{-kn/m})^k it needs no key count and reflects the actual
// bits, including any overfilling.
func (b *Bloom) EstimatedFPRate() float64 {
	return math.Pow(b.FillRatio(), float64(b.k))
}

// MarshalBinary returns the filter's encoding (docs/format.md, "Bloom").
func (b *Bloom) MarshalBinary() ([]byte, error) {
	if b.m == 0 {
		return nil, invalidf("filters: Bloom.MarshalBinary: zero-value filter")
	}
	var w bodyWriter
	b.appendBody(&w)
	return bloomCodec.seal(w.buf), nil
}

// appendBody writes m, k and the bit words; ScalableBloom reuses it per stage.
func (b *Bloom) appendBody(w *bodyWriter) {
	w.buf = slices.Grow(w.buf, 12+8*len(b.bits.words))
	b.writeShape(w)
	w.u64s(b.bits.words)
}

// UnmarshalBinary replaces b with the filter encoded in data. On error b is
// unchanged and the error wraps ErrCorrupt.
func (b *Bloom) UnmarshalBinary(data []byte) error {
	return bloomCodec.unmarshal(b, data)
}

var bloomCodec = newCodec(TypeBloom, bloomVersion, "bloom", decodeBloom)

func decodeBloom(r *bodyReader) (*Bloom, error) {
	b, err := readBloomBody(r)
	if err != nil {
		return nil, err
	}
	if err := r.finish(); err != nil {
		return nil, fmt.Errorf("bloom: %w", err)
	}
	return b, nil
}

// readBloomBody decodes the fields appendBody wrote, checking every parameter
// an encoder could not have produced (invariant F3). The cheap length checks
// run before the primality test so garbage is rejected quickly.
func readBloomBody(r *bodyReader) (*Bloom, error) {
	s := readBloomShape(r, "bloom", "bit")
	if r.fail != nil {
		return nil, r.fail
	}
	words := r.u64s((s.m+63)/64, "bloom bit words")
	if r.fail != nil {
		return nil, r.fail
	}
	r.check(bloomIsPrime(s.m), "bloom: bit count %d is not prime", s.m)
	ba := bitArray{words: words, n: s.m}
	r.check(ba.tailClean(), "bloom: bits set past bit count %d", s.m)
	if r.fail != nil {
		return nil, r.fail
	}
	return &Bloom{bits: ba, bloomShape: s}, nil
}

// writeShape writes m and k, which every body on the Bloom probe sequence
// starts with.
func (s *bloomShape) writeShape(w *bodyWriter) {
	w.u64(s.m)
	w.u32(uint32(s.k))
}

// readBloomShape reads what writeShape wrote and checks the ranges an
// encoder keeps to (F3); failures are recorded in r. name is the filter
// and unit what m counts ("bit", "counter"), for the messages. Whether m
// is prime is left to the caller, which tests it after the cheaper checks.
func readBloomShape(r *bodyReader, name, unit string) bloomShape {
	m := r.u64(name + " " + unit + " count")
	k32 := r.u32(name + " probe count")
	r.check(m >= 2 && m <= maxBloomBits, "%s: %s count %d outside [2, 2^40]", name, unit, m)
	r.check(k32 >= 1 && k32 <= maxBloomK && uint64(k32) < m,
		"%s: probe count %d outside [1, min(%d, m-1)] for m=%d", name, k32, maxBloomK, m)
	return bloomShape{m: m, k: int(k32)}
}
