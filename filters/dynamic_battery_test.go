package filters

// The battery every dynamic filter (Cuckoo, Quotient, CountingQuotient,
// VectorQuotient, Morton, Vacuum) runs: F1 (no false negatives) through
// round trips, Add/Remove churn against a model multiset and fuzzed
// decodes; F2 (a failed Add changes nothing); F3 (bytes are checked); and
// allocation-free queries. Each filter plugs in through a dynCase; its own
// test file keeps only what is specific to it (sizing, layouts, FP models,
// corruption tables, golden bytes). Helpers are prefixed "dyn".

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/sievekv/sievekv/internal/testutil"
	"github.com/sievekv/sievekv/internal/testutil/golden"
)

// dynFilter is the method set the six dynamic filters share.
type dynFilter interface {
	Filter
	Add(key []byte) error
	AddHash(h uint64) error
	Remove(key []byte) bool
	RemoveHash(h uint64) bool
	Len() int
	LoadFactor() float64
	UnmarshalBinary(data []byte) error
}

// dynCapped is the capacity all dynamic filters but CountingQuotient (whose
// capacity depends on how many keys repeat) report.
type dynCapped interface{ Cap() int }

// dynCounter is CountingQuotient's multiplicity query.
type dynCounter interface{ CountHash(h uint64) uint64 }

// dynCase adapts one dynamic filter to the battery.
type dynCase struct {
	name    string
	typ     Type
	version uint8
	// zero returns an empty value to decode into.
	zero func() dynFilter
	// fresh builds a filter sized for n keys at rate p.
	fresh func(n int, p float64) (dynFilter, error)
	// shapes returns small filters of varied widths and table sizes, for
	// the round-trip and rollback tests and as fuzz seeds once filled.
	shapes func() []dynFilter
	// sizedLoad is the load the constructor sizes for, which the first
	// ErrFull must come after on the loadShapes (0: not promised).
	sizedLoad  float64
	loadShapes func() []dynFilter
	loadSeeds  uint64
	// tooPrecise is a false-positive rate finer than the filter's widest
	// fingerprint can give.
	tooPrecise float64
	// check verifies the filter's structural invariants (nil: none beyond
	// what decoding checks).
	check func(t testing.TB, f dynFilter)
	// golden is the filter's pinned encoding, the worked example of its
	// section in docs/format.md.
	golden dynGolden
	// churns are TestDynamicChurn's runs, soaks TestDynamicChurnSoak's
	// (bigger tables, SIEVEKV_SOAK=1).
	churns, soaks []dynChurnRun
}

// dynGolden is a small filter whose encoding is pinned: fresh(n, rate) with
// keys added in order, compared with testdata/golden/<file>.hex.
type dynGolden struct {
	file string
	n    int
	rate float64
	keys []string
}

