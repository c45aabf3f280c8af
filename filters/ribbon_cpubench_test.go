//go:build linux

package filters

import (
	"runtime"
	"testing"
	"time"
)

// ribbonPairs compares each Ribbon with the binary fuse filter of the same
// FP rate (ours, general width) and with our BinaryFuse8, the engine's
// default; the "ratio" metric is Ribbon / fuse in CPU time, measured as in
// static_cpubench_test.go (alternating chunks, thread CPU clock).
var ribbonPairs = [][2]string{
	{"sievekv-Ribbon128x7", "sievekv-BinaryFuse3x7"},
	{"sievekv-Ribbon128x8", "sievekv-BinaryFuse8"},
	{"sievekv-Ribbon128x10", "sievekv-BinaryFuse3x10"},
	{"sievekv-Ribbon64x7", "sievekv-BinaryFuse3x7"},
	{"sievekv-Ribbon64x8", "sievekv-BinaryFuse8"},
	{"sievekv-Ribbon64x10", "sievekv-BinaryFuse3x10"},
	{"sievekv-Ribbon128x8", "fastfilter-BinaryFuse8"},
}

func ribbonImplNamed(name string) benchImpl {
	for _, im := range ribbonBenchImpls {
		if im.name == name {
			return im
		}
	}
	panic(name)
}

// BenchmarkRibbonPairedQuery: one op = 2^14 queries on each side of a pair
// against 1M-key filters.
func BenchmarkRibbonPairedQuery(b *testing.B) {
	hs, absent := benchKeys()
	present := make([]uint64, 1<<20)
	for i := range present {
		present[i] = hs[(i*7919)%len(hs)]
	}
	built := map[string]func(uint64) bool{}
	for _, im := range ribbonBenchImpls {
		built[im.name], _ = im.build(hs)
	}
	const chunk = 1 << 14
	for _, kind := range []string{"present", "absent"} {
		keys := present
		if kind == "absent" {
			keys = absent
		}
		for _, pair := range ribbonPairs {
			ours, other := built[pair[0]], built[pair[1]]
			b.Run(kind+"/"+pair[0]+"_vs_"+pair[1], func(b *testing.B) {
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
				var tOurs, tOther time.Duration
				hits := 0
				for i := 0; i < b.N; i++ {
					off := (i * chunk) & (1<<20 - 1)
					part := keys[off : off+chunk]
					first, second := ours, other
					if i%2 == 1 {
						first, second = other, ours
					}
					t0 := cpuClock(clockThreadCPU)
					for _, h := range part {
						if first(h) {
							hits++
						}
					}
					t1 := cpuClock(clockThreadCPU)
					for _, h := range part {
						if second(h) {
							hits++
						}
					}
					t2 := cpuClock(clockThreadCPU)
					if i%2 == 0 {
						tOurs, tOther = tOurs+t1-t0, tOther+t2-t1
					} else {
						tOther, tOurs = tOther+t1-t0, tOurs+t2-t1
					}
				}
				benchSink += hits
				b.ReportMetric(float64(tOurs.Nanoseconds())/float64(b.N*chunk), "ribbon-cpu-ns/query")
				b.ReportMetric(float64(tOther.Nanoseconds())/float64(b.N*chunk), "other-cpu-ns/query")
				b.ReportMetric(float64(tOurs)/float64(tOther), "ratio")
			})
		}
	}
}

// BenchmarkRibbonPairedBuild: one op = one 1M-key build by each side, CPU
// time of the process (GC included), alternating which goes first.
func BenchmarkRibbonPairedBuild(b *testing.B) {
	hs, _ := benchKeys()
	for _, pair := range ribbonPairs {
		ours, other := ribbonImplNamed(pair[0]), ribbonImplNamed(pair[1])
		b.Run(pair[0]+"_vs_"+pair[1], func(b *testing.B) {
			var tOurs, tOther time.Duration
			for i := 0; i < b.N; i++ {
				t0 := cpuClock(clockProcessCPU)
				if i%2 == 0 {
					ours.build(hs)
					t1 := cpuClock(clockProcessCPU)
					other.build(hs)
					t2 := cpuClock(clockProcessCPU)
					tOurs, tOther = tOurs+t1-t0, tOther+t2-t1
				} else {
					other.build(hs)
					t1 := cpuClock(clockProcessCPU)
					ours.build(hs)
					t2 := cpuClock(clockProcessCPU)
					tOther, tOurs = tOther+t1-t0, tOurs+t2-t1
				}
			}
			b.ReportMetric(float64(tOurs.Nanoseconds())/float64(b.N)/benchN, "ribbon-cpu-ns/key")
			b.ReportMetric(float64(tOther.Nanoseconds())/float64(b.N)/benchN, "other-cpu-ns/key")
			b.ReportMetric(float64(tOurs)/float64(tOther), "ratio")
		})
	}
}
