package filters

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// cqfHash builds a key hash whose fingerprint in f is (q, x).
func cqfHash(f *CountingQuotient, q, x uint64) uint64 {
	hi := (q<<32 + f.nq - 1) / f.nq
	return hi<<32 | x
}

// cqfMustValid checks CQ1-CQ4 on a live filter, offsets included.
func cqfMustValid(t testing.TB, f *CountingQuotient) {
	t.Helper()
	if err := f.validate(f.used, f.total); err != nil {
		t.Fatalf("invariants broken: %v", err)
	}
}

func TestCountingQuotientSizing(t *testing.T) {
	cases := []struct {
		n               int
		fpRate          float64
		r, home, overfl int
	}{
		{1, 0.5, 2, 1, 1},
		{60, 0.01, 7, 1, 1},               // 60 ≤ 0.95·64
		{61, 0.004, 8, 2, 1},              // 61 > 60.8
		{1_000_000, 0.0045, 8, 16448, 65}, // 4·sqrt(2^20 + 64) slots
		{1_000_000, 0.001, 10, 16448, 65},
	}
	for _, tc := range cases {
		f, err := NewCountingQuotient(tc.n, tc.fpRate)
		if err != nil {
			t.Fatal(err)
		}
		if f.RemainderBits() != tc.r || f.home != uint32(tc.home) || f.overflow != uint32(tc.overfl) {
			t.Errorf("NewCountingQuotient(%d, %v): r=%d home=%d overflow=%d; want %d %d %d",
				tc.n, tc.fpRate, f.r, f.home, f.overflow, tc.r, tc.home, tc.overfl)
		}
		if want := (uint64(tc.home) + uint64(tc.overfl)) * (17 + 8*uint64(tc.r)) * 8; f.SizeBits() != want {
			t.Errorf("SizeBits %d, want %d", f.SizeBits(), want)
		}
	}
}

// TestCountingQuotientCounterEncoding round-trips counts through encode
// and groupAt for every remainder class (0, 1, middle, maximum) and checks
// the slot cost is logarithmic.
func TestCountingQuotientCounterEncoding(t *testing.T) {
	for _, r := range []uint{2, 3, 8} {
		f := newCountingQuotientShape(r, 4, 1)
		base := float64(f.remMask)
		for _, x := range []uint64{0, 1, f.remMask / 2, f.remMask} {
			for _, c := range []uint64{1, 2, 3, 4, 5, 14, 15, 16, 17, 255, 256, 1000, 65537, 1 << 40, math.MaxUint64 - 1, math.MaxUint64} {
				enc := append([]uint64(nil), f.encode(x, c)...)
				if uint64(len(enc)) != f.encLen(x, c) {
					t.Fatalf("r=%d x=%d c=%d: encLen %d, encoding %v", r, x, c, f.encLen(x, c), enc)
				}
				for k, v := range enc {
					f.setRem(uint64(k), v)
				}
				// A larger remainder after the group, as in a run.
				end := uint64(len(enc) - 1)
				if x < f.remMask {
					f.setRem(end+1, f.remMask)
				}
				l, got, ok := f.groupAt(0, end)
				if !ok || got != c || l != uint64(len(enc)) {
					t.Fatalf("r=%d x=%d c=%d: decoded (%d, %d, %v) from %v", r, x, c, l, got, ok, enc)
				}
				if x < f.remMask {
					if l2, c2, ok := f.groupAt(0, end+1); !ok || l2 != l || c2 != c {
						t.Fatalf("r=%d x=%d c=%d: with a following group decoded (%d, %d)", r, x, c, l2, c2)
					}
				}
				if c > 2 && float64(len(enc)) > 5+math.Log(float64(c))/math.Log(base) {
					t.Fatalf("r=%d x=%d c=%d: %d slots is not logarithmic", r, x, c, len(enc))
				}
				for k := range enc {
					f.setRem(uint64(k), 0)
				}
				f.setRem(end+1, 0)
			}
		}
	}
}

