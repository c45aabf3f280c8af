package manifest

import (
	"github.com/sievekv/sievekv/filters"
	"sync/atomic"

	"github.com/sievekv/sievekv/internal/base"
	"github.com/sievekv/sievekv/sstable"
)

// NumLevels is the number of LSM levels, L0 to L6 (LevelDB's and Pebble's
// default depth; with a 10x fanout it covers terabytes). The engine, the
// compaction picker and the MANIFEST encoding all size their levels by it.
const NumLevels = 7

// TableMetadata is the one description of a sorted table that the engine,
// the compaction picker and the MANIFEST share. The fields above Props are
// what a MANIFEST records for the table (docs/format.md, "VersionEdit");
// Props is the table's own property block, which the MANIFEST does not
// repeat.
//
// A TableMetadata is immutable once a Version that includes it is published
// (V1), except for its reference count and obsolete mark, which are atomic.
type TableMetadata struct {
	FileNum uint64 // never 0
	Size    uint64 // bytes on disk
	// Smallest and Largest are the table's first and last internal keys.
	Smallest, Largest base.InternalKey
	// SmallestSeq and LargestSeq bound the sequence numbers inside.
	SmallestSeq, LargestSeq base.SeqNum
	// FilterType is the filter the table was built with. The MANIFEST
	// records it as its table code (filters.Type.TableCode); a code this
	// build does not know is corruption.
	FilterType filters.Type

	// Props is the table's property block (entry and tombstone counts,
	// filter size, ...). Tables written by this process carry it from
	// their writer; tables named by a replayed MANIFEST get it when the
	// engine opens them, before the version naming them is published. It
	// is nil only in a Version that was never opened (tests, tools that
	// read a MANIFEST alone).
	Props *sstable.Properties

	// refs counts the published versions that include the table. When it
	// drops to zero and an edit has removed the table (obsolete), the
	// table's file may be deleted (the engine's K5).
	refs     atomic.Int32
	obsolete atomic.Bool

	// Delete-aware compaction's view of the table (deletes.go).
	shadowed      atomic.Uint64
	shadowedKnown atomic.Bool
	tombstoneTime atomic.Int64
}

// NewTableMetadata describes a table a writer just finished as file num.
// The metadata keeps its own copy of the properties and of the keys.
func NewTableMetadata(num uint64, md sstable.Metadata) *TableMetadata {
	p := md.Properties
	return &TableMetadata{
		FileNum:     num,
		Size:        md.Size,
		Smallest:    p.SmallestKey.Clone(),
		Largest:     p.LargestKey.Clone(),
		SmallestSeq: p.SmallestSeqNum,
		LargestSeq:  p.LargestSeqNum,
		FilterType:  p.FilterType,
		Props:       &p,
	}
}

// Entries is the table's entry count, tombstones included (0 while Props
// is not loaded).
func (t *TableMetadata) Entries() uint64 {
	if t.Props == nil {
		return 0
	}
	return t.Props.NumEntries
}

// FilterBytes is the size of the table's encoded filter (0 without one, or
// while Props is not loaded).
func (t *TableMetadata) FilterBytes() uint64 {
	if t.Props == nil {
		return 0
	}
	return t.Props.FilterSize
}

// Overlaps reports whether the table's user-key range meets [lo, hi] (both
// inclusive; nil is unbounded).
func (t *TableMetadata) Overlaps(lo, hi []byte) bool {
	if lo != nil && base.CompareUserKeys(t.Largest.UserKey, lo) < 0 {
		return false
	}
	if hi != nil && base.CompareUserKeys(t.Smallest.UserKey, hi) > 0 {
		return false
	}
	return true
}

// ContainsUserKey reports whether k lies within the table's user-key range.
func (t *TableMetadata) ContainsUserKey(k []byte) bool {
	return base.CompareUserKeys(t.Smallest.UserKey, k) <= 0 &&
		base.CompareUserKeys(k, t.Largest.UserKey) <= 0
}

// MarkObsolete records that an edit removed the table from the tree, so its
// file goes once no version includes it.
func (t *TableMetadata) MarkObsolete() { t.obsolete.Store(true) }

// Obsolete reports whether MarkObsolete was called.
func (t *TableMetadata) Obsolete() bool { return t.obsolete.Load() }

// DataSize is the table's bytes on disk less its filter blocks (point and
// range): what the leveled policy sizes levels, overlaps and outputs by.
// The filter memory a table carries is set by the engine's filter budget
// and its allocation, not by the data; counted, it would let the filter
// configuration steer compaction (a level whose tables get more bits per
// key would look fuller), and two DBs loaded with the same writes under
// two filter configurations would grow different trees, which is what
// the filter benchmarks must not compare. Without properties (a Version
// never opened) it is Size.
func (t *TableMetadata) DataSize() uint64 {
	if t.Props == nil {
		return t.Size
	}
	f := t.Props.FilterSize + t.Props.RangeFilterSize
	if f >= t.Size {
		return t.Size
	}
	return t.Size - f
}
