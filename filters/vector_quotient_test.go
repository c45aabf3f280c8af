package filters

import (
	"bytes"
	"errors"
	"fmt"
	"math/bits"
	"math/rand/v2"
	"testing"
)

// TestSelect64 checks the broadword select against a bit-by-bit count on
// random words of every density, and md128's shifts against a bit model.
func TestSelect64(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := 0; trial < 20000; trial++ {
		x := rng.Uint64()
		switch trial % 4 {
		case 1:
			x &= rng.Uint64()
		case 2:
			x |= rng.Uint64()
		case 3:
			x = ^uint64(0)
		}
		k := uint(0)
		for i := uint(0); i < 64; i++ {
			if x&(1<<i) != 0 {
				if got := select64(x, k); got != i {
					t.Fatalf("select64(%#x, %d) = %d, want %d", x, k, got, i)
				}
				k++
			}
		}
		if got := select64(x, k); got < 64 {
			t.Fatalf("select64(%#x, %d) past the popcount = %d", x, k, got)
		}
	}
	get := func(m md128, i uint) uint64 {
		if i >= 64 {
			return m.hi >> (i - 64) & 1
		}
		return m.lo >> i & 1
	}
	for trial := 0; trial < 5000; trial++ {
		m := md128{rng.Uint64(), rng.Uint64() >> 1}
		p := uint(rng.IntN(128))
		ins, del := m.insertZero(p), m.deleteBit(p)
		for i := uint(0); i < 128; i++ {
			var wantIns, wantDel uint64
			switch {
			case i < p:
				wantIns, wantDel = get(m, i), get(m, i)
			case i == p:
				wantIns, wantDel = 0, get(m, i+1)
			default:
				wantIns = get(m, i-1)
				if i < 127 {
					wantDel = get(m, i+1)
				}
			}
			if get(ins, i) != wantIns || get(del, i) != wantDel {
				t.Fatalf("m=%x/%x p=%d bit %d: insertZero %d (want %d), deleteBit %d (want %d)",
					m.lo, m.hi, p, i, get(ins, i), wantIns, get(del, i), wantDel)
			}
		}
		want := -1
		for i := int(p) - 1; i >= 0; i-- {
			if get(m, uint(i)) == 1 {
				want = i
				break
			}
		}
		if got := m.prevOne(p); got != want {
			t.Fatalf("prevOne(%d) = %d, want %d", p, got, want)
		}
		if got, want := m.top(), uint(128-bits.LeadingZeros64(m.hi)); m.hi != 0 && got != want {
			t.Fatalf("top = %d, want %d", got, want)
		}
	}
}

func TestVectorQuotientSizing(t *testing.T) {
	cases := []struct {
		n             int
		fpRate        float64
		tagBits, caps int
	}{
		{1, 0.01, 8, 48},
		{43, 0.0045, 8, 48},                         // 43 ≤ 0.9·48
		{44, 0.0045, 8, 96},                         // 44 > 43.2: two blocks
		{1000, 0.004, 16, 40 * 28},                  // 0.4% < 0.42%: 16-bit tags
		{1_000_000, 0.0045, 8, 23149 * 48},          // ceil(1e6 / 43.2) blocks, not a power of two
		{1_000_000, 0.0001, 16, 39683 * vqf16Slots}, // ceil(1e6 / 25.2)
	}
	for _, tc := range cases {
		f, err := NewVectorQuotient(tc.n, tc.fpRate)
		if err != nil {
			t.Fatal(err)
		}
		if f.TagBits() != tc.tagBits || f.Cap() != tc.caps {
			t.Errorf("NewVectorQuotient(%d, %v): %d-bit tags, cap %d; want %d, %d", tc.n, tc.fpRate, f.TagBits(), f.Cap(), tc.tagBits, tc.caps)
		}
	}
}

// vqfHash builds a key hash whose fingerprint in f is (bucket, tag) with
// first block b1, so tests can aim at exact blocks and buckets.
func vqfHash(f *VectorQuotient, b1 uint32, bucket, tag uint64) uint64 {
	buckets := uint64(vqf8Buckets)
	if f.tagBits == 16 {
		buckets = vqf16Buckets
	}
	hi := (uint64(b1)<<32 + uint64(f.nb) - 1) / uint64(f.nb)
	mid := (bucket<<16 + buckets - 1) / buckets
	return hi<<32 | mid<<16 | tag
}

// vqfCheck verifies VQ1-VQ3 on a live filter through the decoder.
func vqfCheck(t testing.TB, f *VectorQuotient) {
	t.Helper()
	if _, err := Unmarshal(mustMarshal(t, f)); err != nil {
		t.Fatalf("filter fails its own invariants: %v", err)
	}
}

