package sstable

import (
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/sievekv/sievekv/filters"
	"github.com/sievekv/sievekv/internal/base"
)

// A table may carry a range filter (filters.RangeFilter) over its distinct
// user keys, so a bounded scan can skip it without reading a data block
// (T10). The block is optional and sits between the last data block and
// the point filter block (or the index when there is none):
//
//	[data blocks] [range filter block]? [filter block]? [index] [properties] [footer]
//
// Its contents size is the properties' optional field 16; its offset is
// implied, since the block ends where the next region starts, so the
// footer is unchanged and tables without one read as before
// (docs/format.md, "Range filter block").

// rangeFilterBuilder collects a writer's user keys for the range filter.
type rangeFilterBuilder struct {
	b   *filters.RangeBuilder
	err error // invalid WriterOptions.RangeFilterBitsPerKey, reported by Finish
}

// Range filter builders are kept between tables: a builder's memory grows
// to its table's keys (about 20 bytes per key: the front-coded keys, the
// codes and a sort scratch), and flushes and compactions write table after
// table of about the same size, so a reused builder allocates next to
// nothing. A sync.Pool alone lost them: it drops what it holds at every
// second GC, and a table build allocates enough (data blocks, the point
// filter) to run one every few tables, so two builds in three grew a fresh
// arena by doubling and a fresh code slice, a tenth of the range filter's
// build cost on 100k-key tables (docs/design.md, "Range filters", build
// cost). So up to spareRangeBuilders builders of at most
// maxSpareRangeBuilderBytes each are held in a free list the GC leaves
// alone (bounded memory, enough for a flush and a compaction or two at
// once); the pool takes the rest, as before.
const spareRangeBuilders = 4

var (
	// maxSpareRangeBuilderBytes is 8 MiB, a builder of about 400k keys (a
	// variable so a test can build past it quickly).
	maxSpareRangeBuilderBytes = 8 << 20
	spareBuilders             = make(chan *filters.RangeBuilder, spareRangeBuilders)
	rangeBuilders             sync.Pool
)

// getRangeBuilder returns a reset builder kept from an earlier table, or
// nil.
func getRangeBuilder() *filters.RangeBuilder {
	select {
	case b := <-spareBuilders:
		return b
	default:
	}
	b, _ := rangeBuilders.Get().(*filters.RangeBuilder)
	return b
}

// putRangeBuilder keeps b, reset, for a later table.
func putRangeBuilder(b *filters.RangeBuilder) {
	if b.RetainedBytes() <= maxSpareRangeBuilderBytes {
		select {
		case spareBuilders <- b:
			return
		default:
		}
	}
	rangeBuilders.Put(b)
}

func newRangeFilterBuilder(bitsPerKey float64) rangeFilterBuilder {
	if bitsPerKey == 0 {
		return rangeFilterBuilder{}
	}
	if b := getRangeBuilder(); b != nil {
		if err := b.SetBitsPerKey(bitsPerKey); err != nil {
			putRangeBuilder(b)
			return rangeFilterBuilder{err: err}
		}
		return rangeFilterBuilder{b: b} // kept builders are reset
	}
	b, err := filters.NewRangeBuilder(bitsPerKey)
	return rangeFilterBuilder{b: b, err: err}
}

// release returns the builder, reset, for a later table. An aborted
// writer's builder, which may hold keys, is left to the garbage collector.
func (rb *rangeFilterBuilder) release() {
	if rb.b != nil {
		rb.b.Reset()
		putRangeBuilder(rb.b)
		rb.b = nil
	}
}

// add records a new user key, which shares its first shared bytes with
// the one before it (the writer calls it once per distinct key, in order,
// with the length its own repeat check found).
func (rb *rangeFilterBuilder) add(userKey []byte, shared int) {
	if rb.b != nil {
		rb.b.AddAfter(userKey, shared)
	}
}

