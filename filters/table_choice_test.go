package filters

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestChooseTableFilterFitsAndHasNoFalseNegatives: for random key counts
// and budgets, the chosen filter's encoding is within the budget plus
// TableFilterHeaderBytes, its predicted payload is what was built, every
// key built in is reported present, its measured FP rate is near the
// predicted one, and Describe names what was chosen.
func TestChooseTableFilterFitsAndHasNoFalseNegatives(t *testing.T) {
	rng := rand.New(rand.NewPCG(20, 1))
	kinds := map[string]bool{}
	for range 120 {
		n := 1 + rng.IntN(1<<rng.IntN(15))
		bits := 1 + 23*rng.Float64()
		c, err := ChooseTableFilter(n, bits)
		if err != nil {
			t.Fatal(err)
		}
		if float64(c.PayloadBits) > max(bits*float64(n), 2) {
			t.Fatalf("n=%d bits=%.2f: %s payload %d bits over budget", n, bits, c, c.PayloadBits)
		}
		hs := make([]uint64, n)
		for i := range hs {
			hs[i] = rng.Uint64()
		}
		p, err := c.Policy()
		if err != nil {
			t.Fatal(err)
		}
		enc, err := p.Build(hs)
		if err != nil {
			t.Fatalf("n=%d bits=%.2f %s: %v", n, bits, c, err)
		}
		if limit := bits*float64(n)/8 + TableFilterHeaderBytes; float64(len(enc)) > limit {
			t.Fatalf("n=%d bits=%.2f %s: %d bytes, budget %.1f", n, bits, c, len(enc), limit)
		}
		f, typ, err := UnmarshalWithType(enc)
		if err != nil || typ != c.Type || typ != p.Type() {
			t.Fatalf("%s: decoded as %s, %v", c, typ, err)
		}
		for _, h := range hs {
			if !f.MayContainHash(h) {
				t.Fatalf("n=%d bits=%.2f %s: false negative", n, bits, c)
			}
		}
		d := Describe(f, n)
		if d.Kind != c.String() || d.Type != c.Type {
			t.Fatalf("Describe = %+v, chose %s", d, c)
		}
		kinds[d.Kind] = true
		if n >= 2000 {
			const probes = 20000
			fps := 0
			for range probes {
				if f.MayContainHash(rng.Uint64()) {
					fps++
				}
			}
			// Poisson bound: mean + 5 sigma + 3.
			mean := c.FPRate * probes
			if float64(fps) > mean+5*math.Sqrt(mean)+3 {
				t.Fatalf("n=%d %s: %d false positives in %d, predicted %.1f", n, c, fps, probes, mean)
			}
		}
	}
	if len(kinds) < 6 {
		t.Fatalf("only %d kinds chosen: %v", len(kinds), kinds)
	}
}

// TestChooseTableFilterFamilies pins the crossovers the choice is built
// for: Bloom for tiny tables, Ribbon for small ones at 10 bits, 4-wise fuse
// of 9 bits for large ones, and no FP worse than an 8-bit fuse where one
// fits.
func TestChooseTableFilterFamilies(t *testing.T) {
	for _, tc := range []struct {
		n    int
		bits float64
		want string
	}{
		{10, 10, "bloom k=7"},
		{20000, 10, "ribbon 9-bit"},
		{1_000_000, 10, "binary-fuse 4-wise 9-bit"},
		{1_000_000, 9.1, "binary-fuse-8"},
	} {
		c, err := ChooseTableFilter(tc.n, tc.bits)
		if err != nil || c.String() != tc.want {
			t.Errorf("ChooseTableFilter(%d, %v) = %s, %v; want %s", tc.n, tc.bits, c, err, tc.want)
		}
	}
	for _, bad := range []float64{0, -1} {
		if _, err := ChooseTableFilter(10, bad); err == nil {
			t.Errorf("ChooseTableFilter(10, %v) accepted", bad)
		}
	}
}

