package kv

import (
	"github.com/sievekv/sievekv/sstable"
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
	// FilterKeys is the number of distinct keys in the filter.
	FilterKeys uint64
	// FilterKind is the filter with its width ("ribbon 9-bit",
	// "binary-fuse 4-wise 9-bit", "bloom k=7"), read from the filter
	// itself; FilterFP its expected false-positive rate (0 when the table
	// could not be opened or has no filter).
	FilterKind string
	FilterFP   float64
}

// FilterBitsPerKey is the table's filter memory per distinct key.
func (t TableInfo) FilterBitsPerKey() float64 { return bitsPerKey(t.FilterBytes, t.FilterKeys) }

// bitsPerKey is 8 x bytes / keys, 0 without keys.
func bitsPerKey(bytes, keys uint64) float64 {
	if keys == 0 {
		return 0
	}
	return float64(8*bytes) / float64(keys)
}

// refCurrent returns the current version with a reference the caller
// drops, for reading tables outside DB.mu; false once the DB is closed.
func (d *DB) refCurrent() (*manifest.Version, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.current == nil || d.closed {
		return nil, false
	}
	d.current.Ref()
	return d.current, true
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
		FilterKeys:  tableKeys(t),
		FilterKind:  t.FilterType.String(),
	}
}

// describeFilter fills in what only the table's filter knows.
func (d *DB) describeFilter(info *TableInfo, t *manifest.TableMetadata) {
	// On an error the listing still names the recorded type.
	d.tables.withReader(t, func(r *sstable.Reader) error {
		desc := r.FilterDescription()
		info.FilterKind, info.FilterFP = desc.Kind, desc.FPRate
		return nil
	})
}

// Tables lists the live tables, L0 first (newest first), then each deeper
// level in key order.
func (d *DB) Tables() ([]TableInfo, error) {
	v, ok := d.refCurrent()
	if !ok {
		return nil, ErrClosed
	}
	defer v.Unref()
	var out []TableInfo
	for l, ts := range v.Levels {
		for _, t := range ts {
			info := tableInfo(l, t)
			d.describeFilter(&info, t)
			out = append(out, info)
		}
	}
	return out, nil
}
