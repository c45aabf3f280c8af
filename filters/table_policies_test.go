package filters

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
)

// TestPolicyBuildsShareNoScratch: the table policies build with pooled
// builders, so builds running at once (a flush beside a compaction) and
// builds one after another reuse the same scratch. Every filter must still
// hold every one of its own hashes once the builder has gone on to other
// sets: a filter aliasing its builder's scratch would lose them (and -race
// would see the concurrent writes).
func TestPolicyBuildsShareNoScratch(t *testing.T) {
	params := PolicyParams{BloomBitsPerKey: 10, RibbonBits: 7, Fuse: FuseOptions{Arity: 4, FingerprintBits: 8}}
	for _, typ := range PolicyTypes() {
		p, err := NewPolicy(typ, params)
		if err != nil {
			t.Fatalf("%s: %v", typ, err)
		}
		t.Run(fmt.Sprint(typ), func(t *testing.T) {
			var wg sync.WaitGroup
			for g := range 4 {
				wg.Go(func() {
					rng := rand.New(rand.NewPCG(uint64(g), 7))
					for round := range 5 {
						hs := make([]uint64, 500+rng.IntN(3000))
						for i := range hs {
							hs[i] = rng.Uint64()
						}
						enc, err := p.Build(hs)
						if err != nil {
							t.Error(err)
							return
						}
						f, err := Unmarshal(enc)
						if err != nil {
							t.Error(err)
							return
						}
						for _, h := range hs {
							if !f.MayContainHash(h) {
								t.Errorf("goroutine %d, round %d: a filter lost one of its %d hashes", g, round, len(hs))
								return
							}
						}
					}
				})
			}
			wg.Wait()
		})
	}
}

// TestPolicyBuildsEmpty: Policy.Build promises the encoding of a filter
// holding every hash given, and the static policies give one for no hashes.
// The Bloom and blocked Bloom policies sized their filter for len(hashes)
// keys and so failed with "n must be positive" on an empty set.
func TestPolicyBuildsEmpty(t *testing.T) {
	params := PolicyParams{BloomBitsPerKey: 10, RibbonBits: 7, Fuse: FuseOptions{Arity: 3, FingerprintBits: 9}}
	for _, typ := range PolicyTypes() {
		p, err := NewPolicy(typ, params)
		if err != nil {
			t.Fatalf("%s: %v", typ, err)
		}
		enc, err := p.Build(nil)
		if err != nil {
			t.Errorf("%s: Build(nil): %v", typ, err)
			continue
		}
		if _, err := Unmarshal(enc); err != nil {
			t.Errorf("%s: Build(nil) does not decode: %v", typ, err)
		}
	}
}
