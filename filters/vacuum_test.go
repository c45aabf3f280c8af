package filters

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

func TestVacuumSizing(t *testing.T) {
	cases := []struct {
		n      int
		fpRate float64
		fpBits int
	}{
		{1, 0.1, 7},
		{4, 0.5, 4},
		{1000, 0.01, 10},
		{100_000, 0.004, 11},
		{1_000_000, 0.004, 11},
		{1_100_000, 0.004, 11},
		{1_500_000, 0.001, 13},
		{3_000_000, 0.0002, 16},
	}
	for _, tc := range cases {
		v, err := NewVacuum(tc.n, tc.fpRate)
		if err != nil {
			t.Fatalf("NewVacuum(%d, %v): %v", tc.n, tc.fpRate, err)
		}
		if v.FingerprintBits() != tc.fpBits {
			t.Errorf("NewVacuum(%d, %v): %d-bit fingerprints, want %d", tc.n, tc.fpRate, v.FingerprintBits(), tc.fpBits)
		}
		if v.Cap()%(4*v.ChunkBuckets()) != 0 {
			t.Errorf("n=%d: %d slots is not a whole number of %d-bucket chunks", tc.n, v.Cap(), v.ChunkBuckets())
		}
		if load := float64(tc.n) / float64(v.Cap()); load > vacuumChunkLoad {
			t.Errorf("n=%d sized for load %.3f", tc.n, load)
		}
		// No 2x over-allocation: the chunk rounding and the balance margin
		// (3.5σ of a chunk's load, relatively smaller for bigger chunks)
		// cost at most 12% at 100k keys and 5% from 1M keys.
		if slack := 1.12; tc.n >= 100_000 {
			if tc.n >= 1_000_000 {
				slack = 1.05
			}
			if float64(v.Cap()) > slack*float64(tc.n)/vacuumChunkLoad {
				t.Errorf("n=%d: %d slots, more than %v·n/0.955", tc.n, v.Cap(), slack)
			}
		}
		if want := packedWords(uint64(v.Cap()/4), uint(4*tc.fpBits)); uint64(len(v.slots.words)) != want {
			t.Errorf("n=%d: %d words, want %d (w bits per slot)", tc.n, len(v.slots.words), want)
		}
	}
}

// TestVacuumAltStaysInChunk: the alternate bucket is an involution and never
// leaves the chunk, including for the first and last bucket of the first and
// last chunk (chunk edges) and for tables that are not a power of two.
func TestVacuumAltStaysInChunk(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	for _, shape := range []struct {
		logChunk uint
		chunks   uint64
	}{{0, 1}, {0, 5}, {1, 3}, {4, 7}, {10, 13}, {16, 2}} {
		v := newVacuumShape(shape.logChunk, shape.chunks, 12)
		l := uint64(1) << shape.logChunk
		edges := []uint64{0, l - 1, l * (shape.chunks - 1), v.slots.n - 1}
		for k := 0; k < 5000; k++ {
			fp, i := v.derive(rng.Uint64())
			if k < len(edges) {
				i = edges[k]
			}
			if fp == 0 || fp > v.fpMax || i >= v.slots.n {
				t.Fatalf("derive gave fp %d, bucket %d of %d", fp, i, v.slots.n)
			}
			j := v.alt(i, fp)
			if j/l != i/l || j >= v.slots.n {
				t.Fatalf("L=%d: alt(%d) = %d leaves the chunk", l, i, j)
			}
			if v.alt(j, fp) != i {
				t.Fatalf("alt is not an involution at %d", i)
			}
		}
	}
}

// TestVacuumHoldsN checks the constructor's promise: n random keys fit, for
// small n (few, unbalanced chunks) through large n.
func TestVacuumHoldsN(t *testing.T) {
	for _, n := range []int{1, 2, 3, 5, 10, 31, 100, 777, 1000, 4096, 12345, 100_000, 300_000} {
		for seed := uint64(0); seed < 3; seed++ {
			v, err := NewVacuum(n, 0.01)
			if err != nil {
				t.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(seed, uint64(n)))
			for k := 0; k < n; k++ {
				if err := v.AddHash(rng.Uint64()); err != nil {
					t.Fatalf("n=%d seed=%d (L=%d, %d slots): key %d: %v", n, seed, v.ChunkBuckets(), v.Cap(), k, err)
				}
			}
		}
	}
}

// vacuumChurn sets up a dynChurn on a table of chunks chunks of 2^logChunk
// buckets of w-bit fingerprints held above target load.
func vacuumChurn(logChunk uint, chunks uint64, w uint, target float64) dynChurnSetup {
	return func(*testing.T) (string, dynFilter, dynChurnSpec) {
		v := newVacuumShape(logChunk, chunks, w)
		return fmt.Sprintf("vacuum w=%d", w), v, dynRawStateChurn(v, target, func(dst []uint64) []uint64 {
			return append(append(dst, v.slots.words...), v.count, v.rng)
		})
	}
}