// writeRangeFilter builds and writes the range filter block, if the writer
// has one and the table has keys, and records its size in the properties.
// The writer calls it after the last data block, before the point filter.
func (w *Writer) writeRangeFilter() error {
	rb := &w.rangeFilter
	if rb.err != nil {
		return fmt.Errorf("sstable: range filter: %w", rb.err)
	}
	if rb.b == nil {
		return nil
	}
	defer rb.release()
	if rb.b.Len() == 0 {
		return nil
	}
	f, err := rb.b.Finish()
	if err != nil {
		return fmt.Errorf("sstable: building range filter: %w", err)
	}
	enc, err := f.MarshalBinary()
	if err != nil {
		return fmt.Errorf("sstable: encoding range filter: %w", err)
	}
	if _, err := w.writeBlock(enc, false); err != nil {
		return err
	}
	w.props.RangeFilterSize = uint64(len(enc))
	return nil
}

// openRangeFilter locates, verifies and decodes the range filter block the
// properties announce (T10). Open calls it after the properties and before
// the index, whose data region ends where this block starts.
func (r *Reader) openRangeFilter() error {
	size := r.props.RangeFilterSize
	// The block ends where the point filter (or the index) starts; a
	// range-deletion block, if any, lies before it (T2's order).
	next := r.footer.metaStart()
	if size == 0 {
		r.rangeFilterStart = next
		return nil
	}
	if size > maxBlockLen || size+blockTrailerLen > next {
		return base.CorruptionErrorf("sstable: %s: range filter of %d bytes does not fit before offset %d", r.name, size, next)
	}
	h := blockHandle{offset: next - size - blockTrailerLen, length: size}
	b, err := r.readRaw(h, metaBlock, nil)
	if err != nil {
		return err
	}
	if r.rangeFilter, err = filters.UnmarshalRangeFilter(b); err != nil {
		return r.corrupt(h.offset, "range filter block", err)
	}
	r.rangeFilterStart = h.offset
	r.memBytes += int64(len(b))
	return nil
}

// dataEnd is where the data blocks stop: at the range-deletion block when
// there is one, else at the range filter block, else where the footer's
// first meta block starts.
func (r *Reader) dataEnd() uint64 {
	if r.props.NumRangeDeletions > 0 {
		return r.props.RangeDelOffset
	}
	return r.rangeFilterStart
}

// HasRangeFilter reports whether the table carries a range filter.
func (r *Reader) HasRangeFilter() bool { return r.rangeFilter != nil }

// RangeFilterSize is the range filter block's size (0 without one).
func (r *Reader) RangeFilterSize() uint64 { return r.props.RangeFilterSize }

// MayContainRange reports false only if the table holds no user key in
// [lo, hi) (nil bounds are open). Without a range filter it is true. Each
// answer of a filter counts in the reader's Stats.
func (r *Reader) MayContainRange(lo, hi []byte) bool {
	if r.rangeFilter == nil {
		return true
	}
	r.stats.RangeFilterChecks.Add(1)
	if r.rangeFilter.MayContainRange(lo, hi) {
		return true
	}
	r.stats.RangeFilterNegatives.Add(1)
	return false
}

// rangeEmpty starts a positioning call that may land on user keys in
// [lo, hi) (nil bounds open) and reports whether the call may stop at
// once because the range filter proves the range empty. Unbounded
// iterators never ask: a whole-table scan has nothing to skip. A filter
// that pays (rangeFilterUse) is asked here, before any work: a check costs
// less than a seek into a cached block, let alone a read. One that has
// lately not paid is asked up front one time in rangeSampleEvery, and
// otherwise only if its last answer was "empty", and then just before the
// call's first data-block read, on a cache miss (rangeEmptyBeforeRead):
// ranges turning empty are caught from the first sampled "empty" on, while
// ranges that hold keys pay one check in rangeSampleEvery. Asking before
// every read cost short scans 5-15% of their time in kvbench on one-level
// trees, where the check can never pay (docs/design.md, "Range filters").
func (it *Iter) rangeEmpty(lo, hi []byte) bool {
	it.rangePending = false
	if it.r.rangeFilter == nil || (it.lower == nil && it.upper == nil) {
		return false
	}
	it.rangeLo, it.rangeHi = lo, hi
	if !it.r.rangeUse.worthAsking() {
		it.rangePending = it.r.rangeUse.lastEmpty.Load()
		return false
	}
	return it.askRangeFilter()
}