var dynCases = []dynCase{
	{
		name: "Cuckoo", tooPrecise: 1e-5, typ: TypeCuckoo, version: cuckooVersion,
		golden: dynGolden{file: "cuckoo-v1", n: 2, rate: 0.01, keys: []string{"a", "b"}}, // one 12-bit bucket holding "a" and "b" (type 9)
		zero:   func() dynFilter { return new(Cuckoo) },
		// With 4-slot buckets and 500 kicks.
		sizedLoad: cuckooMaxLoad, loadSeeds: 3,
		loadShapes: func() []dynFilter {
			return []dynFilter{newCuckooShape(14, 8), newCuckooShape(14, 12), newCuckooShape(14, 16)}
		},
		fresh: func(n int, p float64) (dynFilter, error) { return NewCuckoo(n, p) },
		shapes: func() []dynFilter {
			return dynShapeGrid([]uint{8, 12, 16}, []uint{0, 1, 3, 7}, newCuckooShape)
		},
		// 1M operations in all; most on 8-bit fingerprints, which collide
		// most. The soak's bigger tables take bigger batches: checking 250k
		// members after every 10k operations would dominate the run.
		churns: []dynChurnRun{{churnCuckoo(9, 8), 350_000, 10_000, 8}, {churnCuckoo(9, 12), 75_000, 10_000, 12}, {churnCuckoo(9, 16), 75_000, 10_000, 16}},
		soaks:  dynSoakSeeds(2, dynChurnRun{churnCuckoo(16, 8), 10_000_000, 500_000, 0}, dynChurnRun{churnCuckoo(16, 12), 10_000_000, 500_000, 0}, dynChurnRun{churnCuckoo(16, 16), 10_000_000, 500_000, 0}),
	},
	{
		name: "Quotient", tooPrecise: 1e-30, typ: TypeQuotient, version: quotientVersion,
		golden: dynGolden{file: "quotient-v1", n: 2, rate: 0.1, keys: []string{"a", "b"}}, // a 4-slot filter holding "a" and "b" (type 10)
		zero:   func() dynFilter { return new(Quotient) },
		fresh:  func(n int, p float64) (dynFilter, error) { return NewQuotient(n, p) },
		shapes: func() []dynFilter {
			return []dynFilter{newQuotientShape(1, 1, 0.5), newQuotientShape(3, 4, 0.95), newQuotientShape(5, 2, 0.75), newQuotientShape(7, 8, QuotientDefaultLoad)}
		},
		check: func(t testing.TB, f dynFilter) { t.Helper(); qfMustScan(t, f.(*Quotient)) },
		// 1M operations in all; at load 0.95 each one moves long clusters.
		churns: []dynChurnRun{{churnQuotient(12, 8, QuotientDefaultLoad), 450_000, 10_000, 1}, {churnQuotient(8, 6, QuotientMaxLoad), 50_000, 10_000, 2}},
		soaks:  dynSoakSeeds(2, dynChurnRun{churnQuotient(16, 8, QuotientDefaultLoad), 10_000_000, 500_000, 0}, dynChurnRun{churnQuotient(12, 4, QuotientMaxLoad), 2_000_000, 100_000, 0}),
	},
	{
		name: "CountingQuotient", tooPrecise: 1e-12, typ: TypeCountingQuotient, version: countingQuotientVersion,
		golden: dynGolden{file: "counting-quotient-v1", n: 2, rate: 0.1, keys: []string{"a", "b", "a"}}, // "a" twice and "b" once (type 12)
		zero:   func() dynFilter { return new(CountingQuotient) },
		fresh:  func(n int, p float64) (dynFilter, error) { return NewCountingQuotient(n, p) },
		shapes: func() []dynFilter {
			return []dynFilter{newCountingQuotientShape(2, 1, 1), newCountingQuotientShape(4, 1, 1), newCountingQuotientShape(8, 3, uint32(cqfOverflowBlocks(3)))}
		},
		check: func(t testing.TB, f dynFilter) { t.Helper(); cqfMustValid(t, f.(*CountingQuotient)) },
		// Sized to keep the package's -race run short (each Add at the limit
		// is also marshalled twice); the soak runs 14M operations on bigger
		// tables.
		churns: []dynChurnRun{{churnCountingQuotient(8, 16), 25_000, 5_000, 1}, {churnCountingQuotient(4, 8), 15_000, 5_000, 2}, {churnCountingQuotient(10, 96), 20_000, 10_000, 3}},
		soaks:  dynSoakSeeds(2, dynChurnRun{churnCountingQuotient(8, 4096), 5_000_000, 500_000, 0}, dynChurnRun{churnCountingQuotient(4, 64), 2_000_000, 100_000, 0}),
	},
	{
		name: "VectorQuotient", tooPrecise: 1e-6, typ: TypeVectorQuotient, version: vectorQuotientVersion,
		golden:    dynGolden{file: "vector-quotient-v1", n: 2, rate: 0.01, keys: []string{"a", "b"}}, // one 8-bit block holding "a" and "b" (type 13)
		zero:      func() dynFilter { return new(VectorQuotient) },
		sizedLoad: VectorQuotientLoad, loadSeeds: 3,
		loadShapes: func() []dynFilter {
			return []dynFilter{newVectorQuotientShape(8, 3001), newVectorQuotientShape(16, 3001)}
		},
		fresh: func(n int, p float64) (dynFilter, error) { return NewVectorQuotient(n, p) },
		shapes: func() []dynFilter {
			return []dynFilter{newVectorQuotientShape(8, 1), newVectorQuotientShape(16, 2), newVectorQuotientShape(8, 33), newVectorQuotientShape(16, 33)}
		},
		check: func(t testing.TB, f dynFilter) { t.Helper(); vqfCheck(t, f.(*VectorQuotient)) },
		// Sized to keep the package's -race run short; the soak runs 30M
		// operations.
		churns: []dynChurnRun{{churnVectorQuotient(8, 61), 50_000, 5_000, 1}, {churnVectorQuotient(16, 37), 30_000, 5_000, 2}, {churnVectorQuotient(8, 500), 75_000, 25_000, 3}},
		soaks:  dynSoakSeeds(2, dynChurnRun{churnVectorQuotient(8, 20000), 10_000_000, 500_000, 0}, dynChurnRun{churnVectorQuotient(16, 20000), 5_000_000, 500_000, 0}),
	},
	{
		name: "Morton", tooPrecise: 1e-6, typ: TypeMorton, version: mortonVersion,
		golden:    dynGolden{file: "morton-v1", n: 3, rate: 0.05, keys: []string{"a", "b", "c"}}, // type 14
		zero:      func() dynFilter { return new(Morton) },
		sizedLoad: mortonMaxLoad, loadSeeds: 2,
		loadShapes: func() []dynFilter {
			return []dynFilter{newMortonShape(2000, 8), newMortonShape(2000, 12), newMortonShape(2000, 16)}
		},
		fresh: func(n int, p float64) (dynFilter, error) { return NewMorton(n, p) },
		shapes: func() []dynFilter {
			return dynShapeGrid([]uint{5, 8, 11, 16}, []uint64{1, 2, 5, 40}, newMortonShape)
		},
		// 400k operations on 37 blocks (not a power of two); narrow
		// fingerprints collide most.
		churns: []dynChurnRun{{mortonChurn(37, 5, 0.97), 50_000, 10_000, 5}, {mortonChurn(37, 8, 0.97), 100_000, 10_000, 8}, {mortonChurn(37, 13, 0.97), 50_000, 10_000, 13}},
		soaks:  dynSoakSeeds(2, dynChurnRun{mortonChurn(3001, 8, 0.965), 5_000_000, 200_000, 0}),
	},
	{
		name: "Vacuum", tooPrecise: 1e-5, typ: TypeVacuum, version: vacuumVersion,
		golden: dynGolden{file: "vacuum-v1", n: 3, rate: 0.05, keys: []string{"a", "b", "c"}}, // type 15
		zero:   func() dynFilter { return new(Vacuum) },
		fresh:  func(n int, p float64) (dynFilter, error) { return NewVacuum(n, p) },
		shapes: func() []dynFilter {
			return dynShapeGrid([]uint{4, 8, 11, 16}, [][2]uint64{{0, 1}, {1, 3}, {3, 5}, {6, 3}},
				func(shape [2]uint64, w uint) *Vacuum { return newVacuumShape(uint(shape[0]), shape[1], w) })
		},
		// 400k operations; 4- and 8-bit fingerprints collide most. The
		// table (13 chunks of 64 buckets) is not a power of two.
		churns: []dynChurnRun{{vacuumChurn(6, 13, 4, 0.96), 50_000, 10_000, 4}, {vacuumChurn(6, 13, 8, 0.96), 100_000, 10_000, 8}, {vacuumChurn(6, 13, 12, 0.96), 50_000, 10_000, 12}},
		soaks:  dynSoakSeeds(2, dynChurnRun{vacuumChurn(10, 37, 8, 0.955), 5_000_000, 200_000, 0}),
	},
}

