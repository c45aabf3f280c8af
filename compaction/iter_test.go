package compaction

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/sievekv/sievekv/internal/base"
)

// sliceIter is a base.InternalIterator over a sorted slice, forward only.
type sliceIter struct {
	keys []base.InternalKey
	vals [][]byte
	i    int
}

func (s *sliceIter) First() bool                    { s.i = 0; return s.Valid() }
func (s *sliceIter) Next() bool                     { s.i++; return s.Valid() }
func (s *sliceIter) Valid() bool                    { return s.i >= 0 && s.i < len(s.keys) }
func (s *sliceIter) Key() base.InternalKey          { return s.keys[s.i] }
func (s *sliceIter) Value() []byte                  { return s.vals[s.i] }
func (s *sliceIter) Error() error                   { return nil }
func (s *sliceIter) Close() error                   { return nil }
func (s *sliceIter) SeekGE(k base.InternalKey) bool { panic("unused") }
func (s *sliceIter) SeekLT(k base.InternalKey) bool { panic("unused") }
func (s *sliceIter) Last() bool                     { panic("unused") }
func (s *sliceIter) Prev() bool                     { panic("unused") }

// visible returns what a read at snapshot seq sees for userKey in entries.
func visible(entries []base.InternalKey, vals [][]byte, userKey []byte, seq base.SeqNum) (string, bool) {
	for i, k := range entries {
		if bytes.Equal(k.UserKey, userKey) && k.SeqNum() <= seq {
			if k.Kind() == base.KindDelete {
				return "", false
			}
			return string(vals[i]), true
		}
	}
	return "", false
}

// TestIterKeepsWhatEverySnapshotSees checks C1 to C4 against a model:
// for every snapshot (and the latest state), every key reads the same
// before and after filtering, and nothing more than needed is kept.
func TestIterKeepsWhatEverySnapshotSees(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := 0; trial < 300; trial++ {
		var keys []base.InternalKey
		var vals [][]byte
		seq := base.SeqNum(1)
		nkeys := 1 + rng.IntN(6)
		for i := 0; i < 40; i++ {
			uk := []byte(fmt.Sprintf("k%d", rng.IntN(nkeys)))
			kind := base.KindSet
			if rng.IntN(3) == 0 {
				kind = base.KindDelete
			}
			keys = append(keys, base.MakeInternalKey(uk, seq, kind))
			vals = append(vals, []byte(fmt.Sprintf("v%d", seq)))
			seq++
		}
		order := make([]int, len(keys))
		for i := range order {
			order[i] = i
		}
		slices.SortFunc(order, func(a, b int) int { return base.Compare(keys[a], keys[b]) })
		sk := make([]base.InternalKey, len(keys))
		sv := make([][]byte, len(keys))
		for i, j := range order {
			sk[i], sv[i] = keys[j], vals[j]
		}
		var snaps []base.SeqNum
		for i := rng.IntN(4); i > 0; i-- {
			snaps = append(snaps, base.SeqNum(1+rng.IntN(int(seq))))
		}
		bottom := rng.IntN(2) == 0
		var elide func([]byte) bool
		if bottom {
			elide = func([]byte) bool { return true }
		}
		it := NewIter(&sliceIter{keys: sk, vals: sv, i: -1}, snaps, elide)
		it.ZeroSeqNums = bottom && rng.IntN(2) == 0
		var outK []base.InternalKey
		var outV [][]byte
		for it.Next() {
			k := it.Key()
			if n := len(outK); n > 0 && base.Compare(outK[n-1], k) >= 0 {
				t.Fatalf("trial %d: %s after %s: out of order (C3)", trial, k, outK[n-1])
			}
			oldest := len(snaps) == 0 || k.SeqNum() <= slices.Min(snaps)
			if it.ZeroSeqNums && k.Kind() == base.KindSet && oldest && k.SeqNum() != 0 {
				t.Fatalf("trial %d: %s kept with its sequence number at the bottom (C4)", trial, k)
			}
			outK = append(outK, k)
			outV = append(outV, it.Value())
		}
		reads := append(slices.Clone(snaps), seq)
		for u := 0; u < nkeys; u++ {
			uk := []byte(fmt.Sprintf("k%d", u))
			for _, r := range reads {
				v1, f1 := visible(sk, sv, uk, r)
				v2, f2 := visible(outK, outV, uk, r)
				if v1 != v2 || f1 != f2 {
					t.Fatalf("trial %d: key %s at %d: before (%q,%v) after (%q,%v); snaps %v bottom %v zero %v", trial, uk, r, v1, f1, v2, f2, snaps, bottom, it.ZeroSeqNums)
				}
			}
		}
		// At the bottom with no snapshots, only live values remain.
		if bottom && len(snaps) == 0 {
			for _, k := range outK {
				if k.Kind() == base.KindDelete {
					t.Fatalf("trial %d: tombstone %s kept at the bottom with no snapshots", trial, k)
				}
			}
			if len(outK) > nkeys {
				t.Fatalf("trial %d: %d entries kept for %d keys", trial, len(outK), nkeys)
			}
		}
	}
}

func TestIterReportsDroppedTombstones(t *testing.T) {
	keys := []base.InternalKey{
		base.MakeInternalKey([]byte("a"), 5, base.KindDelete),
		base.MakeInternalKey([]byte("a"), 3, base.KindDelete),
		base.MakeInternalKey([]byte("a"), 1, base.KindSet),
		base.MakeInternalKey([]byte("b"), 4, base.KindDelete),
	}
	vals := make([][]byte, len(keys))
	it := NewIter(&sliceIter{keys: keys, vals: vals, i: -1}, nil, func(k []byte) bool { return string(k) == "b" })
	var dropped []string
	it.OnDropTombstone = func(k []byte) { dropped = append(dropped, string(k)) }
	var kept []string
	for it.Next() {
		kept = append(kept, it.Key().String())
	}
	if len(kept) != 1 || !slices.Equal(dropped, []string{"a", "b"}) || it.Elided != 1 || it.Dropped != 2 {
		t.Fatalf("kept %v, dropped tombstones %v, elided %d, dropped %d", kept, dropped, it.Elided, it.Dropped)
	}
}
