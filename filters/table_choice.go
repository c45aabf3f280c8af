package filters

import (
	"fmt"
	"math"
)

// TableChoice is one concrete filter for a table of a known key count: the
// family and width ChooseTableFilter found best within a bit budget, with
// the size and false-positive rate it predicts.
type TableChoice struct {
	Type Type
	// Fuse is the arity and width of a TypeBinaryFuse choice.
	Fuse FuseOptions
	// RibbonBits is the result width of a TypeRibbon choice.
	RibbonBits int
	// BloomBits and BloomProbes size a TypeBloom choice: m bits, k probes.
	BloomBits   uint64
	BloomProbes int
	// PayloadBits is the predicted size of the filter's payload (slots,
	// solution words or bit array), without the fixed header every
	// encoding carries (TableFilterHeaderBytes bounds it).
	PayloadBits uint64
	// FPRate is the predicted false-positive rate.
	FPRate float64
	// ProbeNanos is the expected cost of one query (see probeNanos).
	ProbeNanos float64
}

// TableFilterHeaderBytes bounds what an encoding of a TableChoice holds
// besides its PayloadBits: envelope, the largest body header (binary fuse:
// arity, width and fuse header) and the last partial word. It is the
// per-table constant a budget check allows on top of bits per key times
// keys.
const TableFilterHeaderBytes = envelopeHeaderSize + envelopeTrailer + 2 + fuseHeaderSize + 8

// Query costs in CPU ns of one absent-key probe on a large filter, from the
// paired benchmarks in docs/filters.md ("Query", BinaryFuse8 9.0, general
// 3-wise 12-16, 4-wise 15-17, Xor8 9.4, Ribbon 26-39) and 2.5 ns per Bloom
// probe plus the hash (BenchmarkBloomFamily). Only their differences
// matter: they are weighed against falseReadNanos.
const (
	probeNanosFuse8    = 9.0
	probeNanosFuse16   = 11.5
	probeNanosFuse3    = 14.0
	probeNanosFuse4    = 16.0
	probeNanosXor8     = 9.5
	probeNanosRibbon   = 32.0
	probeNanosBloomK   = 2.5
	probeNanosBloomFix = 5.0
)

// falseReadNanos is what a false positive costs a Get: a data block read
// that finds nothing (a table-file read, checksum and snappy decode of a
// 4 KiB block, when the block cache misses, as it mostly does for absent
// keys). Measured with kvbench -quick -sweep (docs/design.md, "Filter
// budget"): without filters a readmissing Get made 0.92 reads and ran at
// 43k ops/s, with binary fuse 8 0.0027 reads at 575k ops/s, so each read
// cost about (23.0 - 1.7) / 0.92 = 23 us; 20 us is a round figure below
// it. At that price halving an 8-bit filter's FP rate saves 39 ns per
// probe, more than any probe-time difference among the families.
const falseReadNanos = 20000.0

// ChooseTableFilter returns the table filter with the lowest expected query
// cost (probe time plus FP rate times falseReadNanos) among those whose
// payload fits bitsPerKey bits per key for n distinct keys: binary fuse of
// arity 3 or 4 and any width from 1 to 32 (the 8- and 16-bit 3-wise ones as
// their faster dedicated types), Xor8, Ribbon of 1 to 16 result bits, and
// Bloom, which fits any budget and so is the fallback for tiny tables where
// every fingerprint filter's fixed slots cost too much. Sizes are computed
// from the same layout functions the builders use, so a small table's
// segment overhead is counted exactly. n = 0 returns a Bloom choice (an
// empty table gets no filter anyway), and so does n above 2^30, more keys
// than the fingerprint filters' builders take.
func ChooseTableFilter(n int, bitsPerKey float64) (TableChoice, error) {
	return ChooseTableFilterPriced(n, bitsPerKey, 0)
}

// ChooseTableFilterPriced is ChooseTableFilter that also charges memory:
// it minimises the expected query cost plus nanosPerBit for each bit per
// key, among the filters within maxBitsPerKey. An allocator that knows
// what one more bit per key saves elsewhere (Monkey's marginal rate) uses
// it to round a table's width up or down where that is worth it, instead
// of always down to what fits.
func ChooseTableFilterPriced(n int, maxBitsPerKey, nanosPerBit float64) (TableChoice, error) {
	return chooseTableFilter(n, maxBitsPerKey, nanosPerBit, true)
}