// dynShapeGrid returns a filter of every fingerprint width and table size,
// widths outermost, for the filters whose constructor takes a size and a
// width.
func dynShapeGrid[S any, F dynFilter](widths []uint, sizes []S, shape func(size S, w uint) F) (fs []dynFilter) {
	for _, w := range widths {
		for _, s := range sizes {
			fs = append(fs, shape(s, w))
		}
	}
	return fs
}

// TestDynamicGolden pins each filter's encoding (docs/format.md, the
// filter's section and its worked example), so a format cannot drift by
// accident.
func TestDynamicGolden(t *testing.T) {
	for _, c := range dynCases {
		t.Run(c.name, func(t *testing.T) {
			f, err := c.fresh(c.golden.n, c.golden.rate)
			if err != nil {
				t.Fatal(err)
			}
			for _, k := range c.golden.keys {
				if err := f.Add([]byte(k)); err != nil {
					t.Fatal(err)
				}
			}
			golden.Bytes(t, c.golden.file, mustMarshal(t, f))
		})
	}
}

// dynCaseOf returns the battery's adapter for the filter named name.
func dynCaseOf(name string) dynCase {
	for _, c := range dynCases {
		if c.name == name {
			return c
		}
	}
	panic("no dynamic filter case " + name)
}

// dynShapeName labels a shape in failure messages.
func dynShapeName(c dynCase, i int, f dynFilter) string {
	return fmt.Sprintf("%s shape %d (load %.3f)", c.name, i, f.LoadFactor())
}

