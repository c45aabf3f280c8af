package filters

import (
	"math/rand/v2"
	"testing"
)

// TestCuckooCopiesHashProperty: after random adds (many of them repeats,
// up to the 8 copies a bucket pair holds) and removes of members, at every
// fingerprint width, CopiesHash equals the number of copies a model holds
// for the key's alias class, for members and non-members alike. The
// one-test fast path for "no copy" must never hide a copy.
func TestCuckooCopiesHashProperty(t *testing.T) {
	rng := rand.New(rand.NewPCG(19, 6))
	for _, fpRate := range []float64{0.03, 0.004, 0.0003} {
		c, err := NewCuckoo(4000, fpRate)
		if err != nil {
			t.Fatal(err)
		}
		model := map[uint64]int{} // alias class -> copies
		var members []uint64
		for step := 0; step < 6000; step++ {
			switch {
			case len(members) > 0 && rng.IntN(4) == 0:
				i := rng.IntN(len(members))
				h := members[i]
				members[i] = members[len(members)-1]
				members = members[:len(members)-1]
				if !c.RemoveHash(h) {
					t.Fatalf("member %#x not removed", h)
				}
				model[c.AliasHash(h)]--
			default:
				h := rng.Uint64()
				if len(members) > 0 && rng.IntN(3) == 0 {
					h = members[rng.IntN(len(members))] // a repeat
				}
				if model[c.AliasHash(h)] >= 8 {
					continue
				}
				if err := c.AddHash(h); err != nil {
					continue // full near this key: the filter is unchanged
				}
				members = append(members, h)
				model[c.AliasHash(h)]++
			}
			probe := rng.Uint64()
			if len(members) > 0 && step%2 == 0 {
				probe = members[rng.IntN(len(members))]
			}
			if got, want := c.CopiesHash(probe), model[c.AliasHash(probe)]; got != want {
				t.Fatalf("fpRate %v step %d: CopiesHash(%#x) = %d, model %d", fpRate, step, probe, got, want)
			}
		}
	}
}
