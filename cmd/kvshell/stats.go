package main

import (
	"context"

	"github.com/sievekv/sievekv/kv"
)

// statsRecord is the JSON form of kv.Metrics: the shell's own field names,
// so a script's keys do not change when kv renames a Go field.
type statsRecord struct {
	Cmd      string        `json:"cmd"`
	Levels   []levelRecord `json:"levels"`
	MemTable struct {
		Count     int    `json:"count"`
		Immutable int    `json:"immutable"`
		Bytes     uint64 `json:"bytes"`
	} `json:"memtable"`
	WAL struct {
		Files int    `json:"files"`
		Bytes uint64 `json:"bytes_written"`
		Syncs uint64 `json:"syncs"`
	} `json:"wal"`
	Flushes     uint64 `json:"flushes"`
	Compactions uint64 `json:"compactions"`
	Gets        uint64 `json:"gets"`
	DiskReads   struct {
		DataBlocks  uint64 `json:"data_blocks"`
		IndexBlocks uint64 `json:"index_blocks"`
		Bytes       uint64 `json:"bytes"`
	} `json:"disk_reads"`
	BlockCache struct {
		Hits     uint64 `json:"hits"`
		Misses   uint64 `json:"misses"`
		Bytes    int64  `json:"bytes"`
		Capacity int64  `json:"capacity"`
		Lent     int64  `json:"lent"`
	} `json:"block_cache"`
	Filter struct {
		Bytes          uint64  `json:"bytes"`
		BitsPerEntry   float64 `json:"bits_per_entry"`
		Checks         uint64  `json:"checks"`
		ReadsAvoided   uint64  `json:"reads_avoided"`
		FalsePositives uint64  `json:"false_positives"`
		TruePositives  uint64  `json:"true_positives"`
		RangeBytes     uint64  `json:"range_bytes"`
		RangeChecks    uint64  `json:"range_checks"`
		RangeNegatives uint64  `json:"range_negatives"`
	} `json:"filter"`
}

func (in *Interp) cmdStats(context.Context, []token) error {
	m := in.db.Metrics()
	if !in.json {
		in.printf("%s", m.String())
		return nil
	}
	return in.emitJSON(statsJSON(m))
}

// levelRecord is one level of statsRecord.
type levelRecord struct {
	Level         int     `json:"level"`
	Tables        int     `json:"tables"`
	Bytes         uint64  `json:"bytes"`
	Entries       uint64  `json:"entries"`
	FilterBytes   uint64  `json:"filter_bytes"`
	FilterBitsKey float64 `json:"filter_bits_per_key"`
	FilterFP      float64 `json:"filter_fp"`
}

func statsJSON(m kv.Metrics) statsRecord {
	r := statsRecord{Cmd: "stats"}
	var entries uint64
	for i, l := range m.Levels {
		r.Levels = append(r.Levels, levelRecord{i, l.Tables, l.Bytes, l.Entries, l.FilterBytes, l.FilterBitsPerKey(), l.FilterFP})
		entries += l.Entries
	}
	r.MemTable.Count, r.MemTable.Immutable, r.MemTable.Bytes = m.MemTable.Count, m.MemTable.Immutable, m.MemTable.Size
	r.WAL.Files, r.WAL.Bytes, r.WAL.Syncs = m.WAL.Files, m.WAL.Bytes, m.WAL.Syncs
	r.Flushes, r.Compactions, r.Gets = m.Flushes, m.Compactions, m.Gets
	r.DiskReads.DataBlocks, r.DiskReads.IndexBlocks, r.DiskReads.Bytes = m.DiskReads.DataBlocks, m.DiskReads.IndexBlocks, m.DiskReads.Bytes
	r.BlockCache.Hits, r.BlockCache.Misses = m.BlockCache.Hits, m.BlockCache.Misses
	r.BlockCache.Bytes, r.BlockCache.Capacity, r.BlockCache.Lent = m.BlockCache.Size, m.BlockCache.Capacity, m.BlockCache.Lent
	r.Filter.Bytes = m.Filter.Bytes
	r.Filter.BitsPerEntry = bitsPerKey(m.Filter.Bytes, entries)
	r.Filter.Checks, r.Filter.ReadsAvoided = m.Filter.Checks, m.Filter.Negatives
	r.Filter.FalsePositives, r.Filter.TruePositives = m.Filter.FalsePositives, m.Filter.TruePositives
	r.Filter.RangeBytes, r.Filter.RangeChecks, r.Filter.RangeNegatives = m.Filter.RangeBytes, m.Filter.RangeChecks, m.Filter.RangeNegatives
	return r
}
