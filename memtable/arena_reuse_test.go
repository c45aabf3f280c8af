package memtable

import (
	"bytes"
	"fmt"
	"testing"
	"unsafe"

	"github.com/sievekv/sievekv/internal/base"
)

// TestReleasedChunksAreReused checks MT9: a memtable filled after another
// was released takes the released chunks instead of allocating, and reads
// back exactly its own entries although the chunks still hold the old
// memtable's bytes.
func TestReleasedChunksAreReused(t *testing.T) {
	fill := func(m *MemTable, tag string, n int) {
		for i := range n {
			m.Set([]byte(fmt.Sprintf("%s-%06d", tag, i)), base.SeqNum(i+1), bytes.Repeat([]byte(tag), 30))
		}
	}
	old := New()
	fill(old, "old", 5000) // several chunks, 16 KiB up to 128 KiB
	released := map[uintptr]bool{}
	for _, c := range *old.arena.chunks.Load() {
		released[uintptr(unsafe.Pointer(unsafe.SliceData(c)))] = true
	}
	old.Release()
	old.Release() // twice does nothing

	m := New()
	fill(m, "new", 5000)
	reused := 0
	for _, c := range *m.arena.chunks.Load() {
		if released[uintptr(unsafe.Pointer(unsafe.SliceData(c)))] {
			reused++
		}
	}
	if reused == 0 {
		t.Fatalf("none of the %d released chunks was reused", len(released))
	}
	for i := range 5000 {
		k := []byte(fmt.Sprintf("new-%06d", i))
		v, kind, ok := m.Get(k, base.SeqNumMax)
		if !ok || kind != base.KindSet || !bytes.Equal(v, bytes.Repeat([]byte("new"), 30)) {
			t.Fatalf("Get(%s) = %q, %v, %v after reusing chunks", k, v, kind, ok)
		}
	}
	it := m.NewIter(nil, nil)
	n := 0
	for ok := it.First(); ok; ok = it.Next() {
		if !bytes.HasPrefix(it.Key().UserKey, []byte("new-")) {
			t.Fatalf("iterator found %q", it.Key().UserKey)
		}
		n++
	}
	it.Close()
	if n != 5000 {
		t.Fatalf("iterator found %d entries, want 5000", n)
	}
}

// TestGetAfterReleasePanics checks that a use of a released memtable
// fails loudly instead of reading bytes another memtable now owns.
func TestGetAfterReleasePanics(t *testing.T) {
	m := New()
	m.Set([]byte("k"), 1, []byte("v"))
	m.Release()
	defer func() {
		if recover() == nil {
			t.Fatal("Get on a released memtable did not panic")
		}
	}()
	m.Get([]byte("k"), base.SeqNumMax)
}
