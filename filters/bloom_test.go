package filters

import (
	"errors"
	"math"
	"math/big"
	"math/bits"
	"math/rand/v2"
	"testing"

	"github.com/sievekv/sievekv/internal/testutil/golden"
)

func TestOptimalBloomParams(t *testing.T) {
	cases := []struct {
		n    int
		p    float64
		m    uint64
		k    int
		note string
	}{
		// m = ceil(-n ln p / ln²2), k = max(1, round(m/n ln 2)), by hand.
		{1000, 0.01, 9586, 7, "-1000·ln 0.01/ln²2 = 9585.06; 9.586·ln 2 = 6.64"},
		{100, 0.001, 1438, 10, "1437.76 bits; 14.38·ln 2 = 9.97"},
		{1, 0.5, 2, 1, "1.44 bits; 2·ln 2 = 1.39"},
		{1, 0.99, 1, 1, "0.02 bits rounds up to 1; k floors at 1"},
		{1000000, 0.01, 9585059, 7, "the benchmark configuration"},
	}
	for _, c := range cases {
		m, k := OptimalBloomParams(c.n, c.p)
		if m != c.m || k != c.k {
			t.Errorf("OptimalBloomParams(%d, %v) = (%d, %d), want (%d, %d): %s", c.n, c.p, m, k, c.m, c.k, c.note)
		}
	}
	for _, bad := range []struct {
		n int
		p float64
	}{{0, 0.1}, {-5, 0.1}, {10, 0}, {10, 1}, {10, math.NaN()}, {math.MaxInt, 1e-300}} {
		if m, k := OptimalBloomParams(bad.n, bad.p); m != 0 || k != 0 {
			t.Errorf("OptimalBloomParams(%d, %v) = (%d, %d), want (0, 0)", bad.n, bad.p, m, k)
		}
	}
}

// TestNewBloomSizing: NewBloom keeps OptimalBloomParams' k and rounds m up to
// the next prime (which the distinct-probe guarantee needs).
func TestNewBloomSizing(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	for i := 0; i < 200; i++ {
		n := 1 + rng.IntN(200000)
		p := math.Pow(10, -1-4*rng.Float64())
		b, err := NewBloom(n, p)
		if err != nil {
			t.Fatal(err)
		}
		m, k := OptimalBloomParams(n, p)
		if b.K() != k || b.Bits() < m || !bloomIsPrime(b.Bits()) {
			t.Fatalf("NewBloom(%d, %v): m=%d k=%d; formula m=%d k=%d", n, p, b.Bits(), b.K(), m, k)
		}
		for q := m; q < b.Bits(); q++ {
			if bloomIsPrime(q) {
				t.Fatalf("NewBloom(%d, %v): m=%d skips the smaller prime %d", n, p, b.Bits(), q)
			}
		}
	}
}

func TestBloomPrimeAtLeast(t *testing.T) {
	// Trial division as the independent oracle.
	isPrime := func(x uint64) bool {
		if x < 2 {
			return false
		}
		for d := uint64(2); d*d <= x; d++ {
			if x%d == 0 {
				return false
			}
		}
		return true
	}
	for m := uint64(0); m < 20000; m++ {
		p := bloomPrimeAtLeast(m)
		if !isPrime(p) || p < m {
			t.Fatalf("bloomPrimeAtLeast(%d) = %d", m, p)
		}
		for q := max(m, 2); q < p; q++ {
			if isPrime(q) {
				t.Fatalf("bloomPrimeAtLeast(%d) = %d, but %d is prime", m, p, q)
			}
		}
	}
	// Large values against math/big (Baillie–PSW, exact below 2^64),
	// including strong pseudoprimes to small bases and a Carmichael number.
	rng := rand.New(rand.NewPCG(2, 3))
	specials := []uint64{2047, 1373653, 25326001, 3215031751, 2152302898747, 3474749660383,
		341550071728321, 3825123056546413051, 561, 1<<61 - 1, 1<<40 - 87, 1<<64 - 59, 1<<64 - 1}
	for i := 0; i < 20000; i++ {
		specials = append(specials, rng.Uint64N(1<<41)|1, rng.Uint64()|1)
	}
	for _, n := range specials {
		if got, want := bloomIsPrime(n), new(big.Int).SetUint64(n).ProbablyPrime(0); got != want {
			t.Fatalf("bloomIsPrime(%d) = %v, want %v", n, got, want)
		}
	}
}

// bloomCeilDiv returns the smallest x with reduce64(x, m) == pos: ceil(pos·2^64/m).
func bloomCeilDiv(pos, m uint64) uint64 {
	q, r := bits.Div64(pos, 0, m)
	if r != 0 {
		q++
	}
	return q
}

