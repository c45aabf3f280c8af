package memtable

import (
	"bytes"
	"testing"
)

// TestArenaTouchesAheadOfFill checks MT8: after every alloc the current
// chunk's pages are touched at least through the bytes handed out, the
// mark advances in touchAhead steps (so a fill touches pages in batches,
// not one page per fault), and touching never disturbs bytes already
// handed out.
func TestArenaTouchesAheadOfFill(t *testing.T) {
	a := newArena()
	type entry struct {
		chunk, off uint32
		want       []byte
	}
	var entries []entry
	advances := 0
	for i := range 40000 {
		n := 1 + i%300
		prevIdx, prevTouched := a.curIdx, a.touched
		chunk, off, b := a.alloc(n)
		for j := range b {
			b[j] = byte(i + j)
		}
		entries = append(entries, entry{chunk, off, bytes.Clone(b)})
		if a.touched < a.fill {
			t.Fatalf("alloc %d: touched %d behind fill %d", i, a.touched, a.fill)
		}
		if a.touched != len(a.cur) && a.touched%touchAhead != 0 {
			t.Fatalf("alloc %d: touched %d is neither a touchAhead boundary nor the chunk's end %d", i, a.touched, len(a.cur))
		}
		if a.curIdx == prevIdx && a.touched != prevTouched {
			advances++
		}
	}
	if advances == 0 {
		t.Fatal("the touched mark never advanced within a chunk")
	}
	for i, e := range entries {
		if got := a.bytes(e.chunk, e.off, uint32(len(e.want))); !bytes.Equal(got, e.want) {
			t.Fatalf("entry %d changed after later allocs", i)
		}
	}
}
