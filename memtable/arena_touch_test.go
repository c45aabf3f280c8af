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

// TestArenaLargeEntriesTouchTheirOwnPages: entries too large for a batch
// of touchAhead bytes to stay rare (4 KiB values: one Set in 16) touch
// only the pages they span, so no Set takes a batch of page faults; the
// pages handed out are still present (touched at least through the fill)
// and the bytes survive later allocs.
func TestArenaLargeEntriesTouchTheirOwnPages(t *testing.T) {
	for _, n := range []int{touchAhead/touchBatchEvery + 1, 1000, 4096, 9000} {
		a := newArena()
		var want [][]byte
		var pos [][2]uint32
		for i := range 2000 {
			prevIdx, prevTouched, prevFill := a.curIdx, a.touched, a.fill
			chunk, off, b := a.alloc(n)
			for j := range b {
				b[j] = byte(i*7 + j)
			}
			want, pos = append(want, bytes.Clone(b)), append(pos, [2]uint32{chunk, off})
			if a.touched < a.fill {
				t.Fatalf("entry size %d, alloc %d: touched %d behind fill %d", n, i, a.touched, a.fill)
			}
			if a.curIdx != prevIdx || a.touched == len(a.cur) {
				continue // a new chunk (or a pooled one, present whole), or its end
			}
			// Through the page the entry ends in, no further.
			if limit := (prevFill+n)/pageSize*pageSize + pageSize; a.touched > max(limit, prevTouched) {
				t.Fatalf("entry size %d, alloc %d: touched %d, past %d, the end of the page the entry ends in", n, i, a.touched, limit)
			}
		}
		for i, w := range want {
			if got := a.bytes(pos[i][0], pos[i][1], uint32(len(w))); !bytes.Equal(got, w) {
				t.Fatalf("entry size %d: entry %d changed after later allocs", n, i)
			}
		}
	}
}
