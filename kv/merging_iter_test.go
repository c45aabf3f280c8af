package kv

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/sievekv/sievekv/internal/base"
)

// sortedIter is a base.InternalIterator over sorted keys, in both
// directions, that fails with err once it has moved failAfter times
// (never when failAfter is 0). Unless stableKeys, Key hands out a fresh
// copy each time and scribbles over the previous one when it moves, as a
// child reusing its key buffer would, so a merge that keeps a key past
// the child's next move reads garbage. The benchmark sets stableKeys, to
// measure the merge rather than the copies.
type sortedIter struct {
	keys       []base.InternalKey
	i          int
	moves      int
	failAfter  int
	err        error
	last       []byte
	stableKeys bool
}

func (s *sortedIter) move(i int) bool {
	s.moves++
	if s.failAfter > 0 && s.moves >= s.failAfter {
		s.err, s.i = errTestChild, -1
		return false
	}
	if len(s.last) > 0 {
		s.last[0] ^= 0xff
	}
	s.i = i
	return s.Valid()
}

var errTestChild = errors.New("test child failed")

func (s *sortedIter) First() bool { return s.move(0) }
func (s *sortedIter) Last() bool  { return s.move(len(s.keys) - 1) }
func (s *sortedIter) Next() bool {
	if !s.Valid() {
		return false
	}
	return s.move(s.i + 1)
}
func (s *sortedIter) Prev() bool {
	if !s.Valid() {
		return false
	}
	return s.move(s.i - 1)
}
func (s *sortedIter) SeekGE(k base.InternalKey) bool {
	i, _ := slices.BinarySearchFunc(s.keys, k, base.Compare)
	return s.move(i)
}
func (s *sortedIter) SeekLT(k base.InternalKey) bool {
	i, _ := slices.BinarySearchFunc(s.keys, k, base.Compare)
	return s.move(i - 1)
}
func (s *sortedIter) Valid() bool { return s.err == nil && s.i >= 0 && s.i < len(s.keys) }
func (s *sortedIter) Key() base.InternalKey {
	k := s.keys[s.i]
	if s.stableKeys {
		return k
	}
	s.last = slices.Clone(k.UserKey)
	return base.InternalKey{UserKey: s.last, Trailer: k.Trailer}
}
func (s *sortedIter) Value() []byte { return s.keys[s.i].UserKey }
func (s *sortedIter) Error() error  { return s.err }
func (s *sortedIter) Close() error  { return s.err }

// randomChildren spreads n unique internal keys (a few versions of each
// user key, so children interleave within a user key too) over k sorted
// children, and returns them with the sorted whole.
func randomChildren(rng *rand.Rand, n, k int) ([]*sortedIter, []base.InternalKey) {
	var all []base.InternalKey
	children := make([]*sortedIter, k)
	for i := range children {
		children[i] = &sortedIter{}
	}
	for seq := 1; seq <= n; seq++ {
		key := base.MakeInternalKey(fmt.Appendf(nil, "k%04d", rng.IntN(max(n/3, 1))), base.SeqNum(seq), base.KindSet)
		all = append(all, key)
		c := children[rng.IntN(k)]
		c.keys = append(c.keys, key)
	}
	for _, c := range children {
		slices.SortFunc(c.keys, base.Compare)
	}
	slices.SortFunc(all, base.Compare)
	return children, all
}

func asInternal(cs []*sortedIter) []base.InternalIterator {
	out := make([]base.InternalIterator, len(cs))
	for i, c := range cs {
		out[i] = c
	}
	return out
}

// TestMergingIterMatchesModel drives merges of random children with
// random seeks and steps in both directions and checks every position
// against the sorted whole: the heap's order, direction switches, and
// the key the merge reports staying right while the children move.
func TestMergingIterMatchesModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	for trial := range 300 {
		children, all := randomChildren(rng, rng.IntN(60), 1+rng.IntN(6))
		m := newMergingIter(asInternal(children))
		pos := -1 // the model's position in all; -1 or len(all): unpositioned
		check := func(op string, ok bool) {
			t.Helper()
			want := pos >= 0 && pos < len(all)
			if ok != want || m.Valid() != want {
				t.Fatalf("trial %d: %s: ok %v, valid %v, want %v (pos %d of %d)", trial, op, ok, m.Valid(), want, pos, len(all))
			}
			if want && base.Compare(m.Key(), all[pos]) != 0 {
				t.Fatalf("trial %d: %s: key %s#%d, want %s#%d", trial, op, m.Key().UserKey, m.Key().Trailer, all[pos].UserKey, all[pos].Trailer)
			}
			if want && string(m.Value()) != string(all[pos].UserKey) {
				t.Fatalf("trial %d: %s: value %q, want %q", trial, op, m.Value(), all[pos].UserKey)
			}
		}
		for range 80 {
			switch rng.IntN(6) {
			case 0:
				pos = 0
				check("First", m.First())
			case 1:
				pos = len(all) - 1
				check("Last", m.Last())
			case 2:
				k := base.MakeInternalKey(fmt.Appendf(nil, "k%04d", rng.IntN(30)), base.SeqNum(rng.IntN(70)), base.KindSet)
				pos, _ = slices.BinarySearchFunc(all, k, base.Compare)
				check("SeekGE", m.SeekGE(k))
			case 3:
				k := base.MakeInternalKey(fmt.Appendf(nil, "k%04d", rng.IntN(30)), base.SeqNum(rng.IntN(70)), base.KindSet)
				pos, _ = slices.BinarySearchFunc(all, k, base.Compare)
				pos--
				check("SeekLT", m.SeekLT(k))
			case 4:
				if pos >= 0 && pos < len(all) {
					pos++
					check("Next", m.Next())
				}
			case 5:
				if pos >= 0 && pos < len(all) {
					pos--
					check("Prev", m.Prev())
				}
			}
		}
		if err := m.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestMergingIterChildErrorStops: a child that fails while the merge
// steps ends the merge with its error, in either direction, rather than
// dropping the child and going on without its keys.
func TestMergingIterChildErrorStops(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	for trial := range 200 {
		children, all := randomChildren(rng, 20+rng.IntN(40), 2+rng.IntN(4))
		children[rng.IntN(len(children))].failAfter = 2 + rng.IntN(10)
		m := newMergingIter(asInternal(children))
		forward := trial%2 == 0
		ok := m.First()
		if !forward {
			ok = m.Last()
		}
		steps := 0
		for ok {
			steps++
			if forward {
				ok = m.Next()
			} else {
				ok = m.Prev()
			}
		}
		if !errors.Is(m.Error(), errTestChild) && steps != len(all) {
			t.Fatalf("trial %d: stopped after %d of %d keys with error %v", trial, steps, len(all), m.Error())
		}
	}
}

// BenchmarkMergingIterNext: one op is one Next of a merge of k children
// of interleaved keys, as a compaction's input or a scan over L0 tables
// and levels steps; the merge is restarted when it runs out.
func BenchmarkMergingIterNext(b *testing.B) {
	for _, k := range []int{2, 4, 8} {
		b.Run(fmt.Sprintf("children%d", k), func(b *testing.B) {
			children, _ := randomChildren(rand.New(rand.NewPCG(1, uint64(k))), 30000, k)
			for _, c := range children {
				for i := range c.keys {
					c.keys[i].UserKey = slices.Clone(c.keys[i].UserKey)
				}
			}
			for _, c := range children {
				c.stableKeys = true
			}
			m := newMergingIter(asInternal(children))
			m.First()
			for b.Loop() {
				if !m.Next() {
					m.First()
				}
			}
		})
	}
}
