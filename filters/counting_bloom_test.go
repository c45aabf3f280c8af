package filters

import (
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/sievekv/sievekv/internal/testutil/golden"
)

// TestCountingBloomRemoveKeepsOthers: F1 for counting Bloom under removal.
// Add a random key set, remove a random half, and every key still present
// (directly and after a round trip) is reported; removing every key returns
// the filter to all-zero counters.
func TestCountingBloomRemoveKeepsOthers(t *testing.T) {
	for _, n := range []int{1, 1000, 100000} {
		c, err := NewCountingBloom(n, 0.01)
		if err != nil {
			t.Fatal(err)
		}
		empty := bloomMustMarshal(t, c)
		salt := rand.Uint64() >> 8
		keys := bloomKeys('p', salt, n)
		for _, k := range keys {
			c.Add(k)
		}
		rng := rand.New(rand.NewPCG(salt, 1))
		removed := make([]bool, n)
		for i := range keys {
			if rng.IntN(2) == 0 {
				if err := c.Remove(keys[i]); err != nil {
					t.Fatalf("n=%d: Remove of member %d: %v", n, i, err)
				}
				removed[i] = true
			}
		}
		var rt CountingBloom
		if err := rt.UnmarshalBinary(bloomMustMarshal(t, c)); err != nil {
			t.Fatal(err)
		}
		for i, k := range keys {
			if !removed[i] && (!c.MayContain(k) || !rt.MayContain(k)) {
				t.Fatalf("n=%d salt=%d: false negative for kept key %d after removals", n, salt, i)
			}
		}
		for i, k := range keys {
			if !removed[i] {
				if err := c.Remove(k); err != nil {
					t.Fatalf("n=%d: Remove of member %d: %v", n, i, err)
				}
			}
		}
		if string(bloomMustMarshal(t, c)) != string(empty) {
			t.Fatalf("n=%d: removing every key did not restore the empty filter", n)
		}
	}
}

// TestCountingBloomRemoveAbsent: a key with a zero counter is refused with
// ErrNotMember and the filter is unchanged.
func TestCountingBloomRemoveAbsent(t *testing.T) {
	c, _ := NewCountingBloom(1000, 0.01)
	for _, k := range bloomKeys('p', 9, 1000) {
		c.Add(k)
	}
	before := bloomMustMarshal(t, c)
	refused := 0
	for _, k := range bloomKeys('a', 9, 2000) {
		if c.MayContain(k) {
			continue // a false positive: Remove cannot tell, so do not try
		}
		err := c.Remove(k)
		if !errors.Is(err, ErrNotMember) {
			t.Fatalf("Remove of absent key: err = %v, want ErrNotMember", err)
		}
		refused++
	}
	if refused < 1900 {
		t.Fatalf("only %d of 2000 absent keys were provably absent", refused)
	}
	if string(bloomMustMarshal(t, c)) != string(before) {
		t.Fatal("refused Removes changed the filter")
	}
}

// TestCountingBloomSaturation: 17 keys share one counter (crafted hashes,
// k = 1), so it saturates at 15. Removing 16 of them must leave the 17th
// present: a saturated counter is never decremented. Decrementing it would
// reach zero after 15 removals, a false negative.
func TestCountingBloomSaturation(t *testing.T) {
	const m = 37
	for _, pos := range []uint64{0, 15, 16, m - 1} {
		c := newCountingBloomMK(m, 1)
		var hs []uint64
		for d := uint64(1); d <= 17; d++ { // same p0, different strides: distinct keys
			h := bloomCraftHash(pos, d, m)
			hs = append(hs, h)
			c.AddHash(h)
		}
		if got := c.counter(pos); got != countingBloomMax {
			t.Fatalf("pos %d: counter %d after 17 adds, want %d", pos, got, countingBloomMax)
		}
		for i := 0; i < 16; i++ {
			if err := c.RemoveHash(hs[i]); err != nil {
				t.Fatalf("pos %d: remove %d: %v", pos, i, err)
			}
		}
		if !c.MayContainHash(hs[16]) {
			t.Fatalf("pos %d: saturated counter was decremented to zero", pos)
		}
		for i := uint64(0); i < m; i++ {
			if want := map[bool]uint64{true: countingBloomMax, false: 0}[i == pos]; c.counter(i) != want {
				t.Fatalf("pos %d: counter %d = %d, want %d", pos, i, c.counter(i), want)
			}
		}
	}
	// Below saturation, counts are exact: 14 adds then 14 removes is empty.
	c := newCountingBloomMK(m, 1)
	h := bloomCraftHash(5, 1, m)
	for i := 0; i < 14; i++ {
		c.AddHash(h)
	}
	for i := 0; i < 14; i++ {
		if err := c.RemoveHash(h); err != nil {
			t.Fatal(err)
		}
	}
	if c.MayContainHash(h) || !errors.Is(c.RemoveHash(h), ErrNotMember) {
		t.Fatal("14 adds and 14 removes did not leave the counter at zero")
	}
}

