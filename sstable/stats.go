package sstable

import "sync/atomic"

// Stats counts what readers did. One Stats may be shared by every Reader
// of an engine (ReaderOptions.Stats), so the counts survive tables being
// closed; all fields are atomic and safe for concurrent use.
type Stats struct {
	// FilterChecks counts Gets that consulted a filter.
	FilterChecks atomic.Int64
	// FilterNegatives counts checks where the filter said "absent": each
	// is a Get answered without reading index or data (T6).
	FilterNegatives atomic.Int64
	// FilterFalsePositives counts checks that passed the filter but found
	// no visible version of the key in the table (a wasted block read).
	FilterFalsePositives atomic.Int64
	// FilterTruePositives counts checks that passed the filter and found a
	// visible version (a value or a tombstone).
	FilterTruePositives atomic.Int64
	// RangeFilterChecks counts positioning calls of bounded iterators that
	// consulted a table's range filter; RangeFilterNegatives those where it
	// proved the range empty, so the table was skipped without a read.
	RangeFilterChecks    atomic.Int64
	RangeFilterNegatives atomic.Int64
	// DataBlockReads, IndexBlockReads and MetaBlockReads count blocks read
	// from the file (cache misses); meta blocks are filter and properties.
	DataBlockReads  atomic.Int64
	IndexBlockReads atomic.Int64
	MetaBlockReads  atomic.Int64
	// BytesRead counts bytes read from the file, footers included.
	BytesRead atomic.Int64
	// CacheHits and CacheMisses count data-block lookups in the block
	// cache made by these readers (none without a cache).
	CacheHits   atomic.Int64
	CacheMisses atomic.Int64
}

// StatsSnapshot is a point-in-time copy of Stats.
type StatsSnapshot struct {
	FilterChecks, FilterNegatives, FilterFalsePositives, FilterTruePositives int64
	DataBlockReads, IndexBlockReads, MetaBlockReads, BytesRead               int64
	CacheHits, CacheMisses                                                   int64
	RangeFilterChecks, RangeFilterNegatives                                  int64
}

// Snapshot loads every counter. Counters are read one by one, so a
// snapshot taken during reads may be off by the reads in flight.
func (s *Stats) Snapshot() StatsSnapshot {
	return StatsSnapshot{
		FilterChecks:         s.FilterChecks.Load(),
		FilterNegatives:      s.FilterNegatives.Load(),
		FilterFalsePositives: s.FilterFalsePositives.Load(),
		FilterTruePositives:  s.FilterTruePositives.Load(),
		DataBlockReads:       s.DataBlockReads.Load(),
		IndexBlockReads:      s.IndexBlockReads.Load(),
		MetaBlockReads:       s.MetaBlockReads.Load(),
		BytesRead:            s.BytesRead.Load(),
		CacheHits:            s.CacheHits.Load(),
		CacheMisses:          s.CacheMisses.Load(),
		RangeFilterChecks:    s.RangeFilterChecks.Load(),
		RangeFilterNegatives: s.RangeFilterNegatives.Load(),
	}
}

// Sub returns s - o, field by field: the activity between two snapshots.
func (s StatsSnapshot) Sub(o StatsSnapshot) StatsSnapshot {
	return StatsSnapshot{
		FilterChecks:         s.FilterChecks - o.FilterChecks,
		FilterNegatives:      s.FilterNegatives - o.FilterNegatives,
		FilterFalsePositives: s.FilterFalsePositives - o.FilterFalsePositives,
		FilterTruePositives:  s.FilterTruePositives - o.FilterTruePositives,
		DataBlockReads:       s.DataBlockReads - o.DataBlockReads,
		IndexBlockReads:      s.IndexBlockReads - o.IndexBlockReads,
		MetaBlockReads:       s.MetaBlockReads - o.MetaBlockReads,
		BytesRead:            s.BytesRead - o.BytesRead,
		CacheHits:            s.CacheHits - o.CacheHits,
		CacheMisses:          s.CacheMisses - o.CacheMisses,
		RangeFilterChecks:    s.RangeFilterChecks - o.RangeFilterChecks,
		RangeFilterNegatives: s.RangeFilterNegatives - o.RangeFilterNegatives,
	}
}

// GetStats records what one Get did (Reader.GetHashed), for a caller
// that explains a single read while others run: unlike the shared Stats,
// only the goroutine running that Get writes it, so it holds exactly that
// call's work. Not safe for concurrent use.
type GetStats struct {
	// FilterChecked and FilterNegative: a filter was consulted, and it
	// said "definitely absent".
	FilterChecked, FilterNegative bool
	// DataBlockReads and IndexBlockReads count blocks read from the file.
	DataBlockReads, IndexBlockReads int64
	// CacheHits and CacheMisses count block-cache lookups.
	CacheHits, CacheMisses int64
}

// countFilter records a filter's answer in gs (nil: nothing to record).
func (gs *GetStats) countFilter(mayContain bool) {
	if gs == nil {
		return
	}
	gs.FilterChecked = true
	gs.FilterNegative = !mayContain
}

// countBlockRead counts a block read from the file in the shared Stats
// and, when not nil, in gs.
func (r *Reader) countBlockRead(kind blockKind, gs *GetStats) {
	switch kind {
	case dataBlock:
		r.stats.DataBlockReads.Add(1)
	case indexBlock:
		r.stats.IndexBlockReads.Add(1)
	default:
		r.stats.MetaBlockReads.Add(1)
	}
	if gs == nil {
		return
	}
	switch kind {
	case dataBlock:
		gs.DataBlockReads++
	case indexBlock:
		gs.IndexBlockReads++
	}
}

// countCacheLookup counts a block-cache hit or miss in the shared Stats
// and, when not nil, in gs.
func (r *Reader) countCacheLookup(hit bool, gs *GetStats) {
	if hit {
		r.stats.CacheHits.Add(1)
	} else {
		r.stats.CacheMisses.Add(1)
	}
	if gs == nil {
		return
	}
	if hit {
		gs.CacheHits++
	} else {
		gs.CacheMisses++
	}
}