// cqfOp is one step of a table-driven test: add or remove fingerprint
// (q, x) n times (default once).
type cqfOp struct {
	remove   bool
	q, x     uint64
	n        int
	wantFull bool
}

// TestCountingQuotientEdges is table-driven over block boundaries,
// saturated offsets (clusters over 255 slots), runs spilling into the
// overflow blocks until ErrFull, counters growing and shrinking in the
// middle and at the end of a run, and run heads removed mid-cluster.
func TestCountingQuotientEdges(t *testing.T) {
	many := func(q uint64, from, n int) []cqfOp {
		var ops []cqfOp
		for k := 0; k < n; k++ {
			ops = append(ops, cqfOp{q: q, x: uint64(from + k)})
		}
		return ops
	}
	cat := func(parts ...[]cqfOp) []cqfOp {
		var out []cqfOp
		for _, p := range parts {
			out = append(out, p...)
		}
		return out
	}
	cases := []struct {
		name string
		ops  []cqfOp
	}{
		{"run crosses a block boundary", cat(many(62, 1, 5), many(63, 1, 3), many(64, 7, 2), []cqfOp{{remove: true, q: 62, x: 1}, {remove: true, q: 63, x: 2}})},
		{"run at slot 0 of a block pushed by the previous block", cat(many(60, 1, 10), many(64, 1, 3), many(65, 9, 1), []cqfOp{{remove: true, q: 60, x: 3}})},
		{"saturated offsets", cat(many(0, 1, 400), many(70, 5, 20), many(200, 5, 10), many(0, 500, 3), []cqfOp{{remove: true, q: 0, x: 1}, {remove: true, q: 70, x: 5}, {remove: true, q: 0, x: 200}})},
		{"spill into overflow then ErrFull", cat(many(511, 1, 129), []cqfOp{{q: 511, x: 900, wantFull: true}, {q: 510, x: 3}, {q: 510, x: 4, wantFull: true}, {q: 200, x: 4, n: 3}, {remove: true, q: 511, x: 1}, {q: 510, x: 4}})},
		{"counters grow and shrink mid-run", []cqfOp{{q: 5, x: 1}, {q: 5, x: 9, n: 40}, {q: 5, x: 20}, {q: 6, x: 4}, {remove: true, q: 5, x: 9, n: 38}, {q: 5, x: 0, n: 30}, {remove: true, q: 5, x: 0, n: 29}}},
		{"counter at the run end", []cqfOp{{q: 9, x: 1}, {q: 9, x: 1000, n: 300}, {q: 10, x: 2}, {remove: true, q: 9, x: 1000, n: 300}}},
		{"run head removed mid-cluster", cat(many(20, 1, 3), many(21, 1, 3), many(22, 1, 3), []cqfOp{{remove: true, q: 21, x: 1}, {remove: true, q: 21, x: 2}, {remove: true, q: 21, x: 3}})},
		{"last home quotient, remainder 0 counter", []cqfOp{{q: 511, x: 0, n: 5}, {q: 511, x: 1}, {remove: true, q: 511, x: 0, n: 5}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newCountingQuotientShape(10, 8, uint32(cqfOverflowBlocks(8)))
			model := map[[2]uint64]uint64{}
			for _, op := range tc.ops {
				for k := 0; k < max(op.n, 1); k++ {
					h := cqfHash(f, op.q, op.x)
					if op.remove {
						if !f.RemoveHash(h) {
							t.Fatalf("remove (%d, %d) found nothing", op.q, op.x)
						}
						model[[2]uint64{op.q, op.x}]--
					} else {
						before := mustMarshal(t, f)
						err := f.AddHash(h)
						if op.wantFull {
							if !errors.Is(err, ErrFull) || !bytes.Equal(before, mustMarshal(t, f)) {
								t.Fatalf("add (%d, %d): err = %v, want ErrFull with no change", op.q, op.x, err)
							}
							continue
						}
						if err != nil {
							t.Fatalf("add (%d, %d): %v", op.q, op.x, err)
						}
						model[[2]uint64{op.q, op.x}]++
					}
					cqfMustValid(t, f)
				}
			}
			var total uint64
			for fp, c := range model {
				if got := f.CountHash(cqfHash(f, fp[0], fp[1])); got != c {
					t.Errorf("count of (%d, %d) = %d, want %d", fp[0], fp[1], got, c)
				}
				total += c
			}
			if uint64(f.Len()) != total {
				t.Errorf("Len %d, want %d", f.Len(), total)
			}
			if _, err := Unmarshal(mustMarshal(t, f)); err != nil {
				t.Fatal(err)
			}
		})
	}
	// The saturated case really saturates.
	f := newCountingQuotientShape(10, 8, uint32(cqfOverflowBlocks(8)))
	for x := uint64(1); x <= 400; x++ {
		if err := f.AddHash(cqfHash(f, 0, x)); err != nil {
			t.Fatal(err)
		}
	}
	if f.offByte(1) != cqfOffsetMax || f.offByte(2) != cqfOffsetMax || f.offByte(3) != 399-192 {
		t.Fatalf("offsets %d %d %d", f.offByte(1), f.offByte(2), f.offByte(3))
	}
}

