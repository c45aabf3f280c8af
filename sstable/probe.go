package sstable

import "github.com/sievekv/sievekv/filters"

// MayContain reports whether the table may hold a version of userKey, by
// its filter alone (true for a table without one). It reads nothing and
// counts nothing in Stats: the engine asks it when deciding whether a
// tombstone can be dropped, not to serve a Get.
func (r *Reader) MayContain(userKey []byte) bool {
	if r.filter == nil {
		return true
	}
	return r.filter.MayContainHash(filters.Hash(userKey))
}
