package filters

import (
	"math"
	"math/bits"
	"math/rand/v2"
	"testing"

	"github.com/sievekv/sievekv/internal/testutil/golden"
)

// bloomBlockedCraftHash returns a hash whose block is blk (of blocks) and
// whose first in-block probe is bit pos (0..511).
func bloomBlockedCraftHash(blk, blocks, pos uint64) uint64 {
	hi := (blk<<32 + blocks - 1) / blocks // ceil(blk·2^32/blocks)
	return hi<<32 | pos<<23
}

// TestBlockedBloomBitBoundaries puts the first probe at bits 0, 63, 64, 448
// and 511 of the first and last block and checks exactly that bit is set.
func TestBlockedBloomBitBoundaries(t *testing.T) {
	const blocks = 5
	for _, blk := range []uint64{0, blocks - 1} {
		for _, pos := range []uint64{0, 63, 64, 448, 511} {
			b := newBlockedBloomBlocks(blocks, 1)
			h := bloomBlockedCraftHash(blk, blocks, pos)
			b.AddHash(h)
			want := blk*512 + pos
			for i := uint64(0); i < b.Bits(); i++ {
				set := b.words[i>>6]&(1<<(i&63)) != 0
				if set != (i == want) {
					t.Fatalf("block %d pos %d: bit %d set=%v", blk, pos, i, set)
				}
			}
			if !b.MayContainHash(h) {
				t.Fatalf("block %d pos %d: false negative", blk, pos)
			}
			if b.MayContainHash(bloomBlockedCraftHash(blk, blocks, (pos+1)%512)) {
				t.Fatalf("block %d pos %d: neighbour bit reported present", blk, pos)
			}
		}
	}
}

// TestBlockedBloomOneBlockPerKey: every probe of a key lands in the block its
// hash selects (the one-cache-line property), for random and extreme hashes.
func TestBlockedBloomOneBlockPerKey(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 9))
	const blocks = 97
	hashes := []uint64{0, ^uint64(0), 1, 1 << 32, 1 << 63}
	for i := 0; i < 3000; i++ {
		hashes = append(hashes, rng.Uint64())
	}
	for _, h := range hashes {
		b := newBlockedBloomBlocks(blocks, 16)
		b.AddHash(h)
		blk := uint64(reduce32(uint32(h>>32), blocks))
		n := 0
		for i, w := range b.words {
			if w != 0 && uint64(i)/blockedBloomBlockWords != blk {
				t.Fatalf("hash %#x: bits set in block %d, want only block %d", h, i/blockedBloomBlockWords, blk)
			}
			n += bits.OnesCount64(w)
		}
		// Probes are drawn with replacement; 16 probes in 512 bits should
		// rarely repeat, and never collapse to a handful.
		if n < 12 {
			t.Fatalf("hash %#x: only %d distinct bits for 16 probes", h, n)
		}
	}
}

// TestBlockedBloomSizing: the chosen bits/key satisfies the model at the
// target, costs more than a standard Bloom (blocking is not free), is no
// worse than an exhaustive search over every k, and 1% fewer bits would
// break the target (the bisection found the minimum).
func TestBlockedBloomSizing(t *testing.T) {
	for _, p := range []float64{0.9, 0.5, 0.1, 0.05, 0.01, 0.001, 1e-4, 1e-6} {
		c, k, ok := blockedBloomSizing(p)
		if !ok {
			t.Fatalf("p=%v: no sizing", p)
		}
		std := -math.Log(p) / (math.Ln2 * math.Ln2)
		if fp := blockedBloomFPModel(c, k); fp > p {
			t.Fatalf("p=%v: model FP %v at the chosen %.3f bits/key, k=%d", p, fp, c, k)
		}
		if c < std {
			t.Fatalf("p=%v: %.3f bits/key, below the standard Bloom's %.3f", p, c, std)
		}
		for kk := 1; kk <= blockedBloomMaxK; kk++ {
			if fp := blockedBloomFPModel(c-0.01, kk); fp <= p {
				t.Fatalf("p=%v: k=%d meets the target with %.3f bits/key, chosen k=%d needs %.3f", p, kk, c-0.01, k, c)
			}
		}
		if fp := blockedBloomFPModel(0.99*c, k); fp <= p {
			t.Fatalf("p=%v: 1%% fewer bits (%.3f) still meets the target: sizing is not minimal", p, 0.99*c)
		}
		t.Logf("p=%v: blocked %.3f bits/key (k=%d), standard %.3f: +%.1f%%", p, c, k, std, 100*(c/std-1))
	}
}