// TestCountingQuotientMatchesModel runs random operations on tiny tables
// with 2- and 3-bit remainders, so counters, x = 0 groups and long
// clusters are common, checking every invariant and every count after each
// step.
func TestCountingQuotientMatchesModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	for trial := 0; trial < 60; trial++ {
		r := uint(2 + rng.IntN(2))
		home := uint32(1 + rng.IntN(3))
		f := newCountingQuotientShape(r, home, uint32(cqfOverflowBlocks(uint64(home))))
		model := map[[2]uint64]uint64{}
		var keys [][2]uint64
		qRange := f.nq
		if rng.IntN(2) == 0 {
			qRange = 8 // crowd a few quotients: long runs and clusters
		}
		for step := 0; step < 300; step++ {
			if len(keys) > 0 && rng.IntN(5) < 2 {
				k := rng.IntN(len(keys))
				fp := keys[k]
				if !f.RemoveHash(cqfHash(f, fp[0], fp[1])) {
					t.Fatalf("trial %d step %d: remove of member failed", trial, step)
				}
				model[fp]--
				keys[k] = keys[len(keys)-1]
				keys = keys[:len(keys)-1]
			} else {
				fp := [2]uint64{f.nq - 1 - rng.Uint64N(qRange), rng.Uint64N(1 << r)}
				if rng.IntN(3) == 0 && len(keys) > 0 {
					fp = keys[rng.IntN(len(keys))]
				}
				before := mustMarshal(t, f)
				if err := f.AddHash(cqfHash(f, fp[0], fp[1])); err != nil {
					if !errors.Is(err, ErrFull) || !bytes.Equal(before, mustMarshal(t, f)) {
						t.Fatalf("trial %d step %d: failed add: %v", trial, step, err)
					}
					continue
				}
				model[fp]++
				keys = append(keys, fp)
			}
			cqfMustValid(t, f)
			for fp, c := range model {
				if got := f.CountHash(cqfHash(f, fp[0], fp[1])); got != c {
					t.Fatalf("trial %d step %d: count (%d, %d) = %d, want %d", trial, step, fp[0], fp[1], got, c)
				}
			}
		}
	}
}

