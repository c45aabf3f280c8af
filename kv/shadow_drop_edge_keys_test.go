package kv

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestShadowDropDifferentialEdgeKeys runs the early-drop differential
// (TestShadowDropDifferential: racing compactions, snapshots, iterators,
// DeleteRange, reopen, checkpoints, against a map model) with its keys
// drawn from the edge alphabet of the range-filter tests: the empty key,
// 0x00 and 0xff bytes, keys that are prefixes of others and keys of
// hundreds of bytes, in byte order.
func TestShadowDropDifferentialEdgeKeys(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 14))
	pool := oddKeyPool(rng, 48+6) // DeleteRange ends reach 5 keys past the last written
	slices.SortFunc(pool, bytes.Compare)
	old := differentialKey
	differentialKey = func(i int) []byte { return slices.Clone(pool[i]) }
	t.Cleanup(func() { differentialKey = old })
	seeds := []int64{1, 3, 5, 7, 11}
	if raceEnabled {
		seeds = []int64{7, 11}
	}
	var dropped uint64
	for _, seed := range seeds {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			if seed%8 == 3 {
				testShadowLocalAlways = true
				defer func() { testShadowLocalAlways = false }()
			}
			dropped += runShadowDropDifferential(t, seed, 400).drops
		})
	}
	if dropped == 0 {
		t.Fatal("no value dropped early: the run exercised nothing")
	}
}