func mustMarshal(t testing.TB, f interface{ MarshalBinary() ([]byte, error) }) []byte {
	t.Helper()
	b, err := f.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// dynFill adds random hashes until the first ErrFull and returns them.
func dynFill(t testing.TB, f dynFilter, rng *rand.Rand) []uint64 {
	t.Helper()
	var added []uint64
	for {
		h := rng.Uint64()
		if err := f.AddHash(h); err != nil {
			if !errors.Is(err, ErrFull) {
				t.Fatalf("AddHash: %v", err)
			}
			return added
		}
		added = append(added, h)
	}
}

// dynFPRate measures the false-positive rate on absent random hashes.
func dynFPRate(f Filter, rng *rand.Rand, absent int) float64 {
	fp := 0
	for k := 0; k < absent; k++ {
		if f.MayContainHash(rng.Uint64()) {
			fp++
		}
	}
	return float64(fp) / float64(absent)
}

// dynCheckFPRate measures absent random hashes against f and fails unless
// the rate is within 1.5x of the target (F4) and within ±20% of the
// filter's own model at the load reached (a lookup that skipped slots it
// should compare would measure low).
func dynCheckFPRate(t *testing.T, label string, f dynFilter, rng *rand.Rand, absent int, target, model float64) {
	t.Helper()
	rate := dynFPRate(f, rng, absent)
	if rate > 1.5*target {
		t.Errorf("%s: target %v, measured %.5f at load %.3f", label, target, rate, f.LoadFactor())
	}
	if rate < 0.8*model || rate > 1.2*model {
		t.Errorf("%s: measured %.6f, model %.6f at load %.3f", label, rate, model, f.LoadFactor())
	}
}

// dynEachRate builds a filter with fresh for each target rate and hands it
// to check with a generator seeded from seed and the rate, for the filters'
// false-positive tests.
func dynEachRate[F dynFilter](t *testing.T, rates []float64, seed uint64, fresh func(p float64) (F, error), check func(fpRate float64, f F, rng *rand.Rand)) {
	t.Helper()
	for _, fpRate := range rates {
		f, err := fresh(fpRate)
		if err != nil {
			t.Fatal(err)
		}
		check(fpRate, f, rand.New(rand.NewPCG(seed, uint64(fpRate*1e6))))
	}
}

// dynFailedAddRollsBack fills f, then tries more Adds: every failed one must
// leave the marshalled bytes (table, count, generator state) unchanged, and
// every added key must stay present (F1, F2).
func dynFailedAddRollsBack(t *testing.T, name string, f dynFilter, seed uint64, attempts int) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 0xfa11))
	added := dynFill(t, f, rng)
	failures := 0
	for k := 0; k < attempts; k++ {
		before := mustMarshal(t, f)
		h := rng.Uint64()
		err := f.AddHash(h)
		if err == nil {
			added = append(added, h)
			continue
		}
		failures++
		if !errors.Is(err, ErrFull) {
			t.Fatalf("%s: err = %v, want ErrFull", name, err)
		}
		if after := mustMarshal(t, f); !bytes.Equal(before, after) {
			t.Fatalf("%s: failed Add changed the filter", name)
		}
	}
	if failures == 0 {
		t.Fatalf("%s: no Add failed on a full filter", name)
	}
	for _, h := range added {
		if !f.MayContainHash(h) {
			t.Fatalf("%s: added key lost after failed Adds", name)
		}
	}
	if f.Len() != len(added) {
		t.Fatalf("%s: Len = %d, want %d", name, f.Len(), len(added))
	}
}

// TestDynamicFailedAddRollsBack: the bug cuckoo's first version had, a
// walk that gives up dropping the fingerprint it carried, must not exist in
// any dynamic filter, at any width or table size.
func TestDynamicFailedAddRollsBack(t *testing.T) {
	for _, c := range dynCases {
		for i, f := range c.shapes() {
			attempts := 60
			if c.name == "Cuckoo" {
				attempts = 200 // long walks: the case the bug needed
			}
			dynFailedAddRollsBack(t, fmt.Sprintf("%s shape %d", c.name, i), f, uint64(i)<<8|uint64(len(c.name)), attempts)
		}
	}
}

// dynRoundTrip encodes f and decodes it through Unmarshal and the typed
// UnmarshalBinary: both must hold every added hash, re-encode to the same
// bytes and report the same Len. It returns the two decoded filters.
func dynRoundTrip(t *testing.T, c dynCase, f dynFilter, added []uint64) (dynFilter, dynFilter) {
	t.Helper()
	enc := mustMarshal(t, f)
	fl, err := Unmarshal(enc)
	if err != nil {
		t.Fatalf("%s: Unmarshal: %v", c.name, err)
	}
	d, ok := fl.(dynFilter)
	if !ok || reflect.TypeOf(fl) != reflect.TypeOf(c.zero()) {
		t.Fatalf("%s: Unmarshal gave a %T", c.name, fl)
	}
	d2 := c.zero()
	if err := d2.UnmarshalBinary(enc); err != nil {
		t.Fatalf("%s: UnmarshalBinary: %v", c.name, err)
	}
	for _, h := range added {
		if !d.MayContainHash(h) || !d2.MayContainHash(h) {
			t.Fatalf("%s: decoded filter lost a key", c.name)
		}
	}
	if !bytes.Equal(mustMarshal(t, d), enc) || !bytes.Equal(mustMarshal(t, d2), enc) || d.Len() != f.Len() || d2.Len() != f.Len() {
		t.Fatalf("%s: re-encoding differs", c.name)
	}
	return d, d2
}

