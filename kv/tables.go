package kv

import (
	"slices"

	"github.com/sievekv/sievekv/internal/manifest"
)

// TableInfo describes one live table, for tools (kvshell's "tables"). It is
// a view of the engine's manifest.TableMetadata, built when Tables is
// called; the engine keeps no TableInfo of its own.
type TableInfo struct {
	Level       int
	FileNum     uint64
	Smallest    []byte // smallest user key
	Largest     []byte // largest user key
	Size        uint64 // bytes on disk
	Entries     uint64 // entries, tombstones included
	Filter      string // the filter type the table was built with
	FilterBytes uint64
}

func tableInfo(level int, t *manifest.TableMetadata) TableInfo {
	return TableInfo{
		Level:       level,
		FileNum:     t.FileNum,
		Smallest:    slices.Clone(t.Smallest.UserKey),
		Largest:     slices.Clone(t.Largest.UserKey),
		Size:        t.Size,
		Entries:     t.Entries(),
		Filter:      t.FilterType.String(),
		FilterBytes: t.FilterBytes(),
	}
}

// Tables lists the live tables, L0 first (newest first), then each deeper
// level in key order.
func (d *DB) Tables() ([]TableInfo, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return nil, ErrClosed
	}
	var out []TableInfo
	for l, ts := range d.current.Levels {
		for _, t := range ts {
			out = append(out, tableInfo(l, t))
		}
	}
	return out, nil
}
