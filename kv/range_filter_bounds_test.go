package kv

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/sievekv/sievekv/vfs"
)

// oddKey draws a key from an alphabet that sits on the edges range
// filters code keys by: 0x00 and 0xff bytes, the empty key, prefixes of
// other keys, and keys of several hundred bytes sharing a long prefix.
func oddKey(rng *rand.Rand) []byte {
	alphabet := []byte{0x00, 0x01, 'a', 0x7f, 0x80, 0xfe, 0xff}
	var k []byte
	if rng.IntN(6) == 0 {
		k = bytes.Repeat([]byte{alphabet[rng.IntN(len(alphabet))]}, 200+rng.IntN(400))
	}
	for n := rng.IntN(5); n > 0; n-- {
		k = append(k, alphabet[rng.IntN(len(alphabet))])
	}
	if k == nil {
		k = []byte{}
	}
	return k
}

// oddKeyPool returns n distinct keys drawn by oddKey.
func oddKeyPool(rng *rand.Rand, n int) [][]byte {
	seen := map[string]bool{}
	pool := make([][]byte, 0, n)
	for len(pool) < n {
		if k := oddKey(rng); !seen[string(k)] {
			seen[string(k)] = true
			pool = append(pool, k)
		}
	}
	return pool
}

// oddBound is a bound a careless caller passes: nil, empty, a key that may
// or may not be stored, or that key plus 0x00 or 0xff.
func oddBound(rng *rand.Rand) []byte {
	switch rng.IntN(6) {
	case 0:
		return nil
	case 1:
		return []byte{}
	case 2:
		return append(oddKey(rng), 0x00)
	case 3:
		return append(oddKey(rng), 0xff)
	default:
		return oddKey(rng)
	}
}

// modelIter is the answer an Iterator over [lower, upper) of a sorted key
// list must give, positioned at pos (-1 before the head, len past the end).
type modelIter struct {
	keys []string // sorted keys within the bounds
	pos  int
}

func newModelIter(model map[string]string, lower, upper []byte) *modelIter {
	m := &modelIter{pos: -1}
	for k := range model {
		if lower != nil && k < string(lower) || upper != nil && k >= string(upper) {
			continue
		}
		m.keys = append(m.keys, k)
	}
	slices.Sort(m.keys)
	return m
}

func (m *modelIter) valid() bool { return m.pos >= 0 && m.pos < len(m.keys) }

// TestRangeFilterOddBoundsMatchModel drives iterators with odd bounds
// (nil, empty, equal, inverted, keys with 0x00 and 0xff bytes, keys of
// hundreds of bytes) through random First, Last, SeekGE, SeekLT, Next and
// Prev calls over a DB whose tables carry range filters, spread over the
// memtable, L0 and deeper levels, and compares every step with a map
// model: a range filter must never change an answer.
func TestRangeFilterOddBoundsMatchModel(t *testing.T) {
	seeds := []uint64{1, 2, 3, 4, 5, 6, 7, 8}
	if raceEnabled {
		seeds = seeds[:4]
	}
	for _, seed := range seeds {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) { runRangeFilterOddBounds(t, seed) })
	}
}

func runRangeFilterOddBounds(t *testing.T, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 7))
	fs := vfs.NewMem()
	opts := &Options{FS: fs, RangeFilterBitsPerKey: 3 + float64(rng.IntN(20)), MemTableSize: 32 << 10,
		BlockSize: 256, BlockCacheSize: -1, DisableAutomaticCompactions: true}
	d, err := Open("db", opts)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { d.Close() }()
	model := map[string]string{}
	var negatives uint64
	for round := 0; round < 12; round++ {
		for i := 0; i < 60; i++ {
			randomWrite(t, seed, d, rng, model, func() []byte { return oddKey(rng) }, fmt.Sprintf("v%d.%d", round, i))
		}
		switch rng.IntN(4) {
		case 0, 1:
			if err := d.Flush(); err != nil {
				t.Fatal(err)
			}
		case 2:
			lo, hi := oddKey(rng), oddKey(rng)
			if bytes.Compare(lo, hi) > 0 {
				lo, hi = hi, lo
			}
			if err := d.Compact(lo, hi); err != nil {
				t.Fatal(err)
			}
		}
		if round == 8 {
			negatives += d.Metrics().Filter.RangeNegatives
			if err := d.Close(); err != nil {
				t.Fatal(err)
			}
			if rep, err := Check("db", opts); err != nil || len(rep.Problems) > 0 {
				t.Fatalf("seed %d: Check after Close: %v, %v", seed, err, rep.Problems)
			}
			if d, err = Open("db", opts); err != nil {
				t.Fatal(err)
			}
		}
		for q := 0; q < 40; q++ {
			checkOddBoundsIter(t, seed, round, q, rng, d, model)
		}
	}
	negatives += d.Metrics().Filter.RangeNegatives
	if negatives == 0 {
		t.Fatalf("seed %d: no range filter ruled a table out: the test exercised nothing", seed)
	}
}

