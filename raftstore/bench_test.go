package raftstore_test

import (
	"testing"

	"github.com/sievekv/sievekv/internal/storebench"
)

// BenchmarkRaftBench runs each of raft's store benchmark functions on a
// Store and, beside it, on raft-boltdb v2 (internal/storebench):
// BenchmarkRaftBench/<function>/<store>.
//
//	go test ./raftstore -run '^$' -bench . -benchtime 1000x -count 5
//
// cmd/clusterbench runs the same pairs in alternating rounds for
// docs/benchmarks.md ("raftstore and kvserver").
func BenchmarkRaftBench(b *testing.B) {
	for _, bench := range storebench.Benches {
		b.Run(bench.Name, func(b *testing.B) {
			for _, st := range storebench.Stores {
				b.Run(st.Name, func(b *testing.B) {
					s, err := st.Open(b.TempDir())
					if err != nil {
						b.Fatal(err)
					}
					defer s.Close()
					bench.Run(b, s)
				})
			}
		})
	}
}
