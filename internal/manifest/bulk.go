package manifest

import (
	"fmt"
	"slices"
)

// State is the table set and scalar fields a sequence of edits describes.
// Scalars are zero if no edit set them.
type State struct {
	LogNumber      uint64
	NextFileNumber uint64
	LastSequence   uint64
	// CompactionPointers holds the latest pointer per level, nil if none.
	CompactionPointers [NumLevels][]byte
	// Levels holds each level's tables: L0 by increasing file number (so
	// newest last), deeper levels by increasing smallest key (M5).
	Levels [NumLevels][]TableMeta
}

// Edit returns one edit that recreates s from nothing: what the engine
// writes first into a fresh MANIFEST.
func (s *State) Edit() *VersionEdit {
	e := &VersionEdit{
		LogNumber: s.LogNumber, HasLogNumber: true,
		NextFileNumber: s.NextFileNumber, HasNextFileNumber: true,
		LastSequence: s.LastSequence, HasLastSequence: true,
	}
	for level, key := range s.CompactionPointers {
		if key != nil {
			e.CompactionPointers = append(e.CompactionPointers, CompactionPointer{Level: level, Key: key})
		}
	}
	for level, tables := range s.Levels {
		for _, m := range tables {
			e.NewTables = append(e.NewTables, NewTable{Level: level, Meta: m})
		}
	}
	return e
}

// BulkVersionEdit folds edits, in MANIFEST order, into the table set they
// describe. The zero value is an empty fold ready for use. Not safe for
// concurrent use.
type BulkVersionEdit struct {
	tables   map[uint64]placed // every live table by file number
	state    State             // scalars and compaction pointers so far
	hasLog   bool
	hasNext  bool
	hasSeq   bool
	accepted int // edits folded so far, for error messages
}

type placed struct {
	level int
	meta  TableMeta
}

// Accumulate folds e into b. It returns an error wrapping ErrCorruption if e
// is invalid or inconsistent with the edits before it (M4); b is then
// unchanged, so the caller may report the error and stop.
func (b *BulkVersionEdit) Accumulate(e *VersionEdit) error {
	if err := b.check(e); err != nil {
		return fmt.Errorf("manifest: edit %d: %w", b.accepted, err)
	}
	if b.tables == nil {
		b.tables = make(map[uint64]placed)
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
	for _, cp := range e.CompactionPointers {
		b.state.CompactionPointers[cp.Level] = slices.Clone(cp.Key)
	}
	for _, d := range e.DeletedTables {
		delete(b.tables, d.FileNum)
	}
	for _, n := range e.NewTables {
		m := n.Meta
		m.Smallest, m.Largest = slices.Clone(m.Smallest), slices.Clone(m.Largest) // e stays the caller's
		b.tables[m.FileNum] = placed{level: n.Level, meta: m}
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
			return corruptf("deletes table %d from level %d, but no such table exists", d.FileNum, d.Level)
		}
		if p.level != d.Level {
			return corruptf("deletes table %d from level %d, but it is in level %d", d.FileNum, d.Level, p.level)
		}
		deleted[d.FileNum] = true
	}
	for _, n := range e.NewTables {
		if p, ok := b.tables[n.Meta.FileNum]; ok && !deleted[n.Meta.FileNum] {
			return corruptf("adds table %d to level %d, but it is already in level %d", n.Meta.FileNum, n.Level, p.level)
		}
	}
	return nil
}

// Apply returns the State the folded edits describe, with levels ordered and
// checked by cmp, which orders the tables' internal keys (M5). It returns an
// error wrapping ErrCorruption if a table's smallest key is above its
// largest, two tables of a level >= 1 overlap, a file number is not below
// NextFileNumber, or a table holds sequence numbers above LastSequence. b is
// not changed and may keep accumulating.
func (b *BulkVersionEdit) Apply(cmp func(a, b []byte) int) (*State, error) {
	s := b.state
	for level := range s.CompactionPointers {
		s.CompactionPointers[level] = slices.Clone(s.CompactionPointers[level])
	}
	for _, p := range b.tables {
		s.Levels[p.level] = append(s.Levels[p.level], p.meta)
	}
	if b.hasNext && b.hasLog && s.LogNumber >= s.NextFileNumber {
		return nil, corruptf("manifest: log number %d is not below next file number %d", s.LogNumber, s.NextFileNumber)
	}
	for level, tables := range s.Levels {
		for _, m := range tables {
			if cmp(m.Smallest, m.Largest) > 0 {
				return nil, corruptf("manifest: table %d in level %d: smallest key %q above largest %q", m.FileNum, level, m.Smallest, m.Largest)
			}
			if b.hasNext && m.FileNum >= s.NextFileNumber {
				return nil, corruptf("manifest: table %d in level %d: file number not below next file number %d", m.FileNum, level, s.NextFileNumber)
			}
			if b.hasSeq && m.LargestSeq > s.LastSequence {
				return nil, corruptf("manifest: table %d in level %d: sequence %d above last sequence %d", m.FileNum, level, m.LargestSeq, s.LastSequence)
			}
		}
		if level == 0 {
			slices.SortFunc(tables, func(x, y TableMeta) int { return cmpUint(x.FileNum, y.FileNum) })
			continue
		}
		slices.SortFunc(tables, func(x, y TableMeta) int {
			if c := cmp(x.Smallest, y.Smallest); c != 0 {
				return c
			}
			return cmpUint(x.FileNum, y.FileNum) // deterministic even when overlap is about to be reported
		})
		for i := 1; i < len(tables); i++ {
			if cmp(tables[i-1].Largest, tables[i].Smallest) >= 0 {
				return nil, corruptf("manifest: level %d: tables %d [%q, %q] and %d [%q, %q] overlap", level,
					tables[i-1].FileNum, tables[i-1].Smallest, tables[i-1].Largest,
					tables[i].FileNum, tables[i].Smallest, tables[i].Largest)
			}
		}
	}
	return &s, nil
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
