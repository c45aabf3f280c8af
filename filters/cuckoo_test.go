package filters

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"testing"

	"github.com/sievekv/sievekv/internal/testutil/golden"
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
	for _, bad := range []struct {
		n int
		p float64
	}{{0, 0.01}, {-1, 0.01}, {10, 0}, {10, 1}, {10, math.NaN()}, {10, 1e-5}} {
		if _, err := NewCuckoo(bad.n, bad.p); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("NewCuckoo(%d, %v): err = %v, want ErrInvalidArgument", bad.n, bad.p, err)
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

// fillCuckoo adds random hashes until the first ErrFull and returns them.
func fillCuckoo(t testing.TB, c *Cuckoo, rng *rand.Rand) []uint64 {
	var added []uint64
	for {
		h := rng.Uint64()
		if err := c.AddHash(h); err != nil {
			if !errors.Is(err, ErrFull) {
				t.Fatalf("AddHash: %v", err)
			}
			return added
		}
		added = append(added, h)
	}
}

func mustMarshal(t testing.TB, f interface{ MarshalBinary() ([]byte, error) }) []byte {
	t.Helper()
	b, err := f.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestCuckooFailedAddRollsBack is the bug the seed page's first version had:
// a walk that gives up must not drop the fingerprint it was carrying. The
// filter's bytes (table, count and random state) must be identical before and
// after every failed Add, and every added key must stay present (F1, F2).
func TestCuckooFailedAddRollsBack(t *testing.T) {
	for _, w := range []uint{8, 12, 16} {
		for _, lb := range []uint{0, 1, 3, 8} {
			c := newCuckooShape(lb, w)
			rng := rand.New(rand.NewPCG(uint64(w), uint64(lb)))
			added := fillCuckoo(t, c, rng)
			failures := 0
			for k := 0; k < 200; k++ {
				before := mustMarshal(t, c)
				h := rng.Uint64()
				err := c.AddHash(h)
				if err == nil {
					added = append(added, h)
					continue
				}
				failures++
				if !errors.Is(err, ErrFull) {
					t.Fatalf("err = %v, want ErrFull", err)
				}
				if after := mustMarshal(t, c); !bytes.Equal(before, after) {
					t.Fatalf("w=%d lb=%d: failed Add changed the filter", w, lb)
				}
			}
			if failures == 0 {
				t.Fatalf("w=%d lb=%d: no Add failed on a full filter", w, lb)
			}
			for _, h := range added {
				if !c.MayContainHash(h) {
					t.Fatalf("w=%d lb=%d: added key lost after failed Adds", w, lb)
				}
			}
			if c.Len() != len(added) {
				t.Fatalf("Len = %d, want %d", c.Len(), len(added))
			}
		}
	}
}

// TestCuckooReachesLoad95 checks the sizing assumption: with 4-slot buckets
// and 500 kicks the first ErrFull comes after 95% load.
func TestCuckooReachesLoad95(t *testing.T) {
	for _, w := range []uint{8, 12, 16} {
		for seed := uint64(0); seed < 3; seed++ {
			c := newCuckooShape(14, w)
			fillCuckoo(t, c, rand.New(rand.NewPCG(seed, uint64(w))))
			if c.LoadFactor() < cuckooMaxLoad {
				t.Errorf("w=%d seed=%d: first ErrFull at load %.4f, want >= %.2f", w, seed, c.LoadFactor(), cuckooMaxLoad)
			}
		}
	}
}

func TestCuckooDeterministic(t *testing.T) {
	build := func() []byte {
		c := newCuckooShape(6, 12)
		fillCuckoo(t, c, rand.New(rand.NewPCG(9, 9)))
		return mustMarshal(t, c)
	}
	if !bytes.Equal(build(), build()) {
		t.Fatal("the same operations gave different filters")
	}
}

func TestCuckooKeysAndRemove(t *testing.T) {
	c, err := NewCuckoo(1000, 0.01)
	if err != nil {
		t.Fatal(err)
	}
	key := func(i int) []byte {
		return []byte("key-" + string(rune('a'+i%26)) + "-" + hex.EncodeToString(binary.LittleEndian.AppendUint32(nil, uint32(i))))
	}
	for i := 0; i < 1000; i++ {
		if err := c.Add(key(i)); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 1000; i++ {
		if !c.MayContain(key(i)) || !c.MayContainHash(Hash(key(i))) {
			t.Fatalf("key %d missing", i)
		}
	}
	// Multiset: a second copy survives one Remove.
	if err := c.Add(key(0)); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 1000; i++ {
		if !c.Remove(key(i)) {
			t.Fatalf("Remove(key %d) found nothing", i)
		}
	}
	if c.Len() != 1 || !c.MayContain(key(0)) {
		t.Fatalf("after removing one of two copies: Len = %d, present = %v", c.Len(), c.MayContain(key(0)))
	}
	if !c.RemoveHash(Hash(key(0))) || c.Len() != 0 || c.LoadFactor() != 0 {
		t.Fatal("last copy not removed")
	}
	if c.Remove(key(0)) {
		t.Fatal("Remove on an empty filter reported success")
	}
}

// churnCuckoo runs ops random Add/Remove operations over a working set kept
// at the load where Adds start to fail, checking against a model multiset
// after every batch: no member may read absent (F1), Len must match, and
// every failed Add must leave table, count and random state untouched (F2).
func churnCuckoo(t *testing.T, logBuckets, w uint, ops, batch int, seed uint64) {
	c := newCuckooShape(logBuckets, w)
	rng := rand.New(rand.NewPCG(seed, 0xc0c0))
	var members []uint64 // the model multiset: one entry per stored copy
	// Hover just above 95%: past the sizing limit, where walks are long
	// and some fail (each failure costs 500 kicks, so not too many).
	target := int(float64(c.Cap()) * 0.962)
	fails := 0
	// Small tables are compared whole around every Add; for the soak's big
	// tables a copy per Add would dominate, so a failed Add is checked on
	// the buckets its walk touched (each must hold its first logged value).
	fullSnap := len(c.slots.words) <= 1<<12
	snap := make([]uint64, len(c.slots.words))
	for done := 0; done < ops; {
		for k := 0; k < batch && done < ops; k, done = k+1, done+1 {
			pAdd := 0.7
			if len(members) >= target {
				pAdd = 0.5
			}
			if len(members) == 0 || rng.Float64() < pAdd {
				var h uint64
				if len(members) > 0 && rng.IntN(10) == 0 {
					h = members[rng.IntN(len(members))] // a duplicate
				} else {
					h = rng.Uint64()
				}
				if fullSnap {
					copy(snap, c.slots.words)
				}
				count, state := c.count, c.rng
				if err := c.AddHash(h); err != nil {
					fails++
					if !errors.Is(err, ErrFull) {
						t.Fatal(err)
					}
					if (fullSnap && !slices.Equal(snap, c.slots.words)) || count != c.count || state != c.rng {
						t.Fatalf("op %d: failed Add changed the filter", done)
					}
					first := map[uint64]uint64{}
					for _, u := range c.undo {
						if _, seen := first[u.bucket]; !seen {
							first[u.bucket] = u.old
						}
					}
					for b, old := range first {
						if c.bucket(b) != old {
							t.Fatalf("op %d: failed Add left bucket %d changed", done, b)
						}
					}
					continue
				}
				members = append(members, h)
			} else {
				j := rng.IntN(len(members))
				h := members[j]
				members[j] = members[len(members)-1]
				members = members[:len(members)-1]
				if !c.RemoveHash(h) {
					t.Fatalf("op %d: RemoveHash of a member found nothing", done)
				}
			}
		}
		if c.Len() != len(members) {
			t.Fatalf("op %d: Len = %d, model holds %d", done, c.Len(), len(members))
		}
		for _, h := range members {
			if !c.MayContainHash(h) {
				t.Fatalf("op %d: false negative for a member", done)
			}
		}
	}
	if fails == 0 {
		t.Fatalf("w=%d: no Add failed; the churn never reached the limit", w)
	}
	t.Logf("w=%d: %d ops, %d failed adds, final load %.3f", w, ops, fails, c.LoadFactor())
}

func TestCuckooChurn(t *testing.T) {
	// 1M operations in all; most on 8-bit fingerprints, which collide most.
	churnCuckoo(t, 9, 8, 700_000, 10_000, 8)
	churnCuckoo(t, 9, 12, 150_000, 10_000, 12)
	churnCuckoo(t, 9, 16, 150_000, 10_000, 16)
}

func TestCuckooChurnSoak(t *testing.T) {
	if os.Getenv("SIEVEKV_SOAK") == "" {
		t.Skip("set SIEVEKV_SOAK=1")
	}
	// Bigger tables and batches: checking 250k members after every 10k
	// operations would dominate the run.
	for seed := uint64(0); seed < 2; seed++ {
		for _, w := range []uint{8, 12, 16} {
			churnCuckoo(t, 16, w, 10_000_000, 500_000, seed)
		}
	}
}

// TestCuckooFalsePositiveRate fills to the 95% load the constructor sizes
// for and measures 1M absent keys against the requested rate (F4).
func TestCuckooFalsePositiveRate(t *testing.T) {
	for _, fpRate := range []float64{0.032, 0.03, 0.002, 0.0005} {
		n := 100000
		c, err := NewCuckoo(n, fpRate)
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(1, uint64(fpRate*1e6)))
		for c.LoadFactor() < cuckooMaxLoad {
			if err := c.AddHash(rng.Uint64()); err != nil {
				t.Fatal(err)
			}
		}
		const absent = 1_000_000
		fp := 0
		for k := 0; k < absent; k++ {
			if c.MayContainHash(rng.Uint64()) {
				fp++
			}
		}
		rate := float64(fp) / absent
		if rate > 1.5*fpRate {
			t.Errorf("target %v (%d-bit): measured %.5f at load %.3f", fpRate, c.FingerprintBits(), rate, c.LoadFactor())
		}
		// The rate also should not be far below the fingerprint's own
		// prediction 1-(1-1/fpMax)^(8·load): a lower one would mean the
		// lookup is not checking both buckets' four slots.
		want := 1 - math.Pow(1-1/float64(c.fpMax), 8*c.LoadFactor())
		if rate < 0.8*want || rate > 1.2*want {
			t.Errorf("%d-bit: measured %.6f, model predicts %.6f", c.FingerprintBits(), rate, want)
		}
	}
}

func TestCuckooRoundTrip(t *testing.T) {
	for _, w := range []uint{8, 12, 16} {
		c := newCuckooShape(7, w)
		rng := rand.New(rand.NewPCG(3, uint64(w)))
		added := fillCuckoo(t, c, rng)
		enc := mustMarshal(t, c)
		f, err := Unmarshal(enc)
		if err != nil {
			t.Fatal(err)
		}
		d := f.(*Cuckoo)
		var d2 Cuckoo
		if err := d2.UnmarshalBinary(enc); err != nil {
			t.Fatal(err)
		}
		for _, h := range added {
			if !d.MayContainHash(h) || !d2.MayContainHash(h) {
				t.Fatal("decoded filter lost a key")
			}
		}
		if !bytes.Equal(mustMarshal(t, d), enc) || d.Len() != c.Len() {
			t.Fatal("re-encoding differs")
		}
		// The decoded filter continues exactly as the original would.
		h := rng.Uint64()
		e1, e2 := c.AddHash(h), d.AddHash(h)
		if (e1 == nil) != (e2 == nil) || !bytes.Equal(mustMarshal(t, c), mustMarshal(t, d)) {
			t.Fatal("decoded filter diverged from the original")
		}
	}
}

func TestCuckooDecodeRejectsCorruption(t *testing.T) {
	c := newCuckooShape(3, 12)
	fillCuckoo(t, c, rand.New(rand.NewPCG(5, 5)))
	enc := mustMarshal(t, c)
	for i := range enc {
		bad := append([]byte(nil), enc...)
		bad[i] ^= 0x10
		if _, err := Unmarshal(bad); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("flip at byte %d: err = %v, want ErrCorrupt", i, err)
		}
		var d Cuckoo
		if err := d.UnmarshalBinary(bad); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("flip at byte %d: UnmarshalBinary err = %v", i, err)
		}
	}
	_, body, err := openTyped(enc, typeCuckoo)
	if err != nil {
		t.Fatal(err)
	}
	// Structurally impossible bodies under a valid checksum.
	mutate := map[string]func(b []byte){
		"count disagrees with slots": func(b []byte) { b[4]++ },
		"width 10":                   func(b []byte) { b[0] = 10 },
		"3 slots per bucket":         func(b []byte) { b[1] = 3 },
		"wrong bucket count":         func(b []byte) { b[2]++ },
		"huge bucket count":          func(b []byte) { b[2] = 60 },
		"reserved byte":              func(b []byte) { b[3] = 1 },
		"bit in spare word":          func(b []byte) { b[len(b)-1] = 0x80 },
		"word count":                 func(b []byte) { b[20]++ },
	}
	for name, m := range mutate {
		b := append([]byte(nil), body...)
		m(b)
		if _, err := Unmarshal(sealEnvelope(typeCuckoo, cuckooVersion, b)); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: err = %v, want ErrCorrupt", name, err)
		}
	}
	assertRejectsVersionAndType(t, typeCuckoo, typeBloom, body, new(Cuckoo))
}

