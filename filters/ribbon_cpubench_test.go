//go:build linux

package filters

import (
	"testing"
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
	benchPairedQuery(b, ribbonBenchImpls, ribbonPairs, "ribbon", "other")
}

// BenchmarkRibbonPairedBuild: one op = one 1M-key build by each side, CPU
// time of the process (GC included), alternating which goes first.
func BenchmarkRibbonPairedBuild(b *testing.B) {
	hs, _ := benchKeys()
	benchPairedBuild(b, ribbonPairs, "ribbon", "other", func(name string) func() {
		im := ribbonImplNamed(name)
		return func() { im.build(hs) }
	})
}