// ChooseTableFilterLowestFP is ChooseTableFilterPriced without the probe
// time: among the filters within maxBitsPerKey it minimises the FP rate
// times falseReadNanos plus nanosPerBit per bit per key. It is for a table
// given bits beyond the budget to buy a low FP rate (a run Monkey
// favours): priced by probe time, a 1,360-key L0 table at 16.3 bits per
// key took a 4-wise 12-bit fuse (FP 2.4e-4, 16 ns) over a 15-bit Ribbon of
// the same size (FP 3e-5, 32 ns), selling for 16 ns the FP the bits were
// moved there to buy, while the bottom level paid for them.
func ChooseTableFilterLowestFP(n int, maxBitsPerKey, nanosPerBit float64) (TableChoice, error) {
	return chooseTableFilter(n, maxBitsPerKey, nanosPerBit, false)
}

func chooseTableFilter(n int, maxBitsPerKey, nanosPerBit float64, probeTime bool) (TableChoice, error) {
	bitsPerKey := maxBitsPerKey
	if n < 0 || !(bitsPerKey > 0) || math.IsInf(bitsPerKey, 0) || !(nanosPerBit >= 0) {
		return TableChoice{}, invalidf("choose a table filter for %d keys at %v bits per key, %v ns per bit", n, bitsPerKey, nanosPerBit)
	}
	budget := uint64(math.Floor(bitsPerKey * float64(n)))
	best := bloomChoice(n, bitsPerKey)
	priced := func(c TableChoice) float64 {
		p := cost(c)
		if !probeTime {
			p = c.FPRate * falseReadNanos
		}
		return p + nanosPerBit*float64(c.PayloadBits)/float64(max(n, 1))
	}
	consider := func(c TableChoice) {
		if c.PayloadBits <= budget && priced(c) < priced(best) {
			best = c
		}
	}
	if n == 0 || n > staticMaxKeys {
		return best, nil // no fingerprint filter builds beyond staticMaxKeys
	}
	f3, f4 := uint64(fuse3Layout(n).size), uint64(fuse4Layout(n).size)
	for w := 1; w <= 32; w++ {
		fp := math.Ldexp(1, -w)
		c3 := TableChoice{Type: TypeBinaryFuse, Fuse: FuseOptions{Arity: 3, FingerprintBits: w},
			PayloadBits: f3 * uint64(w), FPRate: fp, ProbeNanos: probeNanosFuse3}
		switch w {
		case 8:
			c3 = TableChoice{Type: TypeBinaryFuse8, PayloadBits: f3 * 8, FPRate: fp, ProbeNanos: probeNanosFuse8}
		case 16:
			c3 = TableChoice{Type: TypeBinaryFuse16, PayloadBits: f3 * 16, FPRate: fp, ProbeNanos: probeNanosFuse16}
		}
		consider(c3)
		consider(TableChoice{Type: TypeBinaryFuse, Fuse: FuseOptions{Arity: 4, FingerprintBits: w},
			PayloadBits: f4 * uint64(w), FPRate: fp, ProbeNanos: probeNanosFuse4})
	}
	consider(TableChoice{Type: TypeXor8, PayloadBits: uint64(xorLayout(n).size) * 8,
		FPRate: 1.0 / 256, ProbeNanos: probeNanosXor8})
	ribbonSlots := 64 * uint64(ribbonBlocks(n, ribbonDefaultBandWidth))
	for r := 1; r <= 16; r++ {
		consider(TableChoice{Type: TypeRibbon, RibbonBits: r, PayloadBits: ribbonSlots * uint64(r),
			FPRate: math.Ldexp(1, -r), ProbeNanos: probeNanosRibbon})
	}
	return best, nil
}

// bloomPrimeAtMost returns the largest prime <= m, or 2 below 3.
func bloomPrimeAtMost(m uint64) uint64 {
	if m <= 3 {
		return max(m, 2)
	}
	if m%2 == 0 {
		m--
	}
	for !bloomIsPrime(m) {
		m -= 2
	}
	return m
}

func cost(c TableChoice) float64 { return c.ProbeNanos + c.FPRate*falseReadNanos }

