package filters

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestCuckooSizing(t *testing.T) {
	cases := []struct {
		n       int
		fpRate  float64
		fpBits  int
		buckets int
	}{
		{1, 0.032, 8, 1},
		{4, 0.032, 8, 2},            // 4 keys in 1 bucket would be load 1.0 > 0.95
		{3, 0.032, 8, 1},            // 3/4 = 0.75 fits one bucket
		{1000, 0.01, 12, 512},       // ceil(log2(800)) = 10 -> 12 bits; 1000/3.8 = 264 -> 512
		{996147, 0.032, 8, 1 << 18}, // 0.95·2^20 keys exactly fills 2^18 buckets to 95%
		{1000000, 0.032, 8, 1 << 19},
		{1000000, 0.001, 16, 1 << 19},
	}
	for _, tc := range cases {
		c, err := NewCuckoo(tc.n, tc.fpRate)
		if err != nil {
			t.Fatalf("NewCuckoo(%d, %v): %v", tc.n, tc.fpRate, err)
		}
		if c.FingerprintBits() != tc.fpBits || c.Cap() != 4*tc.buckets {
			t.Errorf("NewCuckoo(%d, %v): %d-bit fingerprints, %d slots; want %d bits, %d slots",
				tc.n, tc.fpRate, c.FingerprintBits(), c.Cap(), tc.fpBits, 4*tc.buckets)
		}
		if float64(tc.n)/float64(c.Cap()) > cuckooMaxLoad {
			t.Errorf("NewCuckoo(%d, %v) sized for load %.3f", tc.n, tc.fpRate, float64(tc.n)/float64(c.Cap()))
		}
		// 12-bit fingerprints cost 12 bits per slot, not 16.
		wantWords := (uint64(c.Cap())*uint64(tc.fpBits)+63)/64 + 1
		if uint64(len(c.slots.words)) != wantWords {
			t.Errorf("%d-bit filter uses %d words, want %d", tc.fpBits, len(c.slots.words), wantWords)
		}
	}
}

func TestCuckooAltIsAnInvolution(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	for _, w := range []uint{8, 12, 16} {
		c := newCuckooShape(12, w)
		for k := 0; k < 10000; k++ {
			fp, i1 := c.derive(rng.Uint64())
			if fp == 0 || fp > c.fpMax {
				t.Fatalf("fingerprint %d outside 1..%d", fp, c.fpMax)
			}
			if back := c.alt(c.alt(i1, fp), fp); back != i1 {
				t.Fatalf("alt(alt(%d)) = %d", i1, back)
			}
		}
	}
}

func TestCuckooDeterministic(t *testing.T) {
	build := func() []byte {
		c := newCuckooShape(6, 12)
		dynFill(t, c, rand.New(rand.NewPCG(9, 9)))
		return mustMarshal(t, c)
	}
	if !bytes.Equal(build(), build()) {
		t.Fatal("the same operations gave different filters")
	}
}

// churnCuckoo sets up a dynChurn hovering just above 95% load: past the
// sizing limit, where walks are long and some fail (each failure costs 500
// kicks, so not too many). Small tables are compared whole around every
// Add; for the soak's big tables a copy per Add would dominate, so a failed
// Add is checked on the buckets its walk touched (each must hold its first
// logged value), and on count and random state.
func churnCuckoo(logBuckets, w uint) dynChurnSetup {
	return func(t *testing.T) (string, dynFilter, dynChurnSpec) {
		c := newCuckooShape(logBuckets, w)
		fullSnap := len(c.slots.words) <= 1<<12
		snap := make([]uint64, len(c.slots.words))
		var count, state uint64
		return fmt.Sprintf("cuckoo w=%d", w), c, dynChurnSpec{
			stream:   0xc0c0,
			nearFull: dynLoadAbove(c, 0.962),
			snapshot: func() {
				if fullSnap {
					copy(snap, c.slots.words)
				}
				count, state = uint64(c.count), uint64(c.rng)
			},
			unchanged: func() bool {
				if (fullSnap && !slices.Equal(snap, c.slots.words)) || count != uint64(c.count) || state != uint64(c.rng) {
					return false
				}
				first := map[uint64]uint64{}
				for _, u := range c.undo {
					if _, seen := first[u.bucket]; !seen {
						first[u.bucket] = u.old
					}
				}
				for b, old := range first {
					if c.bucket(b) != old {
						return false
					}
				}
				return true
			},
		}
	}
}

// TestCuckooFalsePositiveRate fills to the 95% load the constructor sizes
// for and measures 1M absent keys against the requested rate (F4) and the
// fingerprint's own prediction 1-(1-1/fpMax)^(8·load): a lower rate would
// mean the lookup is not checking both buckets' four slots.
func TestCuckooFalsePositiveRate(t *testing.T) {
	fresh := func(p float64) (*Cuckoo, error) { return NewCuckoo(100000, p) }
	dynEachRate(t, []float64{0.032, 0.03, 0.002, 0.0005}, 1, fresh, func(fpRate float64, c *Cuckoo, rng *rand.Rand) {
		for c.LoadFactor() < cuckooMaxLoad {
			if err := c.AddHash(rng.Uint64()); err != nil {
				t.Fatal(err)
			}
		}
		model := 1 - math.Pow(1-1/float64(c.fpMax), 8*c.LoadFactor())
		dynCheckFPRate(t, fmt.Sprintf("%d-bit", c.FingerprintBits()), c, rng, 1_000_000, fpRate, model)
	})
}

func TestCuckooDecodeRejectsCorruption(t *testing.T) {
	c := newCuckooShape(3, 12)
	dynFill(t, c, rand.New(rand.NewPCG(5, 5)))
	body := dynRejectsFlips(t, dynCaseOf("Cuckoo"), c, 0x10)
	// Structurally impossible bodies under a valid checksum.
	mutate := dynWalkMutations(4, map[string]func(b []byte){
		"width 10":           func(b []byte) { b[0] = 10 },
		"3 slots per bucket": func(b []byte) { b[1] = 3 },
		"wrong bucket count": func(b []byte) { b[2]++ },
		"huge bucket count":  func(b []byte) { b[2] = 60 },
		"bit in spare word":  func(b []byte) { b[len(b)-1] = 0x80 },
	})
	dynRejectsBodies(t, dynCaseOf("Cuckoo"), dynMutated(body, 0, mutate))
	assertRejectsVersionAndType(t, TypeCuckoo, TypeBloom, body, new(Cuckoo))
}

// FuzzCuckooUnmarshal runs the dynamic battery's decoder fuzz on Cuckoo.
func FuzzCuckooUnmarshal(f *testing.F) { dynFuzz(f, dynCaseOf("Cuckoo")) }
