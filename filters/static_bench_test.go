package filters

import (
	"fmt"
	"math"
	"os"
	"strconv"
	"sync"
	"testing"

	"github.com/FastFilter/xorfilter"
)

// Benchmarks against github.com/FastFilter/xorfilter v0.2.1 (the anchor; test
// code only). Each benchmark interleaves the implementations round by round
// (round1/sievekv, round1/fastfilter, round2/...) so machine noise hits both
// alike; compare ratios, not absolute times. Rounds: SIEVEKV_BENCH_ROUNDS
// (default 5). Command and results: docs/filters.md, "Wall-clock interleaved
// rounds".

const benchN = 1_000_000

func benchRounds() int {
	if r, err := strconv.Atoi(os.Getenv("SIEVEKV_BENCH_ROUNDS")); err == nil && r > 0 {
		return r
	}
	return 5
}

// benchImpl is one implementation under comparison: build from hashes, and
// a query function on the built filter.
type benchImpl struct {
	name  string
	build func(hs []uint64) (query func(uint64) bool, fpBits float64)
}

var benchImpls = []benchImpl{
	{"sievekv-Xor8", staticBenchBuild(BuildXor8FromHashes, func(f *Xor8) (func(uint64) bool, float64) {
		return f.MayContainHash, float64(len(f.fps) * 8)
	})},
	{"fastfilter-Xor8", staticBenchBuild(xorfilter.Populate, func(f *xorfilter.Xor8) (func(uint64) bool, float64) {
		return f.Contains, float64(len(f.Fingerprints) * 8)
	})},
	{"sievekv-BinaryFuse8", staticBenchBuild(BuildBinaryFuse8FromHashes, func(f *BinaryFuse8) (func(uint64) bool, float64) {
		return f.MayContainHash, float64(len(f.fps) * 8)
	})},
	{"fastfilter-BinaryFuse8", staticBenchBuild(xorfilter.PopulateBinaryFuse8, func(f *xorfilter.BinaryFuse8) (func(uint64) bool, float64) {
		return f.Contains, float64(len(f.Fingerprints) * 8)
	})},
	{"sievekv-BinaryFuse16", staticBenchBuild(BuildBinaryFuse16FromHashes, func(f *BinaryFuse16) (func(uint64) bool, float64) {
		return f.MayContainHash, float64(len(f.fps) * 16)
	})},
	{"fastfilter-BinaryFuse16", staticBenchBuild(xorfilter.NewBinaryFuse[uint16], func(f *xorfilter.BinaryFuse[uint16]) (func(uint64) bool, float64) {
		return f.Contains, float64(len(f.Fingerprints) * 16)
	})},
	{"sievekv-BinaryFuse3x8", generalBenchBuild(3, 8)},
	{"sievekv-BinaryFuse4x8", generalBenchBuild(4, 8)},
	{"sievekv-BinaryFuse3x11", generalBenchBuild(3, 11)},
	{"sievekv-BinaryFuse4x16", generalBenchBuild(4, 16)},
}

// staticBenchBuild is a benchImpl's build: build the filter (a failed
// build panics: the benchmark's inputs always build), then describe gives
// its query and fingerprint bits.
func staticBenchBuild[F any](build func(hs []uint64) (F, error), describe func(F) (func(uint64) bool, float64)) func(hs []uint64) (func(uint64) bool, float64) {
	return func(hs []uint64) (func(uint64) bool, float64) {
		f, err := build(hs)
		if err != nil {
			panic(err)
		}
		return describe(f)
	}
}

func generalBenchBuild(arity, bits int) func(hs []uint64) (func(uint64) bool, float64) {
	build := func(hs []uint64) (*BinaryFuse, error) {
		return BuildBinaryFuseFromHashes(hs, FuseOptions{Arity: arity, FingerprintBits: bits})
	}
	return staticBenchBuild(build, func(f *BinaryFuse) (func(uint64) bool, float64) {
		return f.MayContainHash, float64(uint64(f.size) * uint64(bits))
	})
}

func benchImplNamed(name string) benchImpl {
	for _, im := range benchImpls {
		if im.name == name {
			return im
		}
	}
	panic(name)
}