// TestDynamicRoundTrip fills each shape to the first ErrFull and round
// trips it; the decoded filter then continues exactly as the original
// would (the encoding holds all state, random generators included), and
// removing everything leaves it empty.
func TestDynamicRoundTrip(t *testing.T) {
	for _, c := range dynCases {
		for i, f := range c.shapes() {
			rng := rand.New(rand.NewPCG(3, uint64(i)))
			added := dynFill(t, f, rng)
			d, _ := dynRoundTrip(t, c, f, added)
			name := dynShapeName(c, i, f)
			for k := 0; k < 20; k++ {
				h := rng.Uint64()
				if k%2 == 0 {
					f.RemoveHash(added[0]) // so that some Adds succeed again
					d.RemoveHash(added[0])
					added = added[1:]
				}
				e1, e2 := f.AddHash(h), d.AddHash(h)
				if (e1 == nil) != (e2 == nil) || !bytes.Equal(mustMarshal(t, f), mustMarshal(t, d)) {
					t.Fatalf("%s: decoded filter diverged from the original", name)
				}
				if e2 == nil {
					added = append(added, h)
				}
			}
			for _, h := range added {
				if !d.RemoveHash(h) {
					t.Fatalf("%s: remove failed", name)
				}
			}
			if d.Len() != 0 || d.LoadFactor() != 0 {
				t.Fatalf("%s: not empty after removing everything", name)
			}
		}
	}
}

// TestDynamicKeysAndRemove drives the key API: 1000 keys present before and
// after a round trip, multiset semantics (a second copy survives one
// Remove), and Remove on an empty filter failing.
func TestDynamicKeysAndRemove(t *testing.T) {
	key := func(i int) []byte { return []byte(fmt.Sprintf("key-%c-%d", 'a'+i%26, i)) }
	for _, c := range dynCases {
		f, err := c.fresh(1000, 0.01)
		if err != nil {
			t.Fatal(err)
		}
		var hashes []uint64
		for i := 0; i < 1000; i++ {
			if err := f.Add(key(i)); err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			hashes = append(hashes, Hash(key(i)))
		}
		d, _ := dynRoundTrip(t, c, f, hashes)
		for i := 0; i < 1000; i++ {
			if !f.MayContain(key(i)) || !d.MayContain(key(i)) {
				t.Fatalf("%s: key %d missing", c.name, i)
			}
		}
		if err := f.Add(key(0)); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		for i := 0; i < 1000; i++ {
			if !f.Remove(key(i)) {
				t.Fatalf("%s: Remove(key %d) found nothing", c.name, i)
			}
		}
		if f.Len() != 1 || !f.MayContain(key(0)) {
			t.Fatalf("%s: after removing one of two copies: Len = %d, present = %v", c.name, f.Len(), f.MayContain(key(0)))
		}
		if !f.RemoveHash(Hash(key(0))) || f.Len() != 0 || f.LoadFactor() != 0 || f.Remove(key(0)) {
			t.Fatalf("%s: last copy not removed, or Remove on an empty filter succeeded", c.name)
		}
	}
}

// TestDynamicQueriesDoNotAllocate: lookups (and counts) allocate nothing;
// the benchmarks' query loops and the engine's read path rely on it.
func TestDynamicQueriesDoNotAllocate(t *testing.T) {
	key := []byte("some key")
	for _, c := range dynCases {
		f, err := c.fresh(3000, 0.01)
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(1, 1))
		for i := 0; i < 900; i++ {
			h := rng.Uint64()
			if f.AddHash(h) != nil {
				t.Fatalf("%s: add failed", c.name)
			}
			if i%3 == 0 && f.AddHash(h) != nil { // duplicates: counters, repeated fingerprints
				t.Fatalf("%s: add failed", c.name)
			}
		}
		counter, _ := f.(dynCounter)
		if a := testing.AllocsPerRun(100, func() {
			h := rng.Uint64()
			f.MayContainHash(h)
			f.MayContain(key)
			if counter != nil {
				counter.CountHash(h)
			}
		}); a != 0 {
			t.Fatalf("%s: %v allocations per query", c.name, a)
		}
	}
}

// dynChurnSpec adapts dynChurn to one filter.
type dynChurnSpec struct {
	// stream seeds the operation sequence together with the test's seed.
	stream uint64
	// nearFull reports, given the model's size, that the load is at the
	// limit; Adds and Removes are then equally likely.
	nearFull func(members int) bool
	// mayFail reports, just before an Add, whether ErrFull is allowed
	// (nil: always).
	mayFail func() bool
	// snapshot records the filter's state just before an Add; unchanged
	// reports whether a failed Add left it as recorded (F2).
	snapshot  func()
	unchanged func() bool
	// afterBatch checks more of the model after each batch (nil: none).
	afterBatch func(op int, members []uint64)
	// final checks structural invariants at the end (nil: none).
	final func()
}

