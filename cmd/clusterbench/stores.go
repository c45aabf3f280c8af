package main

import (
	"flag"
	"fmt"
	"slices"
	"testing"

	"github.com/sievekv/sievekv/internal/benchreport"
	"github.com/sievekv/sievekv/internal/storebench"
)

// storeResult is one benchmark on one store over every round.
type storeResult struct {
	Bench       string    `json:"bench"`
	Store       string    `json:"store"`
	NsPerOp     []float64 `json:"ns_per_op"` // one per round, in round order
	BytesPerOp  int64     `json:"bytes_per_op"`
	AllocsPerOp int64     `json:"allocs_per_op"`
}

func (r storeResult) median() float64 { return median(r.NsPerOp) }

// runStores runs every benchmark on each store for rounds rounds, N
// operations each (raft's functions run b.N of them). Within a round the
// stores alternate which goes first, each on a fresh directory, so that
// drift on a shared machine and one store's leftover work hit both alike.
func runStores(rounds, n int, log func(string, ...any)) ([]storeResult, error) {
	if err := setBenchOps(n); err != nil {
		return nil, err
	}
	results := make([]storeResult, 0, len(storebench.Benches)*len(storebench.Stores))
	for _, bench := range storebench.Benches {
		for _, kind := range storebench.Stores {
			results = append(results, storeResult{Bench: bench.Name, Store: kind.Name})
		}
	}
	for round := 0; round < rounds; round++ {
		for bi, bench := range storebench.Benches {
			for k := range storebench.Stores {
				ki := (k + round + bi) % len(storebench.Stores)
				kind := storebench.Stores[ki]
				res, err := benchStore(bench.Run, kind.Open)
				if err != nil {
					return nil, fmt.Errorf("%s on %s: %w", bench.Name, kind.Name, err)
				}
				r := &results[bi*len(storebench.Stores)+ki]
				r.NsPerOp = append(r.NsPerOp, float64(res.T.Nanoseconds())/float64(res.N))
				r.BytesPerOp, r.AllocsPerOp = res.AllocedBytesPerOp(), res.AllocsPerOp()
				log("round %d: %s on %s: %.0f ns/op", round+1, bench.Name, kind.Name, r.NsPerOp[len(r.NsPerOp)-1])
			}
		}
	}
	return results, nil
}

// benchStore runs fn for exactly n operations on a store opened fresh
// (setBenchOps has set testing's bench time to n iterations).
func benchStore(fn func(*testing.B, storebench.Store), open func(string) (storebench.Store, error)) (testing.BenchmarkResult, error) {
	dir, remove, err := benchreport.TempDir("clusterbench-store-")
	if err != nil {
		return testing.BenchmarkResult{}, err
	}
	defer remove()
	s, err := open(dir)
	if err != nil {
		return testing.BenchmarkResult{}, err
	}
	defer s.Close()
	var failed bool
	res := testing.Benchmark(func(b *testing.B) {
		fn(b, s)
		failed = failed || b.Failed()
	})
	if failed || res.N == 0 {
		return res, fmt.Errorf("the benchmark failed")
	}
	return res, nil
}

// setBenchOps makes testing.Benchmark run n iterations (after its one-
// iteration probe), as go test's -benchtime Nx does, so that every round
// does the same work.
func setBenchOps(n int) error {
	testing.Init()
	return flag.Set("test.benchtime", fmt.Sprintf("%dx", n))
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
