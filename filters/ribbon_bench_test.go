package filters

import (
	"fmt"
	"math"
	"testing"
)

// Ribbon benchmarks, side by side in one run with our binary fuse filters
// and FastFilter's (github.com/FastFilter/xorfilter v0.2.1, test code only),
// rounds interleaved so machine noise hits every implementation alike.
// Compare ratios, not absolute times. Commands and results:
// docs/filters.md, "Ribbon filter".

// ribbonBenchImpls are the filters compared, ours and the anchors, at
// n = 1M for 7, 8 and 10 bits of FP (the Ribbon result widths). Each
// builds from hashes and returns its query and its payload size in bits.
var ribbonBenchImpls = []benchImpl{
	ribbonBenchBuild(128, 7), ribbonBenchBuild(128, 8), ribbonBenchBuild(128, 10),
	ribbonBenchBuild(64, 7), ribbonBenchBuild(64, 8), ribbonBenchBuild(64, 10),
	{"sievekv-BinaryFuse3x7", generalBenchBuild(3, 7)},
	benchImplNamed("sievekv-BinaryFuse8"),
	{"sievekv-BinaryFuse3x10", generalBenchBuild(3, 10)},
	{"sievekv-BinaryFuse4x8", generalBenchBuild(4, 8)},
	benchImplNamed("fastfilter-BinaryFuse8"),
}

func ribbonBenchBuild(w, bits int) benchImpl {
	return benchImpl{fmt.Sprintf("sievekv-Ribbon%dx%d", w, bits), func(hs []uint64) (func(uint64) bool, float64) {
		f, err := BuildRibbonFromHashes(hs, RibbonOptions{BandWidth: w, ResultBits: bits})
		if err != nil {
			panic(err)
		}
		return f.MayContainHash, float64(len(f.encoded()) * 64)
	}}
}

// ribbonBenchBits is the nominal FP exponent of each compared filter.
func ribbonBenchBits(name string) int {
	var a, b int
	if _, err := fmt.Sscanf(name, "sievekv-Ribbon%dx%d", &a, &b); err == nil {
		return b
	}
	if _, err := fmt.Sscanf(name, "sievekv-BinaryFuse%dx%d", &a, &b); err == nil {
		return b
	}
	return 8 // BinaryFuse8, ours and FastFilter's
}

// BenchmarkRibbonSpace: one op = one build at n = 1M; reports payload bits
// per key, its ratio to the bound log2(1/eps) = bits, the FP rate measured
// on 2^20 absent keys and log2(1/FP).
func BenchmarkRibbonSpace(b *testing.B) {
	hs, absent := benchKeys()
	for _, im := range ribbonBenchImpls {
		b.Run(im.name, func(b *testing.B) {
			var q func(uint64) bool
			var payload float64
			for i := 0; i < b.N; i++ {
				q, payload = im.build(hs)
			}
			fp := 0
			for _, h := range absent {
				if q(h) {
					fp++
				}
			}
			bpk := payload / benchN
			b.ReportMetric(bpk, "bits/key")
			b.ReportMetric(bpk/float64(ribbonBenchBits(im.name)), "x-bound")
			b.ReportMetric(float64(fp)/float64(len(absent))*100, "FP%")
			b.ReportMetric(math.Log2(float64(len(absent))/math.Max(float64(fp), 1)), "log2(1/FP)")
		})
	}
}

// BenchmarkRibbonBuild: ns per key to build from 1M hashes, every
// implementation once per round (SIEVEKV_BENCH_ROUNDS, default 5), plus a
// reused RibbonBuilder.
func BenchmarkRibbonBuild(b *testing.B) {
	hs, _ := benchKeys()
	for r := 1; r <= benchRounds(); r++ {
		for _, im := range ribbonBenchImpls {
			b.Run(fmt.Sprintf("round%d/%s", r, im.name), func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					im.build(hs)
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/benchN, "ns/key")
			})
		}
		b.Run(fmt.Sprintf("round%d/sievekv-Ribbon128x7-reusedBuilder", r), func(b *testing.B) {
			var rb RibbonBuilder
			o := RibbonOptions{ResultBits: 7}
			if _, err := rb.Build(hs, o); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := rb.Build(hs, o); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/benchN, "ns/key")
		})
	}
}

// BenchmarkRibbonQuery: ns per query on 1M-key filters, present and absent
// keys (2^20 of each, cycled), every implementation once per round.
func BenchmarkRibbonQuery(b *testing.B) {
	hs, absent := benchKeys()
	present := benchPresent(hs)
	built := benchBuild(ribbonBenchImpls, hs)
	var order []string
	for _, im := range ribbonBenchImpls {
		order = append(order, im.name)
	}
	benchQueryRounds(b, present, absent, order, built)
}