// TestCountingQuotientLayoutIndependentOfOrder: the table is a function of
// the multiset of fingerprints (runs sorted, packed left, canonical
// counters), whatever the order of operations.
func TestCountingQuotientLayoutIndependentOfOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	keys := make([]uint64, 3000)
	for i := range keys {
		keys[i] = rng.Uint64()
		if i%7 == 6 {
			keys[i] = keys[i-1-rng.IntN(5)]
		}
	}
	others := make([]uint64, 300)
	for i := range others {
		others[i] = rng.Uint64()
	}
	dynLayoutIndependentOfOrder(t, rng, keys, others, 4, func() dynFilter {
		f, err := NewCountingQuotient(len(keys)+len(others), 0.05)
		if err != nil {
			t.Fatal(err)
		}
		return f
	})
}

// churnCountingQuotient sets up a dynChurn holding the slot load at the
// limit, also checking after every batch that Count is exact for every
// member whose fingerprint no other distinct key shares (and never low),
// and that every ErrFull leaves slot use and, on small tables, the bytes
// unchanged.
func churnCountingQuotient(r uint, home uint32) dynChurnSetup {
	return func(t *testing.T) (string, dynFilter, dynChurnSpec) {
		f := newCountingQuotientShape(r, home, uint32(cqfOverflowBlocks(uint64(home))))
		bytesSnapshot, bytesUnchanged := dynBytesSnapshot(t, f, home <= 64)
		var used uint64
		return fmt.Sprintf("counting quotient r=%d", r), f, dynChurnSpec{
			stream:    0xc9f,
			nearFull:  func(int) bool { return f.used+3 >= f.maxUsed },
			snapshot:  func() { used = uint64(f.used); bytesSnapshot() },
			unchanged: func() bool { return uint64(f.used) == used && bytesUnchanged() },
			afterBatch: func(done int, members []uint64) {
				counts := map[uint64]uint64{} // hash -> copies
				for _, h := range members {
					counts[h]++
				}
				byFP := map[[2]uint64]int{}
				for h := range counts {
					q, x := f.split(h)
					byFP[[2]uint64{q, x}]++
				}
				for h, c := range counts {
					got := f.CountHash(h)
					q, x := f.split(h)
					if got < c || (byFP[[2]uint64{q, x}] == 1 && got != c) {
						t.Fatalf("op %d: count %d, model %d (sharing fingerprint: %d)", done, got, c, byFP[[2]uint64{q, x}])
					}
				}
			},
			final: func() { cqfMustValid(t, f) },
		}
	}
}

// TestCountingQuotientFalsePositiveRate fills distinct keys to the 95%
// limit and checks 1M absent keys: within 1.5x of the target (F4) and
// within ±20% of the model 1−exp(−α/2^r).
func TestCountingQuotientFalsePositiveRate(t *testing.T) {
	fresh := func(p float64) (*CountingQuotient, error) { return NewCountingQuotient(20000, p) }
	dynEachRate(t, []float64{0.0045, 0.02, 0.001}, 11, fresh, func(fpRate float64, f *CountingQuotient, rng *rand.Rand) {
		for f.AddHash(rng.Uint64()) == nil {
		}
		if f.LoadFactor() < 0.949 {
			t.Fatalf("first ErrFull at load %.4f", f.LoadFactor())
		}
		model := 1 - math.Exp(-f.LoadFactor()/math.Exp2(float64(f.r)))
		dynCheckFPRate(t, fmt.Sprintf("r=%d", f.r), f, rng, 1_000_000, fpRate, model)
	})
}

