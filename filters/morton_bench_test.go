package filters

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"
	"time"

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
	build func(tb testing.TB, n int) newdynOps
}

type newdynOps struct {
	add, remove, has func([]byte) bool
	slots            int     // physical capacity
	bits             float64 // table size in bits
	len              func() int
}

func newdynImpls(eps float64) []newdynImpl {
	return []newdynImpl{
		{"morton", func(tb testing.TB, n int) newdynOps {
			m, err := NewMorton(n, eps)
			if err != nil {
				tb.Fatal(err)
			}
			return newdynOps{func(k []byte) bool { return m.Add(k) == nil }, m.Remove, m.MayContain, m.Cap(), float64(m.SizeBits()), m.Len}
		}},
		{"vacuum", func(tb testing.TB, n int) newdynOps {
			v, err := NewVacuum(n, eps)
			if err != nil {
				tb.Fatal(err)
			}
			return newdynOps{func(k []byte) bool { return v.Add(k) == nil }, v.Remove, v.MayContain, v.Cap(), float64(v.Cap() * v.FingerprintBits()), v.Len}
		}},
		{"cuckoo", func(tb testing.TB, n int) newdynOps {
			c, err := NewCuckoo(n, eps)
			if err != nil {
				tb.Fatal(err)
			}
			return newdynOps{func(k []byte) bool { return c.Add(k) == nil }, c.Remove, c.MayContain, c.Cap(), float64(c.Cap() * c.FingerprintBits()), c.Len}
		}},
		{"quotient95", func(tb testing.TB, n int) newdynOps {
			f, err := NewQuotientWithLoad(n, eps, QuotientMaxLoad)
			if err != nil {
				tb.Fatal(err)
			}
			slots := 1 << f.QuotientBits()
			return newdynOps{func(k []byte) bool { return f.Add(k) == nil }, f.Remove, f.MayContain, slots, float64(slots * (f.RemainderBits() + 3)), f.Len}
		}},
		{"seiflotfy", func(tb testing.TB, n int) newdynOps {
			c := seiflotfy.NewFilter(uint(n))
			slots := 4 * int(math.Exp2(math.Ceil(math.Log2(float64(n)/4))))
			return newdynOps{c.Insert, c.Delete, c.Lookup, slots, float64(slots * 8), func() int { return int(c.Count()) }}
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
// filters: Add keys until the filter holds 92% of its slots, query those
// keys (present) and as many absent keys, Remove them all. The filters take
// turns in chunks of 10,000 operations (rotating who goes first), each
// chunk timed with the thread's CPU clock, so machine noise hits all alike;
// compare the reported ratios to our cuckoo filter, not absolute times.
func BenchmarkNewDynInterleaved(b *testing.B) {
	present, absent := newdynBenchKeys()
	impls := newdynImpls(newdynEps)
	ops := dynBenchOps
	const chunk = 10000
	total := make([][4]time.Duration, len(impls))
	counts := make([][4]int, len(impls))
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	sink := 0
	for it := 0; it < b.N; it++ {
		fs := make([]newdynOps, len(impls))
		held := make([]int, len(impls))
		for i, im := range impls {
			fs[i] = im.build(b, newdynBenchN(im.name))
			held[i] = int(newdynHold * float64(fs[i].slots))
		}
		for op := range ops {
			longest := 0
			for i := range impls {
				longest = max(longest, held[i])
			}
			for c, lo := 0, 0; lo < longest; c, lo = c+1, lo+chunk {
				for r := range impls {
					i := (r + c) % len(impls)
					hi := min(lo+chunk, held[i])
					if lo >= hi {
						continue
					}
					keys := present[lo:hi]
					if op == 2 {
						keys = absent[lo%len(absent) : lo%len(absent)+hi-lo]
					}
					f := fs[i]
					start := threadCPUTime()
					sink += dynBenchOp(b, impls[i].name, op, keys, f.add, f.has, f.remove)
					total[i][op] += threadCPUTime() - start
					counts[i][op] += len(keys)
				}
			}
		}
		for i, f := range fs {
			if f.len() != 0 {
				b.Fatalf("%s: cycle left %d keys", impls[i].name, f.len())
			}
		}
	}
	if sink == 0 {
		b.Fatal("no query answered true")
	}
	for op, name := range ops {
		base := float64(total[2][op]) / float64(counts[2][op]) // our cuckoo
		for i, im := range impls {
			ns := float64(total[i][op]) / float64(counts[i][op])
			b.ReportMetric(ns, fmt.Sprintf("%s-%s-ns", name, im.name))
			if im.name != "cuckoo" {
				b.ReportMetric(ns/base, fmt.Sprintf("%s-%s/cuckoo", name, im.name))
			}
		}
	}
	b.ReportMetric(0, "ns/op")
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
				keys := present[:held]
				if which == "absent" {
					keys = absent
				}
				hits := 0
				b.ReportAllocs()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					if f.has(keys[i%len(keys)]) {
						hits++
					}
				}
				if which == "present" && hits != b.N {
					b.Fatal("present key missing")
				}
			})
		}
	}
}
