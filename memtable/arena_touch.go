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

// touchBatchEvery bounds how often a batch of touchAhead pages may fall on
// a Set: at most once in this many, half a percent, below the 99th
// percentile. An entry larger than touchAhead/touchBatchEvery (327 bytes)
// would hit batches more often (4 KiB values: one Set in 16, each taking
// 16 faults, about 16 us on the loaded test machine, which set the 99th
// percentile of such a fill), so it touches only the pages it spans, one
// fault or two per Set, paid evenly.
const touchBatchEvery = 200

// touch makes the pages of the current chunk through the next touchAhead
// boundary past end present, if end has passed what is touched already;
// for an entry of n bytes larger than touchAhead/touchBatchEvery, through
// the page end falls in. The bytes stored are the zeros the chunk holds
// already, beyond the fill, where no reader looks (MT6). REQUIRES: the
// memtable's write lock.
func (a *arena) touch(end, n int) {
	if end <= a.touched {
		return
	}
	step := touchAhead
	if n > touchAhead/touchBatchEvery {
		step = pageSize
	}
	to := min((end/step+1)*step, len(a.cur))
	for p := a.touched; p < to; p += pageSize {
		a.cur[p] = 0
	}
	a.touched = to
}
