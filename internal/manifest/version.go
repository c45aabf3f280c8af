package manifest

import (
	"slices"
	"sync/atomic"

	"github.com/sievekv/sievekv/internal/base"
)

// Version is an immutable set of live tables, one slice per level (V1). L0
// is ordered newest first (by largest sequence number, then file number);
// every deeper level is ordered by smallest key with no two tables sharing a
// user key (V2). The engine reads, the compaction picker chooses and the
// MANIFEST writer snapshots the same published Version; none copies it.
//
// A published Version is reference counted: the engine holds the current
// one, and every read (Get, iterator, compaction) holds the version it
// started with, so the files it reads are not deleted under it.
type Version struct {
	Levels [NumLevels][]*TableMetadata

	refs atomic.Int32
	// release is called for each table whose last reference this version
	// held, once the version's own last reference is dropped.
	release func(*TableMetadata)
}

// Publish makes v live: v holds one reference (the caller's) and, through
// it, one reference to each of its tables. Once the last reference to v is
// dropped, v drops its tables' references, and release is called with each
// table that no published version includes any more. v must not be changed
// after Publish (V1).
func (v *Version) Publish(release func(*TableMetadata)) {
	v.release = release
	v.refs.Store(1)
	for _, l := range v.Levels {
		for _, t := range l {
			t.refs.Add(1)
		}
	}
}

// Ref takes a reference to a published version.
func (v *Version) Ref() { v.refs.Add(1) }

// Unref drops a reference; the last one releases the version's tables.
func (v *Version) Unref() {
	n := v.refs.Add(-1)
	if n < 0 {
		panic("manifest: version reference count went negative")
	}
	if n > 0 || v.release == nil {
		return
	}
	for _, l := range v.Levels {
		for _, t := range l {
			if t.refs.Add(-1) == 0 {
				v.release(t)
			}
		}
	}
}

// sortLevels establishes the level orders V2 documents.
func (v *Version) sortLevels() {
	slices.SortFunc(v.Levels[0], func(a, b *TableMetadata) int {
		if a.LargestSeq != b.LargestSeq {
			if a.LargestSeq > b.LargestSeq {
				return -1
			}
			return 1
		}
		return -cmpUint(a.FileNum, b.FileNum)
	})
	for l := 1; l < NumLevels; l++ {
		slices.SortFunc(v.Levels[l], func(a, b *TableMetadata) int {
			if c := base.Compare(a.Smallest, b.Smallest); c != 0 {
				return c
			}
			return cmpUint(a.FileNum, b.FileNum) // deterministic even when overlap is about to be reported
		})
	}
}

// CheckOrdering verifies V2's no-overlap rule for every level below L0,
// returning an error wrapping ErrCorruption for the first violation.
func (v *Version) CheckOrdering() error {
	for l := 1; l < NumLevels; l++ {
		ts := v.Levels[l]
		for i := 1; i < len(ts); i++ {
			if base.CompareUserKeys(ts[i-1].Largest.UserKey, ts[i].Smallest.UserKey) >= 0 {
				return corruptf("manifest: level %d: tables %06d [%s, %s] and %06d [%s, %s] overlap", l,
					ts[i-1].FileNum, ts[i-1].Smallest, ts[i-1].Largest,
					ts[i].FileNum, ts[i].Smallest, ts[i].Largest)
			}
		}
	}
	return nil
}

// TableFor returns the table of level l >= 1 whose range holds userKey, or
// nil. It relies on V2: the level is sorted and its tables disjoint.
func (v *Version) TableFor(l int, userKey []byte) *TableMetadata {
	level := v.Levels[l]
	i, _ := slices.BinarySearchFunc(level, userKey, func(t *TableMetadata, k []byte) int {
		return base.CompareUserKeys(t.Largest.UserKey, k)
	})
	if i < len(level) && level[i].ContainsUserKey(userKey) {
		return level[i]
	}
	return nil
}

// LevelSize is the bytes on disk of level l's tables.
func (v *Version) LevelSize(l int) uint64 { return TotalSize(v.Levels[l]) }

// TotalDataSize sums DataSize over ts.
func TotalDataSize(ts []*TableMetadata) uint64 {
	var n uint64
	for _, t := range ts {
		n += t.DataSize()
	}
	return n
}

// TotalSize is the bytes on disk of ts.
func TotalSize(ts []*TableMetadata) uint64 {
	var n uint64
	for _, t := range ts {
		n += t.Size
	}
	return n
}

// State is a Version with the scalar fields of the MANIFEST that describes
// it. Scalars are zero if no edit set them.
type State struct {
	LogNumber      uint64
	NextFileNumber uint64
	LastSequence   uint64
	*Version
}

// Edit returns one edit that recreates s from nothing: what the engine
// writes first into a fresh MANIFEST. The edit shares s's tables.
func (s *State) Edit() *VersionEdit {
	e := &VersionEdit{
		LogNumber: s.LogNumber, HasLogNumber: true,
		NextFileNumber: s.NextFileNumber, HasNextFileNumber: true,
		LastSequence: s.LastSequence, HasLastSequence: true,
	}
	for level, tables := range s.Levels {
		for _, m := range tables {
			e.NewTables = append(e.NewTables, NewTable{Level: level, Meta: m})
		}
	}
	return e
}

func cmpUint(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
