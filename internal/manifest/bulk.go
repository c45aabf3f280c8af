package manifest

import (
	"fmt"

	"github.com/sievekv/sievekv/internal/base"
)

// BulkVersionEdit folds edits, in MANIFEST order, onto a base Version: the
// one fold both MANIFEST replay (base empty, every record) and the engine's
// installation of a new version (base current, one edit) use. The zero
// value folds onto an empty version. Not safe for concurrent use.
//
// The fold shares the TableMetadata of its base and of the edits it is
// given: once a version built by Apply is published, those tables are the
// version's and must not change (V1).
type BulkVersionEdit struct {
	base     *Version
	tables   map[uint64]placed // every live table by file number, once started
	state    State             // scalars so far
	hasLog   bool
	hasNext  bool
	hasSeq   bool
	accepted int // edits folded so far, for error messages
}

type placed struct {
	level int
	meta  *TableMetadata
}

// NewBulkVersionEdit returns a fold starting from the tables of base (nil
// is empty). base is only read.
func NewBulkVersionEdit(base *Version) *BulkVersionEdit {
	return &BulkVersionEdit{base: base}
}

func (b *BulkVersionEdit) start() {
	if b.tables != nil {
		return
	}
	b.tables = make(map[uint64]placed)
	if b.base == nil {
		return
	}
	for l, ts := range b.base.Levels {
		for _, t := range ts {
			b.tables[t.FileNum] = placed{level: l, meta: t}
		}
	}
}

// Accumulate folds e into b. It returns an error wrapping ErrCorruption if e
// is invalid or inconsistent with the tables before it (M4); b is then
// unchanged, so the caller may report the error and stop.
func (b *BulkVersionEdit) Accumulate(e *VersionEdit) error {
	b.start()
	if err := b.check(e); err != nil {
		return fmt.Errorf("manifest: edit %d: %w", b.accepted, err)
	}
	if e.HasLogNumber {
		b.state.LogNumber, b.hasLog = e.LogNumber, true
	}
	if e.HasNextFileNumber {
		b.state.NextFileNumber, b.hasNext = e.NextFileNumber, true
	}
	if e.HasLastSequence {
		b.state.LastSequence, b.hasSeq = e.LastSequence, true
	}
	for _, d := range e.DeletedTables {
		delete(b.tables, d.FileNum)
	}
	for _, n := range e.NewTables {
		b.tables[n.Meta.FileNum] = placed{level: n.Level, meta: n.Meta}
	}
	b.accepted++
	return nil
}

// check validates e against b without changing anything (keeps M4's "b is
// unchanged on error").
func (b *BulkVersionEdit) check(e *VersionEdit) error {
	if err := e.Validate(); err != nil {
		return err
	}
	if e.HasLogNumber && b.hasLog && e.LogNumber < b.state.LogNumber {
		return corruptf("log number goes back from %d to %d", b.state.LogNumber, e.LogNumber)
	}
	if e.HasNextFileNumber && b.hasNext && e.NextFileNumber < b.state.NextFileNumber {
		return corruptf("next file number goes back from %d to %d", b.state.NextFileNumber, e.NextFileNumber)
	}
	if e.HasLastSequence && b.hasSeq && e.LastSequence < b.state.LastSequence {
		return corruptf("last sequence goes back from %d to %d", b.state.LastSequence, e.LastSequence)
	}
	deleted := make(map[uint64]bool, len(e.DeletedTables))
	for _, d := range e.DeletedTables {
		p, ok := b.tables[d.FileNum]
		if !ok {
			return corruptf("deletes table %06d from L%d, but no such table exists", d.FileNum, d.Level)
		}
		if p.level != d.Level {
			return corruptf("deletes table %06d from L%d, but it is in L%d", d.FileNum, d.Level, p.level)
		}
		deleted[d.FileNum] = true
	}
	for _, n := range e.NewTables {
		if p, ok := b.tables[n.Meta.FileNum]; ok && !deleted[n.Meta.FileNum] {
			return corruptf("adds table %06d to L%d, but it is already in L%d", n.Meta.FileNum, n.Level, p.level)
		}
	}
	return nil
}

// Apply returns the State the base and the folded edits describe: a new,
// unpublished Version with its levels ordered (V2) and checked (M5). It
// returns an error wrapping ErrCorruption if a table's smallest key is above
// its largest, two tables of a level >= 1 overlap, a file number is not
// below NextFileNumber, or a table holds sequence numbers above
// LastSequence (the last two only when the folded edits set those scalars),
// or if LastSequence is above base.SeqNumMax.
// b is not changed and may keep accumulating.
func (b *BulkVersionEdit) Apply() (*State, error) {
	b.start()
	s := b.state
	s.Version = &Version{}
	for _, p := range b.tables {
		s.Levels[p.level] = append(s.Levels[p.level], p.meta)
	}
	if s.LastSequence > uint64(base.SeqNumMax) {
		// A key's trailer holds 56 bits of sequence number: the engine
		// would number its next writes past what a key can carry.
		return nil, corruptf("manifest: last sequence %d above the largest sequence number %d", s.LastSequence, base.SeqNumMax)
	}
	if b.hasNext && b.hasLog && s.LogNumber >= s.NextFileNumber {
		return nil, corruptf("manifest: log number %d is not below next file number %d", s.LogNumber, s.NextFileNumber)
	}
	for level, tables := range s.Levels {
		for _, m := range tables {
			if base.Compare(m.Smallest, m.Largest) > 0 {
				return nil, corruptf("manifest: table %06d in L%d: smallest key %s above largest %s", m.FileNum, level, m.Smallest, m.Largest)
			}
			if b.hasNext && m.FileNum >= s.NextFileNumber {
				return nil, corruptf("manifest: table %06d in L%d: file number not below next file number %d", m.FileNum, level, s.NextFileNumber)
			}
			if b.hasSeq && uint64(m.LargestSeq) > s.LastSequence {
				return nil, corruptf("manifest: table %06d in L%d: sequence %d above last sequence %d", m.FileNum, level, m.LargestSeq, s.LastSequence)
			}
		}
	}
	s.sortLevels()
	if err := s.CheckOrdering(); err != nil {
		return nil, err
	}
	return &s, nil
}