// bloomCraftHash returns a hash whose probe sequence over m starts at p0 with
// stride d (1 <= d < m), inverting bloomProbes. The high half of h picks p0,
// the low half picks d; each half is placed strictly inside its bucket. Needs
// m < 2^31.
func bloomCraftHash(p0, d, m uint64) uint64 {
	hi := bloomCeilDiv(p0, m)>>32 + 1
	lo := bloomCeilDiv(d-1, m-1)>>32 + 1
	return hi<<32 | lo
}

// bloomSetBits lists the set bits of b in increasing order.
func bloomSetBits(b *Bloom) []uint64 {
	var out []uint64
	for i := uint64(0); i < b.m; i++ {
		if b.bits.test(i) {
			out = append(out, i)
		}
	}
	return out
}

// TestBloomProbesDistinctEveryStride: for small prime m, every start and
// every stride (including d = m-1 ≡ -1 and strides whose raw hash half is a
// multiple of m, the classic degenerate h2) sets exactly k = m-1 distinct
// bits, the most any key may use.
func TestBloomProbesDistinctEveryStride(t *testing.T) {
	for _, m := range []uint64{2, 3, 5, 7, 11, 13, 31, 61, 67, 127, 131} {
		for d := uint64(1); d < m; d++ {
			for p0 := uint64(0); p0 < m; p0++ {
				h := bloomCraftHash(p0, d, m)
				if gp, gd := bloomProbes(h, m); gp != p0 || gd != d {
					t.Fatalf("m=%d: crafted hash %#x gives (p0=%d, d=%d), want (%d, %d)", m, h, gp, gd, p0, d)
				}
				k := int(m - 1)
				b := newBloomMK(m, max(k, 1))
				b.AddHash(h)
				if got := b.bits.count(); got != uint64(max(k, 1)) {
					t.Fatalf("m=%d p0=%d d=%d: %d distinct bits set, want %d", m, p0, d, got, k)
				}
			}
		}
	}
}

// TestBloomProbesDegenerateHashes: hashes that break naive double hashing
// (low half zero, low half a multiple of m, all ones, h = 0) still get k
// distinct probes in real, constructor-sized filters; so do random hashes.
func TestBloomProbesDegenerateHashes(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, cfg := range []struct {
		n int
		p float64
	}{{1, 0.01}, {3, 0.001}, {10, 0.1}, {1000, 0.01}, {100000, 0.001}} {
		proto, err := NewBloom(cfg.n, cfg.p)
		if err != nil {
			t.Fatal(err)
		}
		m := proto.m
		hashes := []uint64{0, ^uint64(0), 1, 1 << 32, m, m << 32, m<<32 | m, 2 * m, (m - 1) << 32,
			bits.RotateLeft64(m, 32), bits.RotateLeft64(2*m, 32), bits.RotateLeft64(m*m, 32)}
		for i := 0; i < 5000; i++ {
			hashes = append(hashes, rng.Uint64())
		}
		for _, h := range hashes {
			b := newBloomMK(m, proto.k)
			b.AddHash(h)
			if got := b.bits.count(); got != uint64(b.k) {
				t.Fatalf("n=%d p=%v m=%d k=%d: hash %#x set %d distinct bits, want k", cfg.n, cfg.p, m, b.k, h, got)
			}
		}
	}
}

// TestBloomProbesNeedPrimeM documents why m is prime: with a composite m the
// same stride construction collapses some keys onto fewer than k bits (here
// m = 12, stride 6 revisits p0 after two probes). This test fails if the
// guarantee stops depending on m, i.e. if it would hold without the prime.
func TestBloomProbesNeedPrimeM(t *testing.T) {
	const m = 12
	b := &Bloom{bits: newBitArray(m), bloomShape: bloomShape{m: m, k: 4}}
	b.AddHash(bloomCraftHash(0, 6, m))
	if got := b.bits.count(); got != 2 {
		t.Fatalf("composite m=12, stride 6: %d bits set, want the collapse to 2", got)
	}
}