// benchPairs are the comparisons the docs report: ours first, anchor second.
var benchPairs = [][2]string{
	{"sievekv-Xor8", "fastfilter-Xor8"},
	{"sievekv-BinaryFuse8", "fastfilter-BinaryFuse8"},
	{"sievekv-BinaryFuse16", "fastfilter-BinaryFuse16"},
	{"sievekv-BinaryFuse3x8", "fastfilter-BinaryFuse8"},
	{"sievekv-BinaryFuse4x8", "fastfilter-BinaryFuse8"},
}

var benchKeys = sync.OnceValues(func() ([]uint64, []uint64) {
	// Present: 1M random hashes. Absent: 2^20 others, distinct from them
	// with probability 1 - 2^-24.
	return randomHashes(1234, benchN), randomHashes(5678, 1<<20)
})

// BenchmarkStaticBuild: ns per key to build from 1M hashes (allocating
// builds for both libraries, plus our reused FuseBuilder).
func BenchmarkStaticBuild(b *testing.B) {
	hs, _ := benchKeys()
	for r := 1; r <= benchRounds(); r++ {
		for _, pair := range benchPairs[:3] {
			for _, name := range pair {
				im := benchImplNamed(name)
				b.Run(fmt.Sprintf("round%d/%s", r, name), func(b *testing.B) {
					for i := 0; i < b.N; i++ {
						im.build(hs)
					}
					b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/benchN, "ns/key")
				})
			}
		}
		for _, name := range []string{"sievekv-BinaryFuse3x8", "sievekv-BinaryFuse4x8", "sievekv-BinaryFuse3x11"} {
			im := benchImplNamed(name)
			b.Run(fmt.Sprintf("round%d/%s", r, name), func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					im.build(hs)
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/benchN, "ns/key")
			})
		}
		b.Run(fmt.Sprintf("round%d/sievekv-BinaryFuse8-reusedBuilder", r), func(b *testing.B) {
			var fb FuseBuilder
			if _, err := fb.BuildBinaryFuse8(hs); err != nil { // warm the scratch
				b.Fatal(err)
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := fb.BuildBinaryFuse8(hs); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/benchN, "ns/key")
		})
	}
}

var benchSink int

// benchPresent is 2^20 query hashes drawn from the key set hs, scattered so
// that consecutive queries touch unrelated cache lines.
func benchPresent(hs []uint64) []uint64 {
	present := make([]uint64, 1<<20)
	for i := range present {
		present[i] = hs[(i*7919)%len(hs)]
	}
	return present
}

// benchBuild builds every implementation from hs and returns their
// queries by name.
func benchBuild(impls []benchImpl, hs []uint64) map[string]func(uint64) bool {
	built := map[string]func(uint64) bool{}
	for _, im := range impls {
		built[im.name], _ = im.build(hs)
	}
	return built
}

// BenchmarkStaticQuery: ns per MayContainHash / Contains on a 1M-key filter,
// for present and absent keys (2^20 query hashes, cycled). Must not allocate.
func BenchmarkStaticQuery(b *testing.B) {
	hs, absent := benchKeys()
	present := benchPresent(hs)
	queries := benchBuild(benchImpls, hs)
	order := []string{}
	for _, p := range benchPairs[:3] {
		order = append(order, p[0], p[1])
	}
	order = append(order, "sievekv-BinaryFuse3x8", "sievekv-BinaryFuse4x8", "sievekv-BinaryFuse3x11", "sievekv-BinaryFuse4x16")
	benchQueryRounds(b, present, absent, order, queries)
}

// benchQueryRounds runs every named query over present, then absent, keys
// (2^20 of each, cycled), all of them once per round, so that each round
// sees every implementation under the same machine conditions.
func benchQueryRounds(b *testing.B, present, absent []uint64, order []string, queries map[string]func(uint64) bool) {
	for r := 1; r <= benchRounds(); r++ {
		for _, kind := range []string{"present", "absent"} {
			keys := present
			if kind == "absent" {
				keys = absent
			}
			for _, name := range order {
				q := queries[name]
				b.Run(fmt.Sprintf("round%d/%s/%s", r, kind, name), func(b *testing.B) {
					c := 0
					for i := 0; i < b.N; i++ {
						if q(keys[i&(1<<20-1)]) {
							c++
						}
					}
					benchSink += c
				})
			}
		}
	}
}

