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
	}
}
