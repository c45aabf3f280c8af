package rangedel

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/sievekv/sievekv/internal/base"
)

// TestSplitAtMatchesDefinition: for random tombstones and a random split
// key k, the parts below k and those at or above it together delete what
// the tombstones did (R1) at every key and sequence number, each part is
// a valid tombstone, and every part lies on its side of k.
func TestSplitAtMatchesDefinition(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	keys := [][]byte{{}}
	for c := byte('a'); c < 'a'+14; c++ {
		keys = append(keys, []byte{c}, []byte{c, 0}, []byte{c, 'a'}, []byte{c, 'b'})
	}
	for round := range 500 {
		ts := randomTombstones(r, r.IntN(10))
		orig := make([]Tombstone, len(ts))
		for i, tm := range ts {
			orig[i] = tm.Clone()
		}
		k := keys[r.IntN(len(keys))]
		before, after := SplitAt(ts, k)
		for _, p := range before {
			if bytes.Compare(p.Start, p.End) >= 0 || bytes.Compare(p.End, k) > 0 {
				t.Fatalf("round %d: split at %q: part %v is empty or reaches past k", round, k, p)
			}
		}
		for _, p := range after {
			if bytes.Compare(p.Start, p.End) >= 0 || bytes.Compare(p.Start, k) < 0 {
				t.Fatalf("round %d: split at %q: part %v is empty or starts below k", round, k, p)
			}
		}
		parts := append(append([]Tombstone(nil), before...), after...)
		for _, key := range keys {
			for seq := base.SeqNum(0); seq <= 41; seq++ {
				if got, want := naiveCoverAbove(parts, key, seq), naiveCoverAbove(orig, key, seq); got != want {
					t.Fatalf("round %d: split %v at %q: key %q seq %d covered above by %d, want %d", round, orig, k, key, seq, got, want)
				}
			}
		}
	}
}

// TestCoalesceMatchesDefinition: for random tombstones, split at random
// keys as tables would split them, Coalesce deletes what they did at
// every key and sequence number, leaves no two tombstones of one sequence
// number touching, and sorts its result.
func TestCoalesceMatchesDefinition(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	keys := [][]byte{{}}
	for c := byte('a'); c < 'a'+14; c++ {
		keys = append(keys, []byte{c}, []byte{c, 0}, []byte{c, 'a'})
	}
	for round := range 500 {
		orig := randomTombstones(r, r.IntN(12))
		var parts []Tombstone
		for _, tm := range orig {
			parts = append(parts, tm.Clone())
		}
		for range r.IntN(4) {
			before, after := SplitAt(parts, keys[r.IntN(len(keys))])
			parts = append(slices.Clone(before), after...)
		}
		got := Coalesce(slices.Clone(parts))
		for i := range got {
			if i > 0 && Compare(got[i-1], got[i]) >= 0 {
				t.Fatalf("round %d: %v not sorted", round, got)
			}
			for j := range got {
				if i != j && got[i].Seq == got[j].Seq && bytes.Compare(got[i].Start, got[j].End) <= 0 && bytes.Compare(got[j].Start, got[i].End) <= 0 {
					t.Fatalf("round %d: %v and %v touch and share a sequence number", round, got[i], got[j])
				}
			}
		}
		for _, key := range keys {
			for seq := base.SeqNum(0); seq <= 41; seq++ {
				if g, w := naiveCoverAbove(got, key, seq), naiveCoverAbove(orig, key, seq); g != w {
					t.Fatalf("round %d: %v coalesced to %v: key %q seq %d covered above by %d, want %d", round, parts, got, key, seq, g, w)
				}
			}
		}
	}
}