// TestCountingBloomNibbleLayout checks the counter packing at word and byte
// boundaries: counter i is nibble i&1 of byte i>>1 of the encoding, and
// counters do not bleed into neighbours when incremented to 15.
func TestCountingBloomNibbleLayout(t *testing.T) {
	const m = 37 // prime and odd: the last byte's high nibble is padding
	for _, pos := range []uint64{0, 1, 15, 16, 31, 32, m - 1} {
		c := newCountingBloomMK(m, 1)
		h := bloomCraftHash(pos, 1, m)
		for i := 0; i < 20; i++ { // saturate: every bit of the nibble set
			c.AddHash(h)
		}
		for i := uint64(0); i < m; i++ {
			want := uint64(0)
			if i == pos {
				want = countingBloomMax
			}
			if c.counter(i) != want {
				t.Fatalf("pos %d: counter %d = %d, want %d", pos, i, c.counter(i), want)
			}
		}
		enc := bloomMustMarshal(t, c)
		counters := enc[envelopeHeaderSize+12 : len(enc)-envelopeTrailer]
		if len(counters) != (m+1)/2 {
			t.Fatalf("%d counter bytes, want %d", len(counters), (m+1)/2)
		}
		for i, b := range counters {
			want := byte(0)
			if uint64(i) == pos>>1 {
				want = 0x0f << (4 * (pos & 1))
			}
			if b != want {
				t.Fatalf("pos %d: byte %d = %#02x, want %#02x", pos, i, b, want)
			}
		}
		var rt CountingBloom
		if err := rt.UnmarshalBinary(enc); err != nil || rt.counter(pos) != countingBloomMax {
			t.Fatalf("pos %d: round trip: %v", pos, err)
		}
	}
}

func TestCountingBloomFillRatioCountsNonZeroCounters(t *testing.T) {
	c := newCountingBloomMK(37, 1)
	for i, pos := range []uint64{0, 15, 16, 36} {
		for j := 0; j <= i*5; j++ { // counters of 1, 6, 11 and 15 (saturated)
			c.AddHash(bloomCraftHash(pos, 1, 37))
		}
	}
	if got, want := c.FillRatio(), 4.0/37; got != want {
		t.Fatalf("FillRatio = %v, want %v", got, want)
	}
}

func TestCountingBloomDecodeRejectsImpossibleParameters(t *testing.T) {
	body := bloomBody[[]byte] // m, k, counters
	cases := map[string][]byte{
		"m composite":      body(35, 1, make([]byte, 18)),
		"m=1":              body(1, 1, make([]byte, 1)),
		"k=0":              body(37, 0, make([]byte, 19)),
		"k>=m":             body(37, 37, make([]byte, 19)),
		"padding nibble":   body(37, 1, append(make([]byte, 18), 0x10)),
		"short counters":   body(37, 1, make([]byte, 18)),
		"trailing byte":    body(37, 1, make([]byte, 20)),
		"huge m, no bytes": body(1<<40-87, 3, nil),
		"truncated header": body(37, 1, nil)[:7],
	}
	assertBodies(t, TypeCountingBloom, countingBloomVersion, cases, map[string][]byte{"m=37 k=1": body(37, 1, make([]byte, 19))})
}

func TestCountingBloomGolden(t *testing.T) {
	c, err := NewCountingBloom(4, 0.1)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"a", "b", "c", "d", "a"} { // "a" twice: counters of 2
		c.Add([]byte(k))
	}
	if err := c.Remove([]byte("d")); err != nil {
		t.Fatal(err)
	}
	golden.Bytes(t, "counting-bloom-v1", bloomMustMarshal(t, c))
}