// dynStateSnapshot builds snapshot/unchanged from a function that appends
// the filter's raw state to dst; the two buffers are reused, so a churn
// allocates nothing per Add.
func dynStateSnapshot(state func(dst []uint64) []uint64) (func(), func() bool) {
	var snap, cur []uint64
	return func() { snap = state(snap[:0]) }, func() bool { cur = state(cur[:0]); return slices.Equal(snap, cur) }
}

// dynBytesSnapshot builds snapshot/unchanged from the encoding when compare
// is true (small tables), and from nothing (Len is still checked) else.
func dynBytesSnapshot(t testing.TB, f dynFilter, compare bool) (func(), func() bool) {
	var before []byte
	return func() {
			if compare {
				before = mustMarshal(t, f)
			}
		}, func() bool {
			return !compare || bytes.Equal(before, mustMarshal(t, f))
		}
}

// dynLoadAbove is a nearFull for a filter with a fixed capacity: the model
// holds target·Cap keys.
func dynLoadAbove(f dynCapped, target float64) func(int) bool {
	limit := int(float64(f.Cap()) * target)
	return func(members int) bool { return members >= limit }
}

// dynChurn runs ops random Add/Remove operations (10% of Adds duplicate a
// member) hovering at the load where Adds start to fail, against a model
// multiset: after every batch no member may read absent (F1) and Len must
// match; a failed Add must leave the filter as it was (F2), and some Adds
// must fail (else the churn never reached the limit).
func dynChurn(t *testing.T, name string, f dynFilter, s dynChurnSpec, ops, batch int, seed uint64) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, s.stream))
	var members []uint64 // one entry per stored copy
	fails := 0
	for done := 0; done < ops; {
		for k := 0; k < batch && done < ops; k, done = k+1, done+1 {
			pAdd := 0.7
			if s.nearFull(len(members)) {
				pAdd = 0.5
			}
			if len(members) == 0 || rng.Float64() < pAdd {
				h := rng.Uint64()
				if len(members) > 0 && rng.IntN(10) == 0 {
					h = members[rng.IntN(len(members))]
				}
				mayFail := s.mayFail == nil || s.mayFail()
				s.snapshot()
				if err := f.AddHash(h); err != nil {
					fails++
					if !mayFail || !errors.Is(err, ErrFull) {
						t.Fatalf("%s op %d: AddHash: %v (failure allowed: %v)", name, done, err, mayFail)
					}
					if !s.unchanged() || f.Len() != len(members) {
						t.Fatalf("%s op %d: failed Add changed the filter", name, done)
					}
					continue
				}
				members = append(members, h)
			} else {
				j := rng.IntN(len(members))
				h := members[j]
				members[j] = members[len(members)-1]
				members = members[:len(members)-1]
				if !f.RemoveHash(h) {
					t.Fatalf("%s op %d: RemoveHash of a member found nothing", name, done)
				}
			}
		}
		if f.Len() != len(members) {
			t.Fatalf("%s op %d: Len = %d, model holds %d", name, done, f.Len(), len(members))
		}
		for _, h := range members {
			if !f.MayContainHash(h) {
				t.Fatalf("%s op %d: false negative for a member", name, done)
			}
		}
		if s.afterBatch != nil {
			s.afterBatch(done, members)
		}
	}
	if s.final != nil {
		s.final()
	}
	if fails == 0 {
		t.Fatalf("%s: no Add failed; the churn never reached the limit", name)
	}
	t.Logf("%s: %d ops, %d failed adds, final load %.3f", name, ops, fails, f.LoadFactor())
}

// dynChurnSetup builds one churn's filter and spec, and names it for
// failure messages.
type dynChurnSetup = func(t *testing.T) (name string, f dynFilter, s dynChurnSpec)

// dynChurnRun is one dynChurn: ops operations in batches of batch from
// seed, on what setup builds.
type dynChurnRun struct {
	setup      dynChurnSetup
	ops, batch int
	seed       uint64
}

// dynSoakSeeds runs each of runs once per seed 0..seeds-1, all runs of one
// seed before the next.
func dynSoakSeeds(seeds uint64, runs ...dynChurnRun) []dynChurnRun {
	var out []dynChurnRun
	for seed := uint64(0); seed < seeds; seed++ {
		for _, r := range runs {
			r.seed = seed
			out = append(out, r)
		}
	}
	return out
}

// dynRunChurns runs each case's churns (or soaks) in a subtest per filter.
func dynRunChurns(t *testing.T, runs func(c dynCase) []dynChurnRun) {
	for _, c := range dynCases {
		t.Run(c.name, func(t *testing.T) {
			for _, r := range runs(c) {
				name, f, spec := r.setup(t)
				dynChurn(t, name, f, spec, r.ops, r.batch, r.seed)
			}
		})
	}
}

// TestDynamicChurn: random Add/Remove hovering at each filter's limit
// against a model multiset (dynChurn), on tables small enough for the
// package's -race run.
func TestDynamicChurn(t *testing.T) {
	dynRunChurns(t, func(c dynCase) []dynChurnRun { return c.churns })
}