// bloomChoice is the Bloom filter of the largest prime number of bits up
// to bitsPerKey*n (the array length must be prime) with the probe count
// that minimises its FP rate.
func bloomChoice(n int, bitsPerKey float64) TableChoice {
	m := bloomPrimeAtMost(uint64(math.Floor(bitsPerKey * float64(n))))
	k := 1
	if n > 0 {
		k = max(1, int(math.Round(float64(m)/float64(n)*math.Ln2)))
	}
	k = min(k, 30)
	return TableChoice{Type: TypeBloom, BloomBits: m, BloomProbes: k, PayloadBits: m,
		FPRate: bloomFP(m, k, n), ProbeNanos: probeNanosBloomFix + probeNanosBloomK*float64(k)}
}

// bloomFP is the FP rate of an m-bit Bloom filter of k probes holding n
// keys, (1 - e^(-kn/m))^k.
func bloomFP(m uint64, k, n int) float64 {
	return math.Pow(1-math.Exp(-float64(k)*float64(n)/float64(m)), float64(k))
}

// Policy returns the policy that builds c.
func (c TableChoice) Policy() (Policy, error) {
	switch c.Type {
	case TypeBloom:
		m, k := c.BloomBits, c.BloomProbes
		return staticPolicy{TypeBloom, func(hs []uint64) (Filter, error) {
			if m == 0 || m > maxBloomBits || k < 1 || k > maxBloomK {
				return nil, invalidf("bloom of %d bits and %d probes", m, k)
			}
			f := newBloomMK(m, k)
			for _, h := range hs {
				f.AddHash(h)
			}
			return f, nil
		}}, nil
	case TypeBinaryFuse:
		return NewPolicy(c.Type, PolicyParams{Fuse: c.Fuse})
	case TypeRibbon:
		return NewPolicy(c.Type, PolicyParams{RibbonBits: c.RibbonBits})
	default:
		return NewPolicy(c.Type, PolicyParams{})
	}
}

// String names the choice's family and width, as Describe does a built
// filter.
func (c TableChoice) String() string {
	switch c.Type {
	case TypeBinaryFuse:
		return fmt.Sprintf("binary-fuse %d-wise %d-bit", c.Fuse.Arity, c.Fuse.FingerprintBits)
	case TypeRibbon:
		return fmt.Sprintf("ribbon %d-bit", c.RibbonBits)
	case TypeBloom:
		return fmt.Sprintf("bloom k=%d", c.BloomProbes)
	}
	return c.Type.String()
}

// MarginalBitValue is what one more bit per key saves per query, in ns, at
// the optimum of a filter family whose FP rate halves every bitsPerHalving
// bits per key: d/db of falseReadNanos * 2^(-b/bitsPerHalving). It is the
// price ChooseTableFilterPriced needs to keep a table near bitsPerKey.
func MarginalBitValue(bitsPerKey, bitsPerHalving float64) float64 {
	return falseReadNanos * math.Ln2 / bitsPerHalving * math.Exp2(-bitsPerKey/bitsPerHalving)
}

// MaxTableFingerprintBits is the widest fingerprint ChooseTableFilter
// builds (a 32-bit binary fuse).
const MaxTableFingerprintBits = 32

// FingerprintBitsPerKey returns the payload bits per key of the smallest
// filter ChooseTableFilter can build for n keys with a w-bit fingerprint,
// FP rate 2^-w: a 3- or 4-wise binary fuse, Xor8 at w = 8, or a Ribbon of
// w result bits (w <= 16); +Inf for n < 1 or w outside
// [1, MaxTableFingerprintBits]. An allocator that spreads a budget over
// tables needs these steps: a width costs what its layout costs at the
// table's size (a 9-bit Ribbon is 9.3 bits per key at 26k keys, 9.9 at
// 1k), not w times a constant, and bits between two steps buy nothing.
func FingerprintBitsPerKey(n, w int) float64 {
	if n < 1 || w < 1 || w > MaxTableFingerprintBits {
		return math.Inf(1)
	}
	slots := min(fuse3Layout(n).size, fuse4Layout(n).size)
	if w == 8 {
		slots = min(slots, xorLayout(n).size)
	}
	if w <= 16 {
		slots = min(slots, 64*ribbonBlocks(n, ribbonDefaultBandWidth))
	}
	// Half a bit over the payload, so that a budget of this many bits per
	// key, multiplied back by n and floored as ChooseTableFilter does, is
	// the payload despite rounding.
	return (float64(slots)*float64(w) + 0.5) / float64(n)
}