// BenchmarkStaticSpace reports, for every filter and n in {100, 1k, 10k,
// 100k, 1M}: fingerprint bits per key (the array alone, as FastFilter's
// len(Fingerprints) counts it), encoded bits per key for ours (SizeInBytes,
// header and checksum included), the FP rate measured on 2^20 absent keys,
// the information-theoretic bound log2(1/eps) for the nominal eps = 2^-w,
// and bits/key divided by that bound. One op = one build; read the metrics.
func BenchmarkStaticSpace(b *testing.B) {
	_, absent := benchKeys()
	type spaceImpl struct {
		name  string
		width int
		enc   func(hs []uint64) (query func(uint64) bool, fpBits float64, encBytes int)
	}
	ours := func(name string, width int, build func(hs []uint64) (staticFilter, float64)) spaceImpl {
		return spaceImpl{name, width, func(hs []uint64) (func(uint64) bool, float64, int) {
			f, bits := build(hs)
			return f.MayContainHash, bits, f.SizeInBytes()
		}}
	}
	anchor := func(name string, width int) spaceImpl {
		im := benchImplNamed(name)
		return spaceImpl{name, width, func(hs []uint64) (func(uint64) bool, float64, int) {
			q, bits := im.build(hs)
			return q, bits, 0
		}}
	}
	general := func(arity, width int) func(hs []uint64) (staticFilter, float64) {
		return func(hs []uint64) (staticFilter, float64) {
			f, _ := BuildBinaryFuseFromHashes(hs, FuseOptions{Arity: arity, FingerprintBits: width})
			return f, float64(uint64(f.size) * uint64(width))
		}
	}
	impls := []spaceImpl{
		ours("sievekv-Xor8", 8, func(hs []uint64) (staticFilter, float64) {
			f, _ := BuildXor8FromHashes(hs)
			return f, float64(len(f.fps) * 8)
		}),
		anchor("fastfilter-Xor8", 8),
		ours("sievekv-BinaryFuse8", 8, func(hs []uint64) (staticFilter, float64) {
			f, _ := BuildBinaryFuse8FromHashes(hs)
			return f, float64(len(f.fps) * 8)
		}),
		anchor("fastfilter-BinaryFuse8", 8),
		ours("sievekv-BinaryFuse16", 16, func(hs []uint64) (staticFilter, float64) {
			f, _ := BuildBinaryFuse16FromHashes(hs)
			return f, float64(len(f.fps) * 16)
		}),
		anchor("fastfilter-BinaryFuse16", 16),
		ours("sievekv-BinaryFuse3x8", 8, general(3, 8)),
		ours("sievekv-BinaryFuse4x8", 8, general(4, 8)),
		ours("sievekv-BinaryFuse3x11", 11, general(3, 11)),
		ours("sievekv-BinaryFuse4x11", 11, general(4, 11)),
		ours("sievekv-BinaryFuse3x16", 16, general(3, 16)),
		ours("sievekv-BinaryFuse4x16", 16, general(4, 16)),
	}
	for _, n := range []int{100, 1000, 10_000, 100_000, 1_000_000} {
		hs := randomHashes(uint64(n)+4242, n)
		for _, im := range impls {
			b.Run(fmt.Sprintf("n=%d/%s", n, im.name), func(b *testing.B) {
				var q func(uint64) bool
				var fpBits float64
				var enc int
				for i := 0; i < b.N; i++ {
					q, fpBits, enc = im.enc(hs)
				}
				fp := 0
				for _, h := range absent {
					if q(h) {
						fp++
					}
				}
				bound := float64(im.width) // log2(1/2^-w)
				bpk := fpBits / float64(n)
				b.ReportMetric(bpk, "bits/key")
				if enc > 0 {
					b.ReportMetric(float64(enc*8)/float64(n), "enc-bits/key")
				}
				b.ReportMetric(bpk/bound, "x-bound")
				b.ReportMetric(float64(fp)/float64(len(absent))*100, "FP%")
				b.ReportMetric(math.Log2(float64(len(absent))/math.Max(float64(fp), 1)), "log2(1/FP)")
			})
		}
	}
}
