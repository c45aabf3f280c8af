package sstable

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/sievekv/sievekv/internal/base"
	"github.com/sievekv/sievekv/internal/rangedel"
	"github.com/sievekv/sievekv/vfs"
)

// kv is one model entry.
type kv struct {
	key   base.InternalKey
	value []byte
}

// keyGen generates one user-key shape; keyGens holds the shapes that stress
// prefix compression, separators and binary bytes.
type keyGen func(rng *rand.Rand, i int) []byte

var keyGens = map[string]keyGen{
	"plain": func(rng *rand.Rand, i int) []byte { return []byte(fmt.Sprintf("key%09d", i)) },
	// 300 shared bytes before the part that differs.
	"longprefix": func(rng *rand.Rand, i int) []byte {
		return append(bytes.Repeat([]byte("p"), 300), fmt.Sprintf("%09d", i)...)
	},
	// Binary keys full of 0x00 and 0xff, including the empty key and keys
	// that are prefixes of each other.
	"binary": func(rng *rand.Rand, i int) []byte {
		k := make([]byte, rng.IntN(12))
		for j := range k {
			k[j] = [4]byte{0x00, 0x01, 0xfe, 0xff}[rng.IntN(4)]
		}
		return k
	},
}

// makeEntries builds a sorted model of about n entries: distinct user keys
// with 1-3 versions each, a quarter of versions tombstones.
func makeEntries(rng *rand.Rand, n int, gen keyGen, valueLen func() int) []kv {
	seen := map[string]bool{}
	var out []kv
	seq := base.SeqNum(1)
	for i := 0; len(out) < n; i++ {
		uk := gen(rng, i)
		if seen[string(uk)] {
			if i > 50*n+1000 { // a small key space is exhausted; stop
				break
			}
			continue
		}
		seen[string(uk)] = true
		versions := 1 + rng.IntN(3)
		for v := 0; v < versions && len(out) < n; v++ {
			seq += base.SeqNum(1 + rng.IntN(3))
			if rng.IntN(4) == 0 {
				out = append(out, kv{base.MakeInternalKey(uk, seq, base.KindDelete), nil})
			} else {
				val := make([]byte, valueLen())
				for j := range val {
					val[j] = byte(rng.IntN(256))
				}
				out = append(out, kv{base.MakeInternalKey(uk, seq, base.KindSet), val})
			}
		}
	}
	slices.SortFunc(out, func(a, b kv) int { return base.Compare(a.key, b.key) })
	return out
}

// writeTable writes entries to name in fs and returns the file size.
// writeTable writes entries, and any range tombstones, as table name.
func writeTable(t testing.TB, fs vfs.FS, name string, entries []kv, opts WriterOptions, rangeDels ...rangedel.Tombstone) Metadata {
	t.Helper()
	f, err := fs.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	w := NewWriter(f, opts)
	for _, rd := range rangeDels {
		if err := w.AddRangeDel(rd); err != nil {
			t.Fatal(err)
		}
	}
	for _, e := range entries {
		if err := w.Add(e.key, e.value); err != nil {
			t.Fatal(err)
		}
	}
	md, err := w.Finish()
	if err != nil {
		t.Fatal(err)
	}
	return md
}

func openTable(t testing.TB, fs vfs.FS, name string, opts ReaderOptions) *Reader {
	t.Helper()
	f, err := fs.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	st, _ := f.Stat()
	r, err := Open(f, st.Size(), opts)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// openFlipped writes table bytes data to name in fs with one bit of byte
// off flipped and opens the result: what one damaged byte does to Open.
func openFlipped(t testing.TB, fs vfs.FS, name string, data []byte, off uint64) (*Reader, error) {
	t.Helper()
	bad := bytes.Clone(data)
	bad[off] ^= 0x10
	f, err := fs.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(bad); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if f, err = fs.Open(name); err != nil {
		t.Fatal(err)
	}
	return Open(f, int64(len(bad)), ReaderOptions{})
}

// modelGet is the reference answer for Get (base B3).
func modelGet(entries []kv, uk []byte, seq base.SeqNum) (kv, bool) {
	i, _ := slices.BinarySearchFunc(entries, base.MakeSearchKey(uk, seq), func(e kv, k base.InternalKey) int { return base.Compare(e.key, k) })
	if i < len(entries) && bytes.Equal(entries[i].key.UserKey, uk) {
		return entries[i], true
	}
	return kv{}, false
}

func sameEntry(it base.InternalIterator, e kv) bool {
	return it.Valid() && it.Key().Trailer == e.key.Trailer && bytes.Equal(it.Key().UserKey, e.key.UserKey) && bytes.Equal(it.Value(), e.value)
}

// inBounds filters the model to [lower, upper).
func inBounds(entries []kv, lower, upper []byte) []kv {
	var out []kv
	for _, e := range entries {
		if (lower == nil || bytes.Compare(e.key.UserKey, lower) >= 0) && (upper == nil || bytes.Compare(e.key.UserKey, upper) < 0) {
			out = append(out, e)
		}
	}
	return out
}

// checkWalks compares full forward and backward walks with the model.
func checkWalks(t *testing.T, it base.InternalIterator, want []kv) {
	t.Helper()
	checkForwardWalk(t, it, want)
	i := len(want) - 1
	for ok := it.Last(); ok; ok = it.Prev() {
		if i < 0 || !sameEntry(it, want[i]) {
			t.Fatalf("backward step %d: got %v", i, it.Key())
		}
		i--
	}
	if err := it.Error(); err != nil || i != -1 {
		t.Fatalf("backward walk stopped at %d, err %v", i, err)
	}
}

// checkForwardWalk checks that it, from First to the end, yields exactly
// want.
func checkForwardWalk(t *testing.T, it base.InternalIterator, want []kv) {
	t.Helper()
	i := 0
	for ok := it.First(); ok; ok = it.Next() {
		if i >= len(want) || !sameEntry(it, want[i]) {
			t.Fatalf("forward step %d: got %v", i, it.Key())
		}
		i++
	}
	if err := it.Error(); err != nil || i != len(want) {
		t.Fatalf("forward walk: %d of %d entries, err %v", i, len(want), err)
	}
}

// checkSeeks runs random seeks, with a step each way, against the model.
func checkSeeks(t *testing.T, it base.InternalIterator, want []kv, probe func() base.InternalKey, n int) {
	t.Helper()
	for range n {
		key := probe()
		ge, _ := slices.BinarySearchFunc(want, key, func(e kv, k base.InternalKey) int { return base.Compare(e.key, k) })
		if ok := it.SeekGE(key); ok != (ge < len(want)) || (ok && !sameEntry(it, want[ge])) {
			t.Fatalf("SeekGE(%v) = %v, want index %d of %d (err %v)", key, ok, ge, len(want), it.Error())
		}
		if ge < len(want) && ge > 0 {
			if !it.Prev() || !sameEntry(it, want[ge-1]) {
				t.Fatalf("Prev after SeekGE(%v)", key)
			}
		}
		lt := ge - 1
		if ok := it.SeekLT(key); ok != (lt >= 0) || (ok && !sameEntry(it, want[lt])) {
			t.Fatalf("SeekLT(%v) = %v, want index %d (err %v)", key, ok, lt, it.Error())
		}
		if lt >= 0 && lt+1 < len(want) {
			if !it.Next() || !sameEntry(it, want[lt+1]) {
				t.Fatalf("Next after SeekLT(%v)", key)
			}
		}
	}
}