// TestDynamicChurnSoak is TestDynamicChurn on bigger tables, tens of
// millions of operations (SIEVEKV_SOAK=1).
func TestDynamicChurnSoak(t *testing.T) {
	testutil.SkipUnlessSoak(t)
	dynRunChurns(t, func(c dynCase) []dynChurnRun { return c.soaks })
}

// dynRawStateChurn is the spec of a churn on a lane-table filter f (Morton,
// Vacuum) held above target load, whose raw state (table, count, random
// state) state appends: it is compared around every Add.
func dynRawStateChurn(f dynCapped, target float64, state func(dst []uint64) []uint64) dynChurnSpec {
	snapshot, unchanged := dynStateSnapshot(state)
	return dynChurnSpec{stream: 0xc4c4, nearFull: dynLoadAbove(f, target), snapshot: snapshot, unchanged: unchanged}
}

// dynRejectsFlips encodes f and checks that flipping bits mask of any one
// byte of the encoding gives ErrCorrupt from Unmarshal and from the typed
// decoder, and returns the encoding's body, for the structural checks
// behind the checksum.
func dynRejectsFlips(t *testing.T, c dynCase, f dynFilter, mask byte) []byte {
	t.Helper()
	enc := mustMarshal(t, f)
	for i := range enc {
		bad := append([]byte(nil), enc...)
		bad[i] ^= mask
		if _, err := Unmarshal(bad); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("%s: flip at byte %d: err = %v, want ErrCorrupt", c.name, i, err)
		}
		if err := c.zero().UnmarshalBinary(bad); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("%s: flip at byte %d: UnmarshalBinary err = %v", c.name, i, err)
		}
	}
	_, body, err := openTyped(enc, c.typ)
	if err != nil {
		t.Fatalf("%s: %v", c.name, err)
	}
	return body
}

// dynRejectsBodies seals each body under a valid envelope of c's type and
// version and checks that decoding refuses it with ErrCorrupt: the
// structural checks behind the checksum.
func dynRejectsBodies(t *testing.T, c dynCase, bodies map[string][]byte) {
	t.Helper()
	assertBodies(t, c.typ, c.version, bodies, nil)
}

// dynMutated applies each mutation to a copy of body; a nil mutation
// truncates the copy by cut bytes.
func dynMutated(body []byte, cut int, mutations map[string]func(b []byte)) map[string][]byte {
	out := make(map[string][]byte, len(mutations))
	for name, m := range mutations {
		b := append([]byte(nil), body...)
		if m == nil {
			b = b[:len(b)-cut]
		} else {
			m(b)
		}
		out[name] = b
	}
	return out
}

// dynWalkMutations returns own plus the corruptions of the frame the
// random-walk filters share (Cuckoo, Vacuum, Morton; dynamic_body.go), for
// a body whose walk state starts at byte at: a reserved header byte set, a
// count the table disagrees with, and a wrong word count.
func dynWalkMutations(at int, own map[string]func(b []byte)) map[string]func(b []byte) {
	m := map[string]func(b []byte){
		"reserved byte":              func(b []byte) { b[3] = 1 },
		"count disagrees with slots": func(b []byte) { b[at]++ },
		"word count":                 func(b []byte) { b[at+16]++ },
	}
	maps.Copy(m, own)
	return m
}

// assertRejectsVersionAndType checks that a valid body of type typ is
// refused (ErrCorrupt) under an unknown format version, and by into's
// UnmarshalBinary when the envelope names another type.
func assertRejectsVersionAndType(t *testing.T, typ, other Type, body []byte, into interface{ UnmarshalBinary([]byte) error }) {
	t.Helper()
	if _, err := Unmarshal(sealEnvelope(typ, 2, body)); !errors.Is(err, ErrCorrupt) {
		t.Errorf("version 2: err = %v", err)
	}
	if err := into.UnmarshalBinary(sealEnvelope(other, 1, body)); !errors.Is(err, ErrCorrupt) {
		t.Errorf("wrong type: err = %v", err)
	}
}

// dynFuzz is the body of each dynamic filter's Fuzz<Name>Unmarshal: seeds
// are every shape's encoding empty and filled to the first ErrFull, and the
// filled body alone; each input is decoded as a whole encoding and as a
// body sealed under a valid envelope (so the structural checks behind the
// checksum get exercised too).
func dynFuzz(f *testing.F, c dynCase) {
	for i, g := range c.shapes() {
		f.Add(mustMarshal(f, g))
		dynFill(f, g, rand.New(rand.NewPCG(1, uint64(i))))
		enc := mustMarshal(f, g)
		f.Add(enc)
		f.Add(enc[envelopeHeaderSize : len(enc)-envelopeTrailer])
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		exerciseDynDecode(t, c, data)
		exerciseDynDecode(t, c, sealEnvelope(c.typ, c.version, data))
	})
}