func TestCountingQuotientRoundTripAndCount(t *testing.T) {
	f, err := NewCountingQuotient(8000, 0.01) // 3000 keys take 7200 slots
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3000; i++ {
		k := []byte(fmt.Sprintf("key-%d", i))
		for c := 0; c <= i%5; c++ {
			if err := f.Add(k); err != nil {
				t.Fatal(err)
			}
		}
	}
	_, decoded := dynRoundTrip(t, dynCaseOf("CountingQuotient"), f, nil)
	d := decoded.(*CountingQuotient)
	for i := 0; i < 3000; i++ {
		k := []byte(fmt.Sprintf("key-%d", i))
		if !d.MayContain(k) || d.Count(k) < uint64(i%5+1) {
			t.Fatalf("key %d: count %d", i, d.Count(k))
		}
	}
	for i := 0; i < 3000; i++ {
		k := []byte(fmt.Sprintf("key-%d", i))
		for c := 0; c <= i%5; c++ {
			if !d.Remove(k) {
				t.Fatal("remove failed")
			}
		}
	}
	if d.Len() != 0 || d.Slots() != 0 || d.LoadFactor() != 0 {
		t.Fatal("not empty")
	}
	// A key added 200,000 times costs a handful of slots: r = 7, base 127,
	// 199,997 has three digits, so 5 slots.
	e, _ := NewCountingQuotient(100, 0.01)
	for i := 0; i < 200_000; i++ {
		if err := e.Add([]byte("hot")); err != nil {
			t.Fatal(err)
		}
	}
	if e.Count([]byte("hot")) != 200_000 || e.Slots() > 5 {
		t.Fatalf("count %d in %d slots", e.Count([]byte("hot")), e.Slots())
	}
}

func TestCountingQuotientDecodeRejectsCorruption(t *testing.T) {
	f := newCountingQuotientShape(4, 1, 1)
	for _, op := range []cqfOp{{q: 3, x: 2}, {q: 3, x: 5}, {q: 3, x: 5}, {q: 3, x: 5}, {q: 4, x: 0}, {q: 63, x: 7}, {q: 63, x: 9}} {
		if err := f.AddHash(cqfHash(f, op.q, op.x)); err != nil {
			t.Fatal(err)
		}
	}
	body := dynRejectsFlips(t, dynCaseOf("CountingQuotient"), f, 0x08)
	// Body: r, 3 reserved, home u32, overflow u32, used u64, total u64,
	// then blocks of 17 + 8r = 49 bytes: offset, occupieds, runends, rems.
	const b0 = 28
	rem := func(b []byte, s int, v byte) { // 4-bit remainders: two a byte
		p := b0 + (s/64)*49 + 17 + (s%64)/2
		if s%2 == 0 {
			b[p] = b[p]&0xf0 | v
		} else {
			b[p] = b[p]&0x0f | v<<4
		}
	}
	mutate := map[string]func(b []byte){
		"r = 1":                      func(b []byte) { b[0] = 1 },
		"r = 33":                     func(b []byte) { b[0] = 33 },
		"reserved":                   func(b []byte) { b[1] = 1 },
		"overflow blocks":            func(b []byte) { b[8] = 2 },
		"used disagrees":             func(b []byte) { b[12]++ },
		"total disagrees":            func(b []byte) { b[20]++ },
		"used past the limit":        func(b []byte) { b[12] = 61 },
		"offset wrong":               func(b []byte) { b[b0+49] = 3 },
		"occupied without run":       func(b []byte) { b[b0+1+1] |= 0x04 },
		"runend without quotient":    func(b []byte) { b[b0+9+5] |= 0x01 },
		"occupied in overflow":       func(b []byte) { b[b0+49+1] = 1 },
		"remainder in unused slot":   func(b []byte) { rem(b, 30, 3) },
		"run not ascending":          func(b []byte) { rem(b, 3, 6) },
		"counter not canonical":      func(b []byte) { rem(b, 5, 1) },
		"truncated":                  nil,
		"counter with no terminator": func(b []byte) { rem(b, 6, 4) },
	}
	dynRejectsBodies(t, dynCaseOf("CountingQuotient"), dynMutated(body, 1, mutate))
	assertRejectsVersionAndType(t, TypeCountingQuotient, TypeQuotient, body, new(CountingQuotient))
}

// FuzzCountingQuotientUnmarshal runs the dynamic battery's decoder fuzz on
// CountingQuotient; whatever decodes must also count exactly what it is
// given and still satisfy CQ1-CQ4.
func FuzzCountingQuotientUnmarshal(f *testing.F) { dynFuzz(f, dynCaseOf("CountingQuotient")) }