// TestCuckooGolden pins the encoding (docs/parts/format-dyn.md, worked
// example): one 12-bit bucket holding "a" and "b".
func TestCuckooGolden(t *testing.T) {
	c, err := NewCuckoo(2, 0.01)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"a", "b"} {
		if err := c.Add([]byte(k)); err != nil {
			t.Fatal(err)
		}
	}
	golden.Bytes(t, "cuckoo-v1", mustMarshal(t, c))
}

// FuzzCuckooUnmarshal decodes the input both as a whole encoding and as a
// body sealed under a valid envelope (so the structural checks behind the
// checksum get exercised too), then queries and mutates whatever decodes.
func FuzzCuckooUnmarshal(f *testing.F) {
	for _, w := range []uint{8, 12, 16} {
		c := newCuckooShape(2, w)
		fillCuckoo(f, c, rand.New(rand.NewPCG(1, uint64(w))))
		enc := mustMarshal(f, c)
		f.Add(enc)
		f.Add(enc[envelopeHeaderSize : len(enc)-envelopeTrailer])
		e := newCuckooShape(0, w)
		f.Add(mustMarshal(f, e))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		exerciseCuckooDecode(t, data)
		exerciseCuckooDecode(t, sealEnvelope(typeCuckoo, cuckooVersion, data))
	})
}

func exerciseCuckooDecode(t *testing.T, data []byte) {
	fl, err := Unmarshal(data)
	if err != nil {
		if !errors.Is(err, ErrCorrupt) {
			t.Fatalf("error %v does not wrap ErrCorrupt", err)
		}
		return
	}
	c, ok := fl.(*Cuckoo)
	if !ok {
		return // another filter type's valid encoding
	}
	if enc := mustMarshal(t, c); !bytes.Equal(enc, data) {
		t.Fatal("accepted encoding does not round-trip")
	}
	// Any accepted filter must answer and mutate without panicking and keep
	// its count consistent.
	rng := rand.New(rand.NewPCG(uint64(len(data)), 1))
	for k := 0; k < 64; k++ {
		h := rng.Uint64()
		c.MayContainHash(h)
		if c.AddHash(h) == nil {
			if !c.MayContainHash(h) || !c.RemoveHash(h) {
				t.Fatal("added key missing")
			}
		}
	}
	if c.Len() < 0 || c.Len() > c.Cap() {
		t.Fatalf("Len %d outside [0, %d]", c.Len(), c.Cap())
	}
}