// TestVectorQuotientEdges is table-driven over the places a block goes
// wrong: the first and last bucket, the bucket whose tags straddle the
// 64-bit metadata word boundary, a full block overflowing into the second
// candidate, both candidates full (ErrFull, filter unchanged), and removal
// from the middle of a bucket.
func TestVectorQuotientEdges(t *testing.T) {
	type op struct {
		remove   bool
		b1       uint32
		bucket   uint64
		tag      uint64
		wantFail bool
	}
	for _, w := range []uint{8, 16} {
		slots, buckets := uint64(vqf8Slots), uint64(vqf8Buckets)
		if w == 16 {
			slots, buckets = vqf16Slots, vqf16Buckets
		}
		fillBucket := func(bucket uint64, n int) []op {
			var ops []op
			for k := 0; k < n; k++ {
				ops = append(ops, op{b1: 1, bucket: bucket, tag: uint64(k + 1)})
			}
			return ops
		}
		// Copies of one fingerprint share both candidate blocks (VQ4); tag 7
		// in bucket 5 of block 1 has its second block elsewhere in a
		// 5-block filter (checked below), so 2·slots copies fit.
		sameFP := func(n int) []op {
			var ops []op
			for k := 0; k < n; k++ {
				ops = append(ops, op{b1: 1, bucket: 5, tag: 7})
			}
			return ops
		}
		if _, _, b1, b2 := newVectorQuotientShape(w, 5).derive(vqfHash(newVectorQuotientShape(w, 5), 1, 5, 7), buckets); b1 == b2 {
			t.Fatal("pick another tag: both candidates are one block")
		}
		cases := []struct {
			name string
			ops  []op
		}{
			{"first and last bucket", []op{{b1: 1, bucket: 0, tag: 7}, {b1: 1, bucket: buckets - 1, tag: 9}}},
			{"word boundary bucket", append(fillBucket(60, 10), op{b1: 1, bucket: 61, tag: 3}, op{b1: 1, bucket: 59, tag: 4})},
			{"overflow to second block then ErrFull", append(sameFP(int(2*slots)), op{b1: 1, bucket: 5, tag: 7, wantFail: true})},
			{"remove from the middle", append(fillBucket(30, 5), op{remove: true, b1: 1, bucket: 30, tag: 3})},
			{"remove absent", append(fillBucket(30, 2), op{remove: true, b1: 1, bucket: 30, tag: 9, wantFail: true})},
			{"duplicates are a multiset", []op{{b1: 1, bucket: 2, tag: 5}, {b1: 1, bucket: 2, tag: 5}, {remove: true, b1: 1, bucket: 2, tag: 5}}},
		}
		for _, tc := range cases {
			t.Run(fmt.Sprintf("w=%d/%s", w, tc.name), func(t *testing.T) {
				f := newVectorQuotientShape(w, 5)
				var members []uint64
				for _, o := range tc.ops {
					h := vqfHash(f, o.b1, o.bucket, o.tag)
					if o.remove {
						if got := f.RemoveHash(h); got == o.wantFail {
							t.Fatalf("remove(bucket %d, tag %d) = %v", o.bucket, o.tag, got)
						}
						if !o.wantFail {
							for i, m := range members {
								if m == h {
									members = append(members[:i], members[i+1:]...)
									break
								}
							}
						}
					} else {
						before := mustMarshal(t, f)
						err := f.AddHash(h)
						if o.wantFail {
							if !errors.Is(err, ErrFull) || !bytes.Equal(before, mustMarshal(t, f)) {
								t.Fatalf("add past full blocks: err = %v, changed = %v", err, !bytes.Equal(before, mustMarshal(t, f)))
							}
							continue
						}
						if err != nil {
							t.Fatal(err)
						}
						members = append(members, h)
					}
					vqfCheck(t, f)
				}
				for _, h := range members {
					if !f.MayContainHash(h) {
						t.Fatalf("member %#x reads absent", h)
					}
				}
				if f.Len() != len(members) {
					t.Fatalf("Len %d, want %d", f.Len(), len(members))
				}
				// Empty the filter: it must return to the fresh state.
				for _, h := range members {
					if !f.RemoveHash(h) {
						t.Fatal("remove of member failed")
					}
				}
				if !bytes.Equal(mustMarshal(t, f), mustMarshal(t, newVectorQuotientShape(w, 5))) {
					t.Fatal("emptied filter differs from a fresh one")
				}
			})
		}
	}
}

