package filters

// Side-by-side benchmarks of the Bloom family against the anchor library
// github.com/bits-and-blooms/bloom/v3 at n = 1M keys, p = 1%. Results and
// the exact command are in docs/filters.md, "Benchmarks against
// bits-and-blooms/bloom/v3". Compare ratios
// within one run, never absolute times: the machine is shared and noisy.
//
//	go test ./filters -run '^$' -bench BloomFamily -benchmem -benchtime 200ms -bloom-bench-rounds=15
//
// Write the flag as -bloom-bench-rounds=N: go test does not know it, and
// with a space it would read N as a package. Rounds interleave the
// implementations (round 1 of every op and library, then round 2, ...) so
// drift in machine load hits all of them alike; the testing package suffixes
// repeated names with #01, #02, ...
//
// The ratios in the docs are computed from the output by pairing, per
// round, each of ours with the bits-and-blooms sub-benchmark of the same op
// (they run back to back), and by comparing medians and minimums over
// rounds; the awk script is in the same section of docs/filters.md.

import (
	"flag"
	"sync"
	"testing"

	bab "github.com/bits-and-blooms/bloom/v3"
)

var bloomBenchRounds = flag.Int("bloom-bench-rounds", 1,
	"rounds of BenchmarkBloomFamily, interleaving implementations")

const (
	bloomBenchN = 1_000_000
	bloomBenchP = 0.01
)

var bloomBenchKeys struct {
	once            sync.Once
	present, absent [][]byte
}

func bloomBenchKeySets() (present, absent [][]byte) {
	bloomBenchKeys.once.Do(func() {
		bloomBenchKeys.present = bloomKeys('p', 77, bloomBenchN)
		bloomBenchKeys.absent = bloomKeys('a', 77, bloomBenchN)
	})
	return bloomBenchKeys.present, bloomBenchKeys.absent
}

// bloomBenchImpl adapts one implementation to the benchmark.
type bloomBenchImpl struct {
	name  string
	fresh func() (add func([]byte), test func([]byte) bool, bits uint64)
}

var bloomBenchImpls = []bloomBenchImpl{
	{"sievekv-bloom", func() (func([]byte), func([]byte) bool, uint64) {
		f, err := NewBloom(bloomBenchN, bloomBenchP)
		if err != nil {
			panic(err)
		}
		return f.Add, f.MayContain, f.Bits()
	}},
	{"bits-and-blooms", func() (func([]byte), func([]byte) bool, uint64) {
		f := bab.NewWithEstimates(bloomBenchN, bloomBenchP)
		return func(k []byte) { f.Add(k) }, f.Test, uint64(f.Cap())
	}},
	{"sievekv-blocked", func() (func([]byte), func([]byte) bool, uint64) {
		f, err := NewBlockedBloom(bloomBenchN, bloomBenchP)
		if err != nil {
			panic(err)
		}
		return f.Add, f.MayContain, f.Bits()
	}},
}

// bloomBenchSink keeps query results live so the compiler cannot drop them.
var bloomBenchSink int

func BenchmarkBloomFamily(b *testing.B) {
	present, absent := bloomBenchKeySets()
	type built struct {
		test    func([]byte) bool
		bpk, fp float64
	}
	// Full filters for the query benchmarks, built once; FP measured on the
	// 1M absent keys.
	full := make([]built, len(bloomBenchImpls))
	for i, impl := range bloomBenchImpls {
		add, test, bits := impl.fresh()
		for _, k := range present {
			add(k)
		}
		fp := 0
		for _, k := range absent {
			if test(k) {
				fp++
			}
		}
		full[i] = built{test, float64(bits) / bloomBenchN, float64(fp) / bloomBenchN}
	}
	for round := 0; round < *bloomBenchRounds; round++ {
		for i, impl := range bloomBenchImpls {
			b.Run("op=add/impl="+impl.name, func(b *testing.B) {
				add, _, _ := impl.fresh()
				b.ResetTimer()
				j := 0
				for n := 0; n < b.N; n++ {
					add(present[j])
					if j++; j == len(present) {
						j = 0
					}
				}
				b.ReportMetric(full[i].bpk, "bits/key")
			})
		}
		for _, q := range []struct {
			op   string
			keys [][]byte
		}{{"present", present}, {"absent", absent}} {
			for i, impl := range bloomBenchImpls {
				b.Run("op="+q.op+"/impl="+impl.name, func(b *testing.B) {
					test, keys := full[i].test, q.keys
					hits, j := 0, 0
					b.ResetTimer()
					for n := 0; n < b.N; n++ {
						if test(keys[j]) {
							hits++
						}
						if j++; j == len(keys) {
							j = 0
						}
					}
					bloomBenchSink += hits
					b.ReportMetric(full[i].bpk, "bits/key")
					b.ReportMetric(full[i].fp, "fp")
				})
			}
		}
	}
}
