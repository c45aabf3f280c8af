package kv

import (
	"container/heap"
	"testing"

	"github.com/sievekv/sievekv/internal/rangedel"
)

// TestCutBoundOwnsItsBytes (a review): when no key shorter than the
// table's last point lies below the limit ("ab" before "ac"),
// base.ShortSeparator returns that point itself, and cutBound appended
// the bound's 0x00 in place: into the caller's array past the point's
// length, and into a bound that changed when the caller reused its
// buffer. No caller shares such an array today; one that did would write
// wrong bounds into tables.
func TestCutBoundOwnsItsBytes(t *testing.T) {
	ts := rangedel.Tombstone{Start: []byte("a"), End: []byte("z"), Seq: 5}
	o := &rangeDelOutput{added: []rangedel.Tombstone{ts}, maxStart: ts.Start}
	heap.Push(&o.reaching, ts.End)
	o.reachingEndBytes = uint64(len(ts.End))
	buf := []byte("abXY") // the caller's buffer: its last point "ab", then other bytes
	bound, ok := o.cutBound(buf[:2], []byte("ac"), 1<<20)
	if !ok || string(bound) != "ab\x00" {
		t.Fatalf("cutBound = %q, %v; want \"ab\\x00\", true", bound, ok)
	}
	if string(buf) != "abXY" {
		t.Errorf("cutBound wrote into its caller's array: %q", buf)
	}
	buf[2] = 'Q'
	if string(bound) != "ab\x00" {
		t.Errorf("the bound shares the caller's array: now %q", bound)
	}
}
