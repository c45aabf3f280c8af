package filters

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"testing"

	seiflotfy "github.com/seiflotfy/cuckoofilter"
)

// Benchmarks for the Morton and vacuum filters against our cuckoo and
// quotient filters and github.com/seiflotfy/cuckoofilter (docs/filters.md,
// "Morton and vacuum (n = 1M, ε = 0.4%)"), at n = 1M and ε = 0.4% (seiflotfy has 8-bit
// fingerprints only, ~3%).
//
//	go test -run '^$' -bench 'NewDynInterleaved' -benchtime 2x -count 5 ./filters/
//	go test -run '^$' -bench 'NewDynFill' -benchtime 1x -count 1 ./filters/

const (
	newdynEps = 0.004
	// newdynHold is the load every filter holds while its lookups are
	// timed: above 90%, the high-load regime these filters are built for.
	newdynHold = 0.92
)

// newdynBenchKeys returns 16-byte random keys carved out of flat buffers
// (two objects for the garbage collector instead of two million).
var newdynBenchKeys = sync.OnceValues(func() (present, absent [][]byte) {
	rng := rand.New(rand.NewPCG(4242, 17))
	return flatRandomKeys(rng, 2_100_000), flatRandomKeys(rng, 1_000_000)
})

// newdynImpl is one filter under test, built fresh for each cycle.
type newdynImpl struct {
	name  string
	build func(tb testing.TB, n int) dynBenchFilter
}

func newdynImpls(eps float64) []newdynImpl {
	return []newdynImpl{
		{"morton", func(tb testing.TB, n int) dynBenchFilter {
			m, err := NewMorton(n, eps)
			if err != nil {
				tb.Fatal(err)
			}
			return dynBenchFilter{func(k []byte) bool { return m.Add(k) == nil }, m.Remove, m.MayContain, m.Len, m.LoadFactor, m.Cap(), float64(m.SizeBits())}
		}},
		{"vacuum", func(tb testing.TB, n int) dynBenchFilter {
			v, err := NewVacuum(n, eps)
			if err != nil {
				tb.Fatal(err)
			}
			return dynBenchFilter{func(k []byte) bool { return v.Add(k) == nil }, v.Remove, v.MayContain, v.Len, v.LoadFactor, v.Cap(), float64(v.Cap() * v.FingerprintBits())}
		}},
		{"cuckoo", func(tb testing.TB, n int) dynBenchFilter {
			c, err := NewCuckoo(n, eps)
			if err != nil {
				tb.Fatal(err)
			}
			return dynBenchFilter{func(k []byte) bool { return c.Add(k) == nil }, c.Remove, c.MayContain, c.Len, c.LoadFactor, c.Cap(), float64(c.Cap() * c.FingerprintBits())}
		}},
		{"quotient95", func(tb testing.TB, n int) dynBenchFilter {
			f, err := NewQuotientWithLoad(n, eps, QuotientMaxLoad)
			if err != nil {
				tb.Fatal(err)
			}
			slots := 1 << f.QuotientBits()
			return dynBenchFilter{func(k []byte) bool { return f.Add(k) == nil }, f.Remove, f.MayContain, f.Len, f.LoadFactor, slots, float64(slots * (f.RemainderBits() + 3))}
		}},
		{"seiflotfy", func(tb testing.TB, n int) dynBenchFilter {
			c := seiflotfy.NewFilter(uint(n))
			slots := 4 * int(math.Exp2(math.Ceil(math.Log2(float64(n)/4))))
			return dynBenchFilter{c.Insert, c.Delete, c.Lookup, func() int { return int(c.Count()) },
				func() float64 { return float64(c.Count()) / float64(slots) }, slots, float64(slots * 8)}
		}},
	}
}

// newdynBenchN is the n each filter is sized for in the timing cycle. Our
// cuckoo and quotient filters and seiflotfy round their tables up to 2^20
// slots for n = 996,147 (= 0.95·2^20: n = 1M would double ours); Morton and
// vacuum are sized for 1M.
func newdynBenchN(name string) int {
	switch name {
	case "cuckoo", "quotient95":
		return 996147
	case "seiflotfy":
		return 1_000_000
	}
	return 1_000_000
}

// BenchmarkNewDynInterleaved times one cycle per iteration on fresh
// filters (dynBenchCycles): Add keys until the filter holds 92% of its
// slots, query those keys (present) and as many absent keys, Remove them
// all; compare the reported ratios to our cuckoo filter, not absolute
// times.
func BenchmarkNewDynInterleaved(b *testing.B) {
	present, absent := newdynBenchKeys()
	var sides []dynBenchSide
	for _, im := range newdynImpls(newdynEps) {
		sides = append(sides, dynBenchSide{im.name, func() (dynBenchFilter, int) {
			f := im.build(b, newdynBenchN(im.name))
			return f, int(newdynHold * float64(f.slots))
		}})
	}
	dynBenchCycles(b, sides, present, absent, nil)
}

// BenchmarkNewDynFill fills each filter, sized for n (1M, and the sizes
// that are not powers of two 1.1M and 1.5M), until its first failed Add,
// and reports the load reached, bits per key there, bits per key as sized
// for n, the ratio of bits per key at the limit to log2(1/ε), and the FP
// rate on 1M absent keys.
func BenchmarkNewDynFill(b *testing.B) {
	present, absent := newdynBenchKeys()
	for _, n := range []int{1_000_000, 1_100_000, 1_500_000} {
		for _, im := range newdynImpls(newdynEps) {
			b.Run(fmt.Sprintf("n=%d/%s", n, im.name), func(b *testing.B) {
				var load, atLimit, sized, fpr float64
				for i := 0; i < b.N; i++ {
					f := im.build(b, n)
					added := 0
					for _, k := range present {
						if !f.add(k) {
							break
						}
						added++
					}
					if added == len(present) {
						b.Skipf("%d keys never filled the filter", added)
					}
					fp := 0
					for _, k := range absent {
						if f.has(k) {
							fp++
						}
					}
					load = float64(added) / float64(f.slots)
					atLimit = f.bits / float64(added)
					sized = f.bits / float64(n)
					fpr = float64(fp) / float64(len(absent))
				}
				b.ReportMetric(load, "load")
				b.ReportMetric(atLimit, "bits/key@limit")
				b.ReportMetric(atLimit/math.Log2(1/newdynEps), "x-log2(1/eps)")
				b.ReportMetric(sized, "bits/key@n")
				b.ReportMetric(fpr*100, "fp%")
				b.ReportMetric(0, "ns/op")
			})
		}
	}
}

// BenchmarkNewDynQuery is a plain per-op lookup benchmark (one filter per
// sub-benchmark, at 92% load) that checks queries do not allocate.
func BenchmarkNewDynQuery(b *testing.B) {
	present, absent := newdynBenchKeys()
	for _, im := range newdynImpls(newdynEps)[:3] {
		for _, which := range []string{"present", "absent"} {
			b.Run(im.name+"/"+which, func(b *testing.B) {
				f := im.build(b, newdynBenchN(im.name))
				held := int(newdynHold * float64(f.slots))
				for _, k := range present[:held] {
					if !f.add(k) {
						b.Fatal("Add failed")
					}
				}
				if which == "absent" {
					dynBenchQueries(b, f.has, absent, false)
				} else {
					dynBenchQueries(b, f.has, present[:held], true)
				}
			})
		}
	}
}
