package memtable

import "os"

// pageSize is the unit the OS backs memory in.
var pageSize = os.Getpagesize()

// touchAhead is how far past the fill an arena keeps its current chunk's
// pages touched (MT8). A chunk the Go heap takes fresh from the OS is not
// zeroed by Go (the OS pages are zero), so none of its pages exists until
// a store reaches it: with 116-byte entries that was one Set in 35 taking
// a page fault in the copy, under the memtable lock, which set the 99th
// percentile of a sequential fill. Touching 16 pages at a time moves
// those faults into one Set in about 560, and costs 16 stores when the
// chunk's pages are already present (memory the heap reused and zeroed).
const touchAhead = 64 << 10

// touch makes the pages of the current chunk through the next touchAhead
// boundary past end present, if end has passed what is touched already.
// The bytes stored are the zeros the chunk holds already, beyond the
// fill, where no reader looks (MT6). REQUIRES: the memtable's write lock.
func (a *arena) touch(end int) {
	if end <= a.touched {
		return
	}
	to := min((end/touchAhead+1)*touchAhead, len(a.cur))
	for p := a.touched; p < to; p += pageSize {
		a.cur[p] = 0
	}
	a.touched = to
}