// randomWrite applies one random write to d and model: a Set of value
// (60%), a Delete (30%) or a DeleteRange (10%), of keys drawn by key.
func randomWrite(t *testing.T, seed uint64, d *DB, rng *rand.Rand, model map[string]string, key func() []byte, value string) {
	t.Helper()
	k := key()
	switch r := rng.IntN(10); {
	case r < 6:
		if err := d.Set(k, []byte(value), NoSync); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		model[string(k)] = value
	case r < 9:
		if err := d.Delete(k, NoSync); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		delete(model, string(k))
	default:
		e := key()
		if bytes.Compare(k, e) > 0 {
			k, e = e, k
		}
		if bytes.Equal(k, e) {
			return
		}
		if err := d.DeleteRange(k, e, NoSync); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		for mk := range model {
			if mk >= string(k) && mk < string(e) {
				delete(model, mk)
			}
		}
	}
}

func checkOddBoundsIter(t *testing.T, seed uint64, round, q int, rng *rand.Rand, d *DB, model map[string]string) {
	t.Helper()
	lower, upper := oddBound(rng), oddBound(rng)
	switch rng.IntN(5) {
	case 0:
		upper = lower // equal
	case 1:
		if lower != nil && upper != nil && bytes.Compare(lower, upper) < 0 {
			lower, upper = upper, lower // inverted
		}
	}
	it := d.NewIter(&IterOptions{LowerBound: lower, UpperBound: upper})
	defer it.Close()
	m := newModelIter(model, lower, upper)
	var trace []string
	positioned := false // Next and Prev of an unpositioned iterator return false
	for step := 0; step < 12; step++ {
		r := rng.IntN(6)
		if !positioned && r >= 4 {
			continue
		}
		var op string
		var got bool
		positioned = true
		switch r {
		case 0, 1, 2, 3:
			op, got = positionBoth(rng, r, it, m, lower, upper)
		case 4:
			if !m.valid() && m.pos >= len(m.keys) {
				continue // Next past the end stays there; Iterator agrees, nothing to learn
			}
			op, got = "Next", it.Next()
			m.pos++
		default:
			if !m.valid() && m.pos < 0 {
				continue
			}
			op, got = "Prev", it.Prev()
			if m.pos >= len(m.keys) {
				m.pos = len(m.keys) - 1 // Prev past the end is Last
			} else {
				m.pos--
			}
		}
		trace = append(trace, op)
		if err := it.Error(); err != nil {
			t.Fatalf("seed %d round %d query %d [%x, %x): %v after %v", seed, round, q, lower, upper, err, trace)
		}
		want := m.valid()
		if m.pos < 0 {
			m.pos = -1
		} else if m.pos > len(m.keys) {
			m.pos = len(m.keys)
		}
		if got != want || got && (string(it.Key()) != m.keys[m.pos] || string(it.Value()) != model[m.keys[m.pos]]) {
			var gk, wk string
			if got {
				gk = fmt.Sprintf("%x", it.Key())
			}
			if want {
				wk = fmt.Sprintf("%x", m.keys[m.pos])
			}
			t.Fatalf("seed %d round %d query %d, bounds [%x, %x): after %v got %v %s, want %v %s",
				seed, round, q, lower, upper, trace, got, gk, want, wk)
		}
	}
}

// positionBoth makes positioning call r (First, Last, a SeekGE or a SeekLT
// of an odd key) on it and the model m of the same bounds; it returns the
// call's name and result.
func positionBoth(rng *rand.Rand, r int, it *Iterator, m *modelIter, lower, upper []byte) (string, bool) {
	switch r {
	case 0:
		m.pos = 0
		return "First", it.First()
	case 1:
		m.pos = len(m.keys) - 1
		return "Last", it.Last()
	case 2:
		k := oddBound(rng)
		got := it.SeekGE(k)
		op := fmt.Sprintf("SeekGE(%x)", k)
		if lower != nil && bytes.Compare(k, lower) < 0 {
			k = lower
		}
		m.pos, _ = slices.BinarySearch(m.keys, string(k))
		return op, got
	default:
		k := oddBound(rng)
		got := it.SeekLT(k)
		op := fmt.Sprintf("SeekLT(%x)", k)
		if upper != nil && bytes.Compare(k, upper) > 0 {
			k = upper
		}
		i, _ := slices.BinarySearch(m.keys, string(k))
		m.pos = i - 1
		return op, got
	}
}
