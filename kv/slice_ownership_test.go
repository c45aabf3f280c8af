package kv

import (
	"fmt"
	"testing"
)

// A caller scribbling over every slice the iterator hands out, in both
// directions, over the memtable and over tables, must not change what the
// DB holds: it used to overwrite the memtable's keys (Key aliased them),
// and the next flush wrote a table out of order, turning the DB read-only.
func TestIteratorSlicesAreTheCallers(t *testing.T) {
	dir := t.TempDir()
	d, err := Open(dir, &Options{MemTableSize: 8 << 10})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{}
	put := func(lo, hi int) {
		for i := lo; i < hi; i++ {
			k, v := fmt.Sprintf("key%05d", i), fmt.Sprintf("value%05d", i)
			want[k] = v
			if err := d.Set([]byte(k), []byte(v), NoSync); err != nil {
				t.Fatal(err)
			}
		}
	}
	// scribble clears every key and value a walk hands out: forward, then
	// (once forward is known harmless) backward and turning around, where
	// the iterator's reverse copies are in use.
	scribble := func(reverse bool) {
		t.Helper()
		it := d.NewIter(nil)
		defer it.Close()
		steps := 0
		if !reverse {
			for ok := it.First(); ok && steps <= len(want); ok = it.Next() {
				clear(it.Key())
				clear(it.Value())
				steps++
			}
		} else {
			for ok := it.Last(); ok && steps <= len(want); ok = it.Prev() {
				clear(it.Key())
				clear(it.Value())
				steps++
			}
			for ok := it.SeekGE([]byte("key00100")); ok && it.Prev(); {
				clear(it.Key())
				it.Next()
				clear(it.Key())
				break
			}
		}
		if steps != len(want) {
			t.Fatalf("scribbling walk took %d steps over %d keys", steps, len(want))
		}
	}
	check := func(when string) {
		t.Helper()
		for k, v := range want {
			got, err := d.Get([]byte(k))
			if err != nil || string(got) != v {
				t.Fatalf("%s: Get %s = %q, %v", when, k, got, err)
			}
		}
		it := d.NewIter(nil)
		n := 0
		for ok := it.First(); ok; ok = it.Next() {
			n++
		}
		if err := it.Close(); err != nil || n != len(want) {
			t.Fatalf("%s: scan found %d keys, want %d (%v)", when, n, len(want), err)
		}
	}
	put(0, 300) // in tables by now, and in the memtable
	scribble(false)
	check("after scribbling forward")
	scribble(true)
	check("after scribbling backward")
	if err := d.Flush(); err != nil {
		t.Fatalf("Flush after scribbling: %v", err)
	}
	put(300, 400)
	scribble(false)
	scribble(true)
	if err := d.Compact(nil, nil); err != nil {
		t.Fatalf("Compact after scribbling: %v", err)
	}
	check("after flush and compaction")
	d = reopen(t, d, dir, nil)
	defer d.Close()
	check("after reopen")
}

// Get's value and the caller's own buffers passed to Set are independent
// of the DB's copies.
func TestGetAndSetSlicesAreTheCallers(t *testing.T) {
	d, err := Open(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	k, v := []byte("key"), []byte("value")
	if err := d.Set(k, v, NoSync); err != nil {
		t.Fatal(err)
	}
	clear(k)
	clear(v)
	got, err := d.Get([]byte("key"))
	if err != nil || string(got) != "value" {
		t.Fatalf("Get after clearing Set's buffers = %q, %v", got, err)
	}
	clear(got)
	if again, err := d.Get([]byte("key")); err != nil || string(again) != "value" {
		t.Fatalf("Get after clearing the previous result = %q, %v", again, err)
	}
}
