package kv

import "slices"

// TableInfo describes one live table, for tools (kvshell's "tables").
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

// Tables lists the live tables, L0 first (newest first), then each deeper
// level in key order.
func (d *DB) Tables() ([]TableInfo, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return nil, ErrClosed
	}
	var out []TableInfo
	for l, ts := range d.current.levels {
		for _, t := range ts {
			out = append(out, TableInfo{
				Level:       l,
				FileNum:     uint64(t.fileNum),
				Smallest:    slices.Clone(t.smallest.UserKey),
				Largest:     slices.Clone(t.largest.UserKey),
				Size:        t.size,
				Entries:     t.entries,
				Filter:      t.filterType.String(),
				FilterBytes: t.filterBytes,
			})
		}
	}
	return out, nil
}