// TestFingerprintBitsPerKeyIsTheStep: FingerprintBitsPerKey(n, w) is the
// exact step at which a w-bit filter becomes buildable for n keys: at it
// ChooseTableFilter has a filter of FP <= 2^-w (or one with a lower
// expected cost) within the budget, and one bit of payload less leaves
// only wider-FP filters. An allocator budgeting whole widths relies on
// both: bits above the step buy nothing until the next one.
func TestFingerprintBitsPerKeyIsTheStep(t *testing.T) {
	for _, n := range []int{700, 1040, 4500, 26000, 200000} {
		for w := 1; w <= 16; w++ {
			bits := FingerprintBitsPerKey(n, w)
			at, err := ChooseTableFilter(n, bits)
			if err != nil {
				t.Fatal(err)
			}
			fp := math.Ldexp(1, -w)
			if at.FPRate > fp && cost(at) > fp*falseReadNanos+probeNanosRibbon {
				t.Fatalf("n=%d w=%d: at %.3f bits per key the choice is %s (FP %g)", n, w, bits, at, at.FPRate)
			}
			below, err := ChooseTableFilter(n, bits-1/float64(n))
			if err != nil {
				t.Fatal(err)
			}
			if below.FPRate <= fp {
				t.Fatalf("n=%d w=%d: just below %.3f bits per key %s (FP %g) fits", n, w, bits, below, below.FPRate)
			}
		}
	}
	if !math.IsInf(FingerprintBitsPerKey(0, 9), 1) || !math.IsInf(FingerprintBitsPerKey(100, 0), 1) ||
		!math.IsInf(FingerprintBitsPerKey(100, MaxTableFingerprintBits+1), 1) {
		t.Fatal("FingerprintBitsPerKey of no keys or an unbuildable width is finite")
	}
}

// TestChooseTableFilterLowestFPIgnoresProbeTime: at 1,360 keys and 16.33
// bits per key, unpriced bits, the probe-time pricing takes a 4-wise
// 11-bit fuse (16 ns, FP 2^-11) over a 15-bit Ribbon of no more bits
// (32 ns, FP 2^-15); the
// lowest-FP choice must take the Ribbon, and stay within the bits.
func TestChooseTableFilterLowestFPIgnoresProbeTime(t *testing.T) {
	const n, bits = 1360, 16.33
	priced, err := ChooseTableFilterPriced(n, bits, 0)
	if err != nil {
		t.Fatal(err)
	}
	lowest, err := ChooseTableFilterLowestFP(n, bits, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("priced %v (FP %.6f), lowest FP %v (FP %.6f)", priced, priced.FPRate, lowest, lowest.FPRate)
	if lowest.PayloadBits > uint64(math.Floor(bits*n)) {
		t.Fatalf("lowest-FP choice spends %d bits, over %d", lowest.PayloadBits, uint64(math.Floor(bits*n)))
	}
	if lowest.FPRate > math.Ldexp(1, -15) || lowest.FPRate >= priced.FPRate {
		t.Fatalf("lowest-FP choice %v has FP %.6f (priced %v: %.6f), want <= 2^-15", lowest, lowest.FPRate, priced, priced.FPRate)
	}
}

// TestChooseTableFilterBeyondStaticMaxKeys: the static builders refuse more
// than staticMaxKeys keys, so above it the choice is Bloom, the one family
// left that can be built. The fingerprint filters' sizes were computed in
// uint32 slots, which wrapped: at n = 2^40 a 16-bit fuse filter was chosen
// with a payload of 0 bits, at 2^33 with a quarter of its real size.
func TestChooseTableFilterBeyondStaticMaxKeys(t *testing.T) {
	for _, n := range []int{staticMaxKeys + 1, 1 << 31, 1 << 33, 1 << 40} {
		for _, bpk := range []float64{4, 10, 20} {
			c, err := ChooseTableFilter(n, bpk)
			if err != nil {
				t.Fatalf("n=%d bpk=%v: %v", n, bpk, err)
			}
			if c.Type != TypeBloom {
				t.Errorf("n=%d bpk=%v: chose %v (payload %d bits), which cannot be built for more than %d keys",
					n, bpk, c, c.PayloadBits, staticMaxKeys)
			}
		}
	}
	if c, _ := ChooseTableFilter(staticMaxKeys, 10); c.Type == TypeBloom {
		t.Errorf("n=staticMaxKeys: chose Bloom, want a fingerprint filter")
	}
}