// TestVacuumFalsePositiveRate fills to the first ErrFull and measures 1M
// absent keys against the target (F4) and against the model
// 1-(1-1/(2^w-1))^(8·load).
func TestVacuumFalsePositiveRate(t *testing.T) {
	fresh := func(p float64) (*Vacuum, error) { return NewVacuum(60_000, p) }
	dynEachRate(t, []float64{0.03, 0.004, 0.001}, 11, fresh, func(fpRate float64, v *Vacuum, rng *rand.Rand) {
		dynFill(t, v, rng)
		if v.LoadFactor() < 0.94 {
			t.Errorf("ε=%v: first ErrFull at load %.3f", fpRate, v.LoadFactor())
		}
		model := 1 - math.Pow(1-1/float64(v.fpMax), 8*v.LoadFactor())
		dynCheckFPRate(t, fmt.Sprintf("%d-bit", v.FingerprintBits()), v, rng, 1_000_000, fpRate, model)
	})
}

func TestVacuumDecodeRejectsCorruption(t *testing.T) {
	v := newVacuumShape(1, 3, 12)
	dynFill(t, v, rand.New(rand.NewPCG(5, 5)))
	body := dynRejectsFlips(t, dynCaseOf("Vacuum"), v, 0x10)
	mutate := dynWalkMutations(12, map[string]func(b []byte){
		"width 3":            func(b []byte) { b[0] = 3 },
		"width 17":           func(b []byte) { b[0] = 17 },
		"3 slots per bucket": func(b []byte) { b[1] = 3 },
		"chunk size":         func(b []byte) { b[2]++ },
		"huge chunk size":    func(b []byte) { b[2] = 40 },
		"zero chunks":        func(b []byte) { clear(b[4:12]) },
		"huge chunk count":   func(b []byte) { b[11] = 0x40 },
		"bit in spare word":  func(b []byte) { b[len(b)-1] = 0x80 },
		"truncated":          nil,
	})
	dynRejectsBodies(t, dynCaseOf("Vacuum"), dynMutated(body, 8, mutate))
	assertRejectsVersionAndType(t, TypeVacuum, TypeCuckoo, body, new(Vacuum))
}

// FuzzVacuumUnmarshal runs the dynamic battery's decoder fuzz on Vacuum.
func FuzzVacuumUnmarshal(f *testing.F) { dynFuzz(f, dynCaseOf("Vacuum")) }

// TestVacuumSmallerThanCuckoo: for key counts whose cuckoo table rounds up
// to a power of two well above n, the vacuum table needs at most 0.8 of the
// cuckoo filter's slots, and at most 0.8 of its bits at ε = 0.4% (the
// vacuum filter's reason to exist; measured fills in docs/filters.md, "Morton
// and vacuum (n = 1M, ε = 0.4%)").
func TestVacuumSmallerThanCuckoo(t *testing.T) {
	for _, n := range []int{150_000, 1_100_000, 1_500_000, 3_000_000} {
		v, err := NewVacuum(n, 0.004)
		if err != nil {
			t.Fatal(err)
		}
		c, err := NewCuckoo(n, 0.004)
		if err != nil {
			t.Fatal(err)
		}
		slots := float64(v.Cap()) / float64(c.Cap())
		bits := float64(v.Cap()*v.FingerprintBits()) / float64(c.Cap()*c.FingerprintBits())
		if slots > 0.8 || bits > 0.8 {
			t.Errorf("n=%d: vacuum/cuckoo slots %.3f, bits %.3f; want <= 0.8", n, slots, bits)
		}
	}
}

// TestVacuumHugeNRefusedQuickly pins that sizing costs no more than a few
// steps per chunk size: NewVacuum searched for each chunk count one step at
// a time, which took seconds at n = 2^28, hours at n = 2^40 (before refusing
// it) and never returned at n near 2^63, where c++ on a float64 above 2^53
// no longer changes c.
func TestVacuumHugeNRefusedQuickly(t *testing.T) {
	for _, n := range []int{1 << 40, math.MaxInt64} {
		done := make(chan error, 1)
		go func() {
			_, err := NewVacuum(n, 0.01)
			done <- err
		}()
		select {
		case err := <-done:
			if !errors.Is(err, ErrInvalidArgument) {
				t.Errorf("NewVacuum(%d): got %v, want ErrInvalidArgument", n, err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("NewVacuum(%d) still sizing after 10s", n)
		}
	}
	start := time.Now()
	vacuumShape(1 << 28)
	if d := time.Since(start); d > 100*time.Millisecond {
		t.Errorf("vacuumShape(2^28) took %v", d)
	}
}

// TestVacuumShapeMatchesStepSearch checks the closed-form start of the chunk
// count search against the step-by-step search it replaced: the first count
// at or above n/(4·0.955·L) that keeps the most loaded chunk within reach.
func TestVacuumShapeMatchesStepSearch(t *testing.T) {
	ref := func(n int) (logChunk uint, chunks uint64) {
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
	rng := rand.New(rand.NewPCG(3, 4))
	ns := []int{1, 2, 3, 4, 5, 7, 8, 100, 1000, 4096, 65536, 1 << 20}
	for range 300 {
		ns = append(ns, 1+rng.IntN(1<<22))
	}
	for _, n := range ns {
		gl, gc := vacuumShape(n)
		wl, wc := ref(n)
		if gl != wl || gc != wc {
			t.Fatalf("vacuumShape(%d) = (%d, %d), step search gives (%d, %d)", n, gl, gc, wl, wc)
		}
	}
}