// exerciseDynDecode checks that an accepted encoding of c's type
// round-trips, and that the decoded filter answers, counts and mutates
// without panicking: every added key stays present and removable, Len stays
// within capacity, and the structural invariants still hold.
func exerciseDynDecode(t *testing.T, c dynCase, data []byte) {
	fl, err := Unmarshal(data)
	if err != nil {
		if !errors.Is(err, ErrCorrupt) {
			t.Fatalf("error %v does not wrap ErrCorrupt", err)
		}
		return
	}
	if reflect.TypeOf(fl) != reflect.TypeOf(c.zero()) {
		return // another filter type's valid encoding
	}
	d := fl.(dynFilter)
	if enc := mustMarshal(t, d); !bytes.Equal(enc, data) {
		t.Fatal("accepted encoding does not round-trip")
	}
	counter, _ := d.(dynCounter)
	rng := rand.New(rand.NewPCG(uint64(len(data)), 1))
	var added []uint64
	for k := 0; k < 64; k++ {
		h := rng.Uint64()
		if k%4 == 0 {
			h = 7 // repeats: counters and duplicate fingerprints
		}
		var before uint64
		if counter != nil {
			before = counter.CountHash(h)
		}
		d.MayContainHash(h)
		if d.AddHash(h) != nil {
			continue
		}
		added = append(added, h)
		if counter != nil && counter.CountHash(h) != before+1 {
			t.Fatal("added key miscounted")
		}
		for _, a := range added {
			if !d.MayContainHash(a) {
				t.Fatal("added key missing")
			}
		}
	}
	for _, a := range added {
		if !d.RemoveHash(a) {
			t.Fatal("added key not removable")
		}
	}
	if capped, ok := d.(dynCapped); ok && (d.Len() < 0 || d.Len() > capped.Cap()) {
		t.Fatalf("Len %d outside [0, %d]", d.Len(), capped.Cap())
	}
	if c.check != nil {
		c.check(t, d)
	}
}

// TestDynamicRejectsBadArguments: constructors refuse key counts below one
// and rates outside (0, 1) or finer than the fingerprints allow.
func TestDynamicRejectsBadArguments(t *testing.T) {
	for _, c := range dynCases {
		for _, bad := range []struct {
			n int
			p float64
		}{{0, 0.01}, {-1, 0.01}, {10, 0}, {10, 1}, {10, math.NaN()}, {10, c.tooPrecise}} {
			if _, err := c.fresh(bad.n, bad.p); !errors.Is(err, ErrInvalidArgument) {
				t.Errorf("%s(%d, %v): err = %v, want ErrInvalidArgument", c.name, bad.n, bad.p, err)
			}
		}
	}
}

// dynLayoutIndependentOfOrder builds orders filters with fresh from keys
// in random orders, the later ones with others added in between and
// removed again, and fails unless all encode identically: the table is a
// function of the multiset of fingerprints.
func dynLayoutIndependentOfOrder(t *testing.T, rng *rand.Rand, keys, others []uint64, orders int, fresh func() dynFilter) {
	t.Helper()
	var first []byte
	for order := 0; order < orders; order++ {
		f := fresh()
		for k, i := range rng.Perm(len(keys)) {
			if err := f.AddHash(keys[i]); err != nil {
				t.Fatal(err)
			}
			if order > 0 && k < len(others) {
				if err := f.AddHash(others[k]); err != nil {
					t.Fatal(err)
				}
			}
		}
		if order > 0 {
			for _, i := range rng.Perm(len(others)) {
				if !f.RemoveHash(others[i]) {
					t.Fatal("remove failed")
				}
			}
		}
		enc := mustMarshal(t, f)
		if order == 0 {
			first = enc
		} else if !bytes.Equal(enc, first) {
			t.Fatalf("order %d gave a different layout", order)
		}
	}
}

// TestDynamicReachesLoad checks the constructors' sizing assumption: the
// first ErrFull comes only past the load they size for, with every added
// key present.
func TestDynamicReachesLoad(t *testing.T) {
	for _, c := range dynCases {
		for seed := uint64(0); seed < c.loadSeeds; seed++ {
			for i, f := range c.loadShapes() {
				added := dynFill(t, f, rand.New(rand.NewPCG(seed, uint64(i))))
				if f.LoadFactor() < c.sizedLoad {
					t.Errorf("%s shape %d seed %d: first ErrFull at load %.4f, want >= %.2f", c.name, i, seed, f.LoadFactor(), c.sizedLoad)
				}
				for _, h := range added {
					if !f.MayContainHash(h) {
						t.Fatalf("%s shape %d: false negative", c.name, i)
					}
				}
			}
		}
	}
}