// TestBloomBitBoundaries sets probes at bit 0, 63, 64, 127, 128 and m-1 (word
// edges and the array end) and checks exactly those bits change, and that a
// probe sequence wrapping past m-1 continues at the start.
func TestBloomBitBoundaries(t *testing.T) {
	const m = 131 // prime, three words, last word partial
	for _, pos := range []uint64{0, 63, 64, 127, 128, m - 1} {
		b := newBloomMK(m, 1)
		h := bloomCraftHash(pos, 1, m)
		b.AddHash(h)
		got := bloomSetBits(b)
		if len(got) != 1 || got[0] != pos {
			t.Fatalf("probe at %d set bits %v", pos, got)
		}
		if b.bits.words[pos>>6] != 1<<(pos&63) {
			t.Fatalf("probe at %d: word %d = %#x", pos, pos>>6, b.bits.words[pos>>6])
		}
		if !b.bits.tailClean() {
			t.Fatalf("probe at %d set bits past m", pos)
		}
		if !b.MayContainHash(h) {
			t.Fatalf("probe at %d: false negative", pos)
		}
		for _, other := range []uint64{(pos + 1) % m, (pos + m - 1) % m} {
			if b.MayContainHash(bloomCraftHash(other, 1, m)) {
				t.Fatalf("probe at %d: neighbour %d reported present", pos, other)
			}
		}
	}
	// Wrap-around: start at m-1 with stride 2 visits m-1, 1, 3.
	b := newBloomMK(m, 3)
	b.AddHash(bloomCraftHash(m-1, 2, m))
	if got := bloomSetBits(b); len(got) != 3 || got[0] != 1 || got[1] != 3 || got[2] != m-1 {
		t.Fatalf("wrapping probes set %v, want [1 3 %d]", got, m-1)
	}
	// Stride m-1 (≡ -1) walks backwards: 0, m-1, m-2.
	b = newBloomMK(m, 3)
	b.AddHash(bloomCraftHash(0, m-1, m))
	if got := bloomSetBits(b); len(got) != 3 || got[0] != 0 || got[1] != m-2 || got[2] != m-1 {
		t.Fatalf("stride m-1 set %v, want [0 %d %d]", got, m-2, m-1)
	}
}

// TestBloomEstimatedFPRateFormula: EstimatedFPRate is FillRatio^k exactly,
// checked on a hand-built state.
func TestBloomEstimatedFPRateFormula(t *testing.T) {
	b := newBloomMK(131, 3)
	for _, pos := range []uint64{0, 5, 70, 100, 130} {
		b.bits.set(pos)
	}
	if got, want := b.FillRatio(), 5.0/131; got != want {
		t.Fatalf("FillRatio = %v, want %v", got, want)
	}
	if got, want := b.EstimatedFPRate(), math.Pow(5.0/131, 3); math.Abs(got-want) > 1e-15 {
		t.Fatalf("EstimatedFPRate = %v, want %v", got, want)
	}
}

// TestBloomDecodeRejectsImpossibleParameters builds bodies with a valid
// envelope (so the checksum passes) but fields no encoder writes.
func TestBloomDecodeRejectsImpossibleParameters(t *testing.T) {
	body := bloomBody[[]uint64] // m, k, words
	cases := map[string][]byte{
		"m=0":                body(0, 1, nil),
		"m=1":                body(1, 1, []uint64{0}),
		"m composite":        body(129, 3, make([]uint64, 3)),
		"m huge":             body(1<<41+1, 3, nil),
		"k=0":                body(131, 0, make([]uint64, 3)),
		"k>=m":               body(3, 3, make([]uint64, 1)),
		"k huge":             body(131, 1<<31, make([]uint64, 3)),
		"bits past m":        body(131, 3, []uint64{0, 0, 1 << 3}),
		"too few words":      body(131, 3, make([]uint64, 2)),
		"trailing word":      body(131, 3, make([]uint64, 4)),
		"truncated field":    body(131, 3, nil)[:10],
		"words for 2^40":     body(1<<40-87, 3, make([]uint64, 3)), // refused before allocating
		"missing everything": nil,
	}
	good := body(131, 3, make([]uint64, 3))
	assertBodies(t, TypeBloom, bloomVersion, cases, map[string][]byte{"m=131 k=3": good})
	if _, err := Unmarshal(sealEnvelope(TypeBloom, bloomVersion+1, good)); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("unknown version: err = %v, want ErrCorrupt", err)
	}
}

// TestBloomGolden pins the Bloom encoding of NewBloom(4, 0.1) holding
// "a", "b", "c", "d": m = 23 (20 rounded up to a prime), k = 3.
func TestBloomGolden(t *testing.T) {
	b, err := NewBloom(4, 0.1)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"a", "b", "c", "d"} {
		b.Add([]byte(k))
	}
	if b.Bits() != 23 || b.K() != 3 {
		t.Fatalf("sizing changed: m=%d k=%d", b.Bits(), b.K())
	}
	enc := bloomMustMarshal(t, b)
	golden.Bytes(t, "bloom-v1", enc)
	// The pinned bytes must also decode to the same answers.
	f, err := Unmarshal(enc)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"a", "b", "c", "d"} {
		if !f.MayContain([]byte(k)) {
			t.Fatalf("golden filter lost %q", k)
		}
	}
}