// rangeEmptyBeforeRead is the deferred check of rangeEmpty: load calls it
// on a cache miss while the positioning call has not asked.
func (it *Iter) rangeEmptyBeforeRead() bool {
	it.rangePending = false
	return it.askRangeFilter()
}

func (it *Iter) askRangeFilter() bool {
	empty := !it.r.MayContainRange(it.rangeLo, it.rangeHi)
	it.r.rangeUse.record(empty)
	if empty {
		it.valid = false
	}
	return empty
}

// rangeFilterUse decides, per table, whether asking its range filter is
// likely to pay. A check costs a few hundred nanoseconds (more when its
// words are out of the CPU cache) and pays only when it answers "empty",
// saving a block seek or read; with every block cached and ranges that hold
// keys, the checks were 5% of a short scan and more with several tables per
// scan (docs/design.md, "Range filters"). So a table whose filter ruled
// out fewer than one in rangePayback of its recent checks is asked only one
// time in rangeSampleEvery up front, which keeps its counts current, and
// otherwise, while its last answer was "empty", just before a data-block
// read (Iter.rangeEmpty); any other is always asked up front. Skipping a
// check is always safe: the iterator reads as if the table had no range
// filter.
type rangeFilterUse struct {
	asked, empty, skipped atomic.Uint32
	lastEmpty             atomic.Bool // the latest answer was "empty"
}

const (
	rangeWarmup      = 32   // checks before the counts decide anything
	rangePayback     = 16   // ask while at least 1/rangePayback of answers are "empty"
	rangeSampleEvery = 16   // otherwise ask one time in this many
	rangeDecayAt     = 1024 // halve the counts here, so a change of workload shows
)

func (u *rangeFilterUse) worthAsking() bool {
	asked, empty := u.asked.Load(), u.empty.Load()
	if asked < rangeWarmup || empty*rangePayback >= asked {
		return true
	}
	// A load and a store, not an atomic add: concurrent scans may lose a
	// count, which only shifts the sampling, where a locked add would
	// have every reader of the table contend on one cache line.
	skipped := u.skipped.Load() + 1
	u.skipped.Store(skipped)
	return skipped%rangeSampleEvery == 0
}

// record notes one answer. Concurrent iterators may race on the halving;
// the counts are a heuristic and any value keeps answers exact.
func (u *rangeFilterUse) record(empty bool) {
	if u.lastEmpty.Load() != empty {
		u.lastEmpty.Store(empty) // stored on a change only: no shared write per check
	}
	if empty {
		u.empty.Add(1)
	}
	if asked := u.asked.Add(1); asked >= rangeDecayAt {
		u.asked.Store(asked / 2)
		u.empty.Store(u.empty.Load() / 2)
	}
}

// rangeBelow is the exclusive user-key bound of the entries SeekLT(key)
// may land on: key's user key when key is that user key's smallest
// internal key, else nil (the entries of key's own user key qualify, and
// the caller falls back to the iterator's upper bound).
func rangeBelow(key base.InternalKey, upper []byte) []byte {
	if key.Trailer == base.TrailerMax {
		return key.UserKey
	}
	return upper
}

// RangeFilter returns the table's range filter (nil without one), for
// tools that explain a scan; asking it directly counts in no Stats.
func (r *Reader) RangeFilter() *filters.RangeFilter { return r.rangeFilter }