// TestBlockedFPModelSanity: the Poisson model is never below the standard
// Bloom formula (load variance hurts), is negligible with one key per
// block, and approaches 1 when blocks are crowded (no underflow to 0).
func TestBlockedFPModelSanity(t *testing.T) {
	std := func(c float64, k int) float64 { return math.Pow(1-math.Exp(-float64(k)/c), float64(k)) }
	for _, c := range []float64{6, 10, 16} {
		for _, k := range []int{3, 7, 11} {
			if m := blockedBloomFPModel(c, k); m < std(c, k) {
				t.Fatalf("c=%v k=%d: blocked model %v below standard %v", c, k, m, std(c, k))
			}
		}
	}
	if blockedBloomFPModel(512, 8) > 1e-10 {
		t.Fatalf("one key per block should give a negligible FP, got %v", blockedBloomFPModel(512, 8))
	}
	if fp := blockedBloomFPModel(0.1, 1); fp < 0.99 { // 5120 keys per block
		t.Fatalf("crowded blocks: model FP %v, want ~1", fp)
	}
}

// TestBlockedBloomLooseTargetPoissonUnderflow: at loose targets blocks are
// crowded (hundreds of keys each); the first sizing model computed e^{-λ}
// directly, which underflowed to 0 there, and sized p = 0.9 at 0.23 bits/key
// for a measured FP of 0.98. The measured rate must stay near the target.
func TestBlockedBloomLooseTargetPoissonUnderflow(t *testing.T) {
	const n, q = 20000, 200000
	for _, p := range []float64{0.3, 0.5, 0.8, 0.9} {
		b, err := NewBlockedBloom(n, p)
		if err != nil {
			t.Fatal(err)
		}
		bloomAddSet(b, 41, n)
		// Above p = 0.77, 1.3x would allow anything; cap the slack at +0.02
		// (over 40 standard deviations of sampling noise at q = 200k).
		fp := bloomMeasuredFP(b, 41, q)
		t.Logf("p=%v: measured %.4f", p, fp)
		if fp > min(1.3*p, p+0.02) {
			t.Errorf("p=%v: measured FP %v (%.2f bits/key, k=%d)", p, fp, float64(b.Bits())/n, b.K())
		}
	}
}

func TestBlockedBloomDecodeRejectsImpossibleParameters(t *testing.T) {
	body := bloomBody[[]uint64] // blocks, k, words
	cases := map[string][]byte{
		"blocks=0":         body(0, 3, nil),
		"k=0":              body(1, 0, make([]uint64, 8)),
		"k=65":             body(1, 65, make([]uint64, 8)),
		"short block":      body(1, 3, make([]uint64, 7)),
		"extra word":       body(1, 3, make([]uint64, 9)),
		"huge block count": body(1<<40, 3, make([]uint64, 8)),
		"2^31 blocks, 1":   body(1<<31, 3, make([]uint64, 8)),
	}
	assertBodies(t, TypeBlockedBloom, blockedBloomVersion, cases, map[string][]byte{"one block": body(1, 3, make([]uint64, 8))})
}

// TestBlockedBloomGolden pins the encoding of a one-block filter with k = 3
// holding "a", "b", "c" (fixed geometry, so the pin does not depend on the
// floating-point sizing search).
func TestBlockedBloomGolden(t *testing.T) {
	b := newBlockedBloomBlocks(1, 3)
	for _, k := range []string{"a", "b", "c"} {
		b.Add([]byte(k))
	}
	golden.Bytes(t, "blocked-bloom-v1", bloomMustMarshal(t, b))
}
