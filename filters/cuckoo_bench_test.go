package filters

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	seiflotfy "github.com/seiflotfy/cuckoofilter"
)

// The comparison with github.com/seiflotfy/cuckoofilter (docs/parts/
// filters-dyn.md). seiflotfy.NewFilter(1_000_000) rounds up to 2^20 slots
// of 8-bit fingerprints. Both sides get a table of 2^20 slots: NewCuckoo is
// asked for 0.95·2^20 = 996147 keys (its sizing rule keeps n/slots ≤ 0.95,
// so n = 1,000,000 would double the table). Op timings are taken while
// holding cuckooBenchFill keys, 90.6% load for both.
const (
	cuckooBenchSlots = 1 << 20
	cuckooBenchN     = 996147 // 0.95 · 2^20
	cuckooBenchFill  = 950000
)

// cuckooBenchKeys returns 16-byte random keys carved out of one flat
// buffer each, so the garbage collector has two objects to scan instead of
// two million, and GC work does not leak into the timings.
var cuckooBenchKeys = sync.OnceValues(func() (present, absent [][]byte) {
	rng := rand.New(rand.NewPCG(42, 42))
	mk := func(n int) [][]byte {
		flat := make([]byte, 16*n)
		for i := 0; i < len(flat); i += 8 {
			binary.LittleEndian.PutUint64(flat[i:], rng.Uint64())
		}
		out := make([][]byte, n)
		for i := range out {
			out[i] = flat[16*i : 16*i+16 : 16*i+16]
		}
		return out
	}
	return mk(cuckooBenchFill), mk(1_000_000)
})

// cuckooImpl adapts both filters to one benchmark body.
type cuckooImpl struct {
	name   string
	fresh  func(b *testing.B) (add func([]byte) bool, remove func([]byte) bool, has func([]byte) bool)
	eps    float64
	filled func() (bitsTotal float64)
}

func cuckooImpls(eps float64) []cuckooImpl {
	return []cuckooImpl{
		{name: "sievekv", eps: eps, fresh: func(b *testing.B) (func([]byte) bool, func([]byte) bool, func([]byte) bool) {
			c, err := NewCuckoo(cuckooBenchN, eps)
			if err != nil {
				b.Fatal(err)
			}
			if c.Cap() != cuckooBenchSlots {
				b.Fatalf("sievekv table has %d slots, want %d", c.Cap(), cuckooBenchSlots)
			}
			return func(k []byte) bool { return c.Add(k) == nil }, c.Remove, c.MayContain
		}},
		{name: "seiflotfy", eps: eps, fresh: func(b *testing.B) (func([]byte) bool, func([]byte) bool, func([]byte) bool) {
			c := seiflotfy.NewFilter(1_000_000)
			return c.Insert, c.Delete, c.Lookup
		}},
		// Not part of the comparison the issue asks for: our quotient filter
		// on the same 2^20 slots (load limit 0.95), for the trade-off memo.
		{name: "quotient95", eps: eps, fresh: func(b *testing.B) (func([]byte) bool, func([]byte) bool, func([]byte) bool) {
			f, err := NewQuotientWithLoad(cuckooBenchN, eps, QuotientMaxLoad)
			if err != nil {
				b.Fatal(err)
			}
			if f.QuotientBits() != 20 {
				b.Fatalf("quotient table has 2^%d slots", f.QuotientBits())
			}
			return func(k []byte) bool { return f.Add(k) == nil }, f.Remove, f.MayContain
		}},
	}
}

// BenchmarkCuckooOps interleaves the two implementations op by op, so that
// machine noise hits both alike; compare ratios, not absolute times.
func BenchmarkCuckooOps(b *testing.B) {
	present, absent := cuckooBenchKeys()
	for _, eps := range []float64{0.032, 0.001} {
		for _, op := range []string{"Add", "Remove", "ContainPresent", "ContainAbsent"} {
			for _, impl := range cuckooImpls(eps) {
				b.Run(fmt.Sprintf("eps=%v/%s/%s", eps, op, impl.name), func(b *testing.B) {
					add, remove, has := impl.fresh(b)
					fill := func() {
						for _, k := range present {
							if !add(k) {
								b.Fatal("insert failed below the fill level")
							}
						}
					}
					switch op {
					case "Add":
						b.ResetTimer()
						for i, j := 0, 0; i < b.N; i, j = i+1, j+1 {
							if j == len(present) {
								b.StopTimer()
								add, remove, has = impl.fresh(b)
								j = 0
								b.StartTimer()
							}
							add(present[j])
						}
					case "Remove":
						fill()
						b.ResetTimer()
						for i, j := 0, 0; i < b.N; i, j = i+1, j+1 {
							if j == len(present) {
								b.StopTimer()
								fill()
								j = 0
								b.StartTimer()
							}
							remove(present[j])
						}
					case "ContainPresent", "ContainAbsent":
						fill()
						keys := present
						if op == "ContainAbsent" {
							keys = absent
						}
						hits := 0
						b.ReportAllocs()
						b.ResetTimer()
						for i := 0; i < b.N; i++ {
							if has(keys[i%len(keys)]) {
								hits++
							}
						}
						if op == "ContainPresent" && hits != b.N {
							b.Fatalf("%d of %d present keys missing", b.N-hits, b.N)
						}
					}
				})
			}
		}
	}
}

// BenchmarkCuckooFill fills a fresh 2^20-slot table until the first failed
// insert and reports the load reached, the bits per stored key at that load,
// and the false-positive rate measured on 1M absent keys.
func BenchmarkCuckooFill(b *testing.B) {
	_, absent := cuckooBenchKeys()
	for _, eps := range []float64{0.032, 0.001} {
		for _, name := range []string{"sievekv", "seiflotfy", "quotient95"} {
			b.Run(fmt.Sprintf("eps=%v/%s", eps, name), func(b *testing.B) {
				var load, bitsPerKey, fpr float64
				for i := 0; i < b.N; i++ {
					rng := rand.New(rand.NewPCG(uint64(i), 7))
					key := make([]byte, 16)
					next := func() []byte {
						binary.LittleEndian.PutUint64(key, rng.Uint64())
						binary.LittleEndian.PutUint64(key[8:], rng.Uint64())
						return key
					}
					var has func([]byte) bool
					var count, bitsTotal float64
					switch name {
					case "sievekv":
						c, err := NewCuckoo(cuckooBenchN, eps)
						if err != nil {
							b.Fatal(err)
						}
						for c.Add(next()) == nil {
						}
						has, count = c.MayContain, float64(c.Len())
						bitsTotal = float64(c.Cap() * c.FingerprintBits())
					case "seiflotfy":
						c := seiflotfy.NewFilter(1_000_000)
						for c.Insert(next()) {
						}
						has, count = c.Lookup, float64(c.Count())
						bitsTotal = cuckooBenchSlots * 8
					case "quotient95":
						f, err := NewQuotientWithLoad(cuckooBenchN, eps, QuotientMaxLoad)
						if err != nil {
							b.Fatal(err)
						}
						for f.Add(next()) == nil {
						}
						has, count = f.MayContain, float64(f.Len())
						bitsTotal = float64(uint64(1)<<f.QuotientBits()) * float64(f.RemainderBits()+3)
					}
					fp := 0
					for _, k := range absent {
						if has(k) {
							fp++
						}
					}
					load = count / cuckooBenchSlots
					bitsPerKey = bitsTotal / count
					fpr = float64(fp) / float64(len(absent))
				}
				b.ReportMetric(load, "load")
				b.ReportMetric(bitsPerKey, "bits/key")
				b.ReportMetric(fpr*100, "fp%")
			})
		}
	}
}
