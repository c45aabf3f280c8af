package filters

import (
	"math/rand/v2"
	"testing"
)

func TestBitArrayBoundaries(t *testing.T) {
	for _, m := range []uint64{1, 63, 64, 65, 127, 128, 1000} {
		b := newBitArray(m)
		if got := uint64(len(b.words)); got != (m+63)/64 {
			t.Fatalf("m=%d: %d words, want %d", m, got, (m+63)/64)
		}
		model := map[uint64]bool{}
		for _, i := range []uint64{0, 63, 64, m - 1} {
			if i >= m {
				continue
			}
			b.set(i)
			model[i] = true
			// Exactly the modelled bits are set: setting one bit must not
			// disturb its neighbours or spill past the end.
			for j := uint64(0); j < m; j++ {
				if b.test(j) != model[j] {
					t.Fatalf("m=%d after setting %d: bit %d = %v, want %v", m, i, j, b.test(j), model[j])
				}
			}
			if b.count() != uint64(len(model)) {
				t.Fatalf("m=%d: count %d, want %d", m, b.count(), len(model))
			}
			if !b.tailClean() {
				t.Fatalf("m=%d: bits past the end became set", m)
			}
		}
	}
}

func TestPackedArrayMatchesModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for width := uint(1); width <= 64; width++ {
		const n = 300
		p := newPackedArray(n, width)
		model := make([]uint64, n)
		for step := 0; step < 3000; step++ {
			i := rng.Uint64N(n)
			v := rng.Uint64() & widthMask(width)
			p.set(i, v)
			model[i] = v
		}
		for i := uint64(0); i < n; i++ {
			if got := p.get(i); got != model[i] {
				t.Fatalf("width %d: entry %d = %#x, want %#x", width, i, got, model[i])
			}
		}
	}
}

func TestReduceStaysInRange(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < 100000; i++ {
		n := rng.Uint32N(1<<20) + 1
		if r := reduce32(rng.Uint32(), n); r >= n {
			t.Fatalf("reduce32 gave %d for n=%d", r, n)
		}
		n64 := rng.Uint64N(1<<40) + 1
		if r := reduce64(rng.Uint64(), n64); r >= n64 {
			t.Fatalf("reduce64 gave %d for n=%d", r, n64)
		}
	}
}
