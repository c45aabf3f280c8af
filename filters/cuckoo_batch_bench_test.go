package filters

import (
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	seiflotfy "github.com/seiflotfy/cuckoofilter"
)

// BenchmarkCuckooBatch compares AddHashes and RemoveHashes with the same
// hashes added (CopiesHash first, bounded at two copies, as sievekv's
// tombstone index does) and removed one by one, and with
// github.com/seiflotfy/cuckoofilter's one-by-one Insert and Delete of the
// keys (which hash them itself). Each iteration runs every side once on a
// filter of its own, in rotating order, timed by thread CPU time so that
// machine load falls on all sides alike; a side's figure is its CPU per
// hash over one add pass and one remove pass. The shapes are the tombstone
// index's in kvbench: a -quick flush's 30k tombstones into the empty filter
// of a first fill (4x room), and at 1M keys a 90k-tombstone flush into a
// filter already 40% full of 4 MB.
func BenchmarkCuckooBatch(b *testing.B) {
	for _, shape := range []struct {
		name           string
		batch, prefill int
		capacity       int
	}{
		{"quick-first-fill", 30_000, 0, 120_000},
		{"1M-first-fill", 60_000, 0, 240_000},
		{"1M-grown", 60_000, 240_000, 480_000},
		{"6MB", 90_000, 1_100_000, 2_700_000},
	} {
		b.Run(shape.name, func(b *testing.B) {
			rng := rand.New(rand.NewPCG(19, 7))
			keys := flatRandomKeys(rng, shape.batch+shape.prefill)
			hs := make([]uint64, len(keys))
			for i, k := range keys {
				hs[i] = Hash(k)
			}
			background, batch := hs[:shape.prefill], hs[shape.prefill:]
			batchKeys := keys[shape.prefill:]
			ours := func() *Cuckoo {
				c, err := NewCuckoo(shape.capacity, 0.004)
				if err != nil {
					b.Fatal(err)
				}
				for _, h := range background {
					if err := c.AddHash(h); err != nil {
						b.Fatal(err)
					}
				}
				return c
			}
			one, batched := ours(), ours()
			theirs := seiflotfy.NewFilter(uint(shape.capacity))
			for _, k := range keys[:shape.prefill] {
				theirs.Insert(k)
			}
			work := make([]uint64, len(batch))
			sides := []struct {
				name string
				run  func()
			}{
				{"one-by-one", func() {
					for _, h := range batch {
						if one.CopiesHash(h) < 2 {
							if err := one.AddHash(h); err != nil {
								b.Fatal(err)
							}
						}
					}
					for _, h := range batch {
						one.RemoveHash(h)
					}
				}},
				{"batch", func() {
					copy(work, batch)
					if _, n, err := batched.AddHashes(work, 2, nil); err != nil || n != len(work) {
						b.Fatal(n, err)
					}
					batched.RemoveHashes(work)
				}},
				{"seiflotfy", func() {
					for _, k := range batchKeys {
						theirs.Insert(k)
					}
					for _, k := range batchKeys {
						theirs.Delete(k)
					}
				}},
			}
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			spent := make([]time.Duration, len(sides))
			for i := 0; b.Loop(); i++ {
				for k := range sides {
					s := (i + k) % len(sides)
					start := threadCPUTime()
					sides[s].run()
					spent[s] += threadCPUTime() - start
				}
			}
			ops := float64(b.N * 2 * len(batch))
			for s, side := range sides {
				b.ReportMetric(float64(spent[s].Nanoseconds())/ops, side.name+"-cpu-ns/hash")
			}
			b.ReportMetric(float64(spent[1])/float64(spent[0]), "batch/one-by-one")
			if one.Len() != len(background) || batched.Len() != len(background) {
				b.Fatalf("filters hold %d and %d, want %d", one.Len(), batched.Len(), len(background))
			}
		})
	}
}