// TestVectorQuotientSecondBlockInvolution checks VQ4 on random hashes and
// sizes: the second block of the second block is the first, for every
// fingerprint, on block counts that are not powers of two.
func TestVectorQuotientSecondBlockInvolution(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, nb := range []uint32{1, 2, 3, 7, 1000, 23149} {
		f := newVectorQuotientShape(8, nb)
		for k := 0; k < 2000; k++ {
			h := rng.Uint64()
			tag, bucket, b1, b2 := f.derive(h, vqf8Buckets)
			if b1 >= nb || b2 >= nb {
				t.Fatalf("block out of range: %d %d of %d", b1, b2, nb)
			}
			// A key with the same fingerprint whose first block is b2.
			g := vqfHash(f, b2, bucket, tag)
			_, _, c1, c2 := f.derive(g, vqf8Buckets)
			if c1 != b2 || c2 != b1 {
				t.Fatalf("nb=%d: pair (%d,%d) maps to (%d,%d)", nb, b1, b2, c1, c2)
			}
		}
	}
}

// churnVectorQuotient sets up a dynChurn with the load held where Adds
// start to fail, comparing the bytes around every failed Add on small
// tables.
func churnVectorQuotient(w uint, nb uint32) dynChurnSetup {
	return func(t *testing.T) (string, dynFilter, dynChurnSpec) {
		f := newVectorQuotientShape(w, nb)
		snapshot, unchanged := dynBytesSnapshot(t, f, nb <= 256)
		return fmt.Sprintf("vector quotient w=%d", w), f, dynChurnSpec{
			stream: 0x7f, nearFull: dynLoadAbove(f, 0.97), snapshot: snapshot, unchanged: unchanged,
			final: func() { vqfCheck(t, f) },
		}
	}
}

// TestVectorQuotientFalsePositiveRate fills to the first ErrFull and checks
// the rate on 1M absent keys: within 1.5x of the target (F4) and within
// ±20% of the model at the load reached (a lookup that skipped a block or a
// bucket's tags would measure low).
func TestVectorQuotientFalsePositiveRate(t *testing.T) {
	for _, tc := range []struct {
		fpRate float64
		absent int
	}{{0.0045, 1_000_000}, {0.01, 1_000_000}, {0.0001, 4_000_000}} {
		f, err := NewVectorQuotient(20000, tc.fpRate)
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(7, uint64(tc.fpRate*1e6)))
		dynFill(t, f, rng)
		dynCheckFPRate(t, fmt.Sprintf("%d-bit", f.TagBits()), f, rng, tc.absent, tc.fpRate, vqfFPModel(f.tagBits, f.LoadFactor()))
	}
}

func TestVectorQuotientDecodeRejectsCorruption(t *testing.T) {
	for _, w := range []uint{8, 16} {
		f := newVectorQuotientShape(w, 2)
		dynFill(t, f, rand.New(rand.NewPCG(1, 1)))
		f.RemoveHash(0) // usually absent; harmless
		body := dynRejectsFlips(t, dynCaseOf("VectorQuotient"), f, 0x20)
		// A block with fewer tags, so there is an unused slot to corrupt.
		g := newVectorQuotientShape(w, 2)
		for i := 0; i < 3; i++ {
			if err := g.AddHash(uint64(i) << 40); err != nil {
				t.Fatal(err)
			}
		}
		_, sparse, _ := openTyped(mustMarshal(t, g), TypeVectorQuotient)
		// The three tags sit in bucket 0, so the bucket ends are bits
		// 3..buckets+2: set one above them, clear one among them.
		extra, missing := 120, 50
		if w == 16 {
			extra, missing = 60, 20
		}
		bodies := dynMutated(body, 1, map[string]func(b []byte){
			"tag width 12":          func(b []byte) { b[0] = 12 },
			"reserved":              func(b []byte) { b[2] = 1 },
			"zero blocks":           func(b []byte) { b[4], b[5] = 0, 0 },
			"block count too large": func(b []byte) { b[4]++ },
			"count disagrees":       func(b []byte) { b[8]++ },
			"truncated":             nil,
		})
		for name, b := range dynMutated(sparse, 1, map[string]func(b []byte){
			"extra bucket end":   func(b []byte) { b[16+extra/8] |= 1 << (extra % 8) },
			"missing bucket end": func(b []byte) { b[16+missing/8] &^= 1 << (missing % 8) },
			"unused tag set":     func(b []byte) { b[16+63] = 1 },
		}) {
			bodies[name] = b
		}
		dynRejectsBodies(t, dynCaseOf("VectorQuotient"), bodies)
		assertRejectsVersionAndType(t, TypeVectorQuotient, TypeQuotient, body, new(VectorQuotient))
	}
}

// FuzzVectorQuotientUnmarshal runs the dynamic battery's decoder fuzz on
// VectorQuotient; whatever decodes must also still satisfy VQ1-VQ3.
func FuzzVectorQuotientUnmarshal(f *testing.F) { dynFuzz(f, dynCaseOf("VectorQuotient")) }
