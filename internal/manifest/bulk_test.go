package manifest

import (
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/sievekv/sievekv/internal/base"
)

func key(n uint64) []byte { return binary.BigEndian.AppendUint64(nil, n) }

// meta describes table fileNum holding user keys lo..hi at sequence numbers
// fileNum..fileNum+1.
func meta(fileNum, lo, hi uint64) *TableMetadata {
	return &TableMetadata{FileNum: fileNum, Size: 1000 + fileNum,
		Smallest:    base.MakeInternalKey(key(lo), base.SeqNum(fileNum+1), base.KindSet),
		Largest:     base.MakeInternalKey(key(hi), base.SeqNum(fileNum), base.KindSet),
		SmallestSeq: base.SeqNum(fileNum), LargestSeq: base.SeqNum(fileNum + 1), FilterType: tableType(1)}
}

// replay encodes and decodes each edit (as the MANIFEST does) and folds it.
func replay(t *testing.T, b *BulkVersionEdit, edits ...*VersionEdit) error {
	t.Helper()
	for _, e := range edits {
		var d VersionEdit
		if err := d.Decode(e.Encode()); err != nil {
			t.Fatalf("edit does not round-trip: %v", err)
		}
		if err := b.Accumulate(&d); err != nil {
			return err
		}
	}
	return nil
}

func mustApply(t *testing.T, b *BulkVersionEdit) *State {
	t.Helper()
	s, err := b.Apply()
	if err != nil {
		t.Fatalf("Apply: %v", err)
	}
	return s
}

func fileNums(tables []*TableMetadata) []uint64 {
	var out []uint64
	for _, m := range tables {
		out = append(out, m.FileNum)
	}
	return out
}

func TestApplyFlushCompactMove(t *testing.T) {
	var b BulkVersionEdit
	err := replay(t, &b,
		&VersionEdit{LogNumber: 1, HasLogNumber: true, NextFileNumber: 2, HasNextFileNumber: true, HasLastSequence: true},
		// Two flushes into L0, newer first in the edit list to show sorting.
		&VersionEdit{LogNumber: 5, HasLogNumber: true, NextFileNumber: 6, HasNextFileNumber: true, LastSequence: 100, HasLastSequence: true,
			NewTables: []NewTable{{0, meta(4, 10, 50)}, {0, meta(3, 0, 90)}}},
		// Compaction of both L0 tables into two L1 tables.
		&VersionEdit{NextFileNumber: 9, HasNextFileNumber: true,
			DeletedTables: []DeletedTable{{0, 3}, {0, 4}},
			NewTables:     []NewTable{{1, meta(8, 60, 90)}, {1, meta(7, 0, 50)}}},
		// Move table 8 down a level.
		&VersionEdit{DeletedTables: []DeletedTable{{1, 8}}, NewTables: []NewTable{{2, meta(8, 60, 90)}}},
		&VersionEdit{LogNumber: 5, HasLogNumber: true, NextFileNumber: 10, HasNextFileNumber: true, LastSequence: 120, HasLastSequence: true,
			NewTables: []NewTable{{0, meta(9, 5, 6)}, {1, meta(6, 70, 80)}}},
	)
	if err != nil {
		t.Fatal(err)
	}
	s := mustApply(t, &b)
	if s.LogNumber != 5 || s.NextFileNumber != 10 || s.LastSequence != 120 {
		t.Fatalf("scalars %d %d %d", s.LogNumber, s.NextFileNumber, s.LastSequence)
	}
	want := [NumLevels][]uint64{0: {9}, 1: {7, 6}, 2: {8}}
	for level := range s.Levels {
		if got := fileNums(s.Levels[level]); !slices.Equal(got, want[level]) {
			t.Fatalf("level %d holds %v, want %v", level, got, want[level])
		}
	}
	// The snapshot edit rebuilds exactly this state.
	var again BulkVersionEdit
	if err := replay(t, &again, s.Edit()); err != nil {
		t.Fatal(err)
	}
	if s2 := mustApply(t, &again); !reflect.DeepEqual(s, s2) {
		t.Fatalf("snapshot edit rebuilt a different state:\n%+v\n%+v", s, s2)
	}
}

func TestAccumulateRejectsInconsistentEdits(t *testing.T) {
	base := func() *BulkVersionEdit {
		var b BulkVersionEdit
		if err := replay(t, &b, &VersionEdit{LogNumber: 3, HasLogNumber: true, NextFileNumber: 20, HasNextFileNumber: true,
			LastSequence: 50, HasLastSequence: true,
			NewTables: []NewTable{{0, meta(5, 0, 9)}, {1, meta(6, 0, 9)}}}); err != nil {
			t.Fatal(err)
		}
		return &b
	}
	cases := map[string]*VersionEdit{
		"delete missing table":   {DeletedTables: []DeletedTable{{0, 7}}},
		"delete at wrong level":  {DeletedTables: []DeletedTable{{2, 6}}},
		"add duplicate number":   {NewTables: []NewTable{{3, meta(5, 20, 30)}}},
		"log number backwards":   {LogNumber: 2, HasLogNumber: true},
		"next file backwards":    {NextFileNumber: 19, HasNextFileNumber: true},
		"last sequence backward": {LastSequence: 49, HasLastSequence: true},
		"invalid level":          {NewTables: []NewTable{{NumLevels, meta(8, 0, 1)}}},
		// The valid part (deleting 5) must not be applied either.
		"partly valid": {DeletedTables: []DeletedTable{{0, 5}, {1, 99}}},
	}
	for name, e := range cases {
		b := base()
		before := mustApply(t, b)
		err := b.Accumulate(e)
		if !errors.Is(err, ErrCorruption) {
			t.Errorf("%s: Accumulate = %v, want ErrCorruption", name, err)
			continue
		}
		if after := mustApply(t, b); !reflect.DeepEqual(before, after) {
			t.Errorf("%s: a rejected edit changed the fold", name)
		}
	}
}

func TestApplyRejectsInconsistentState(t *testing.T) {
	cases := map[string]*VersionEdit{
		"overlap in L1": {NewTables: []NewTable{{1, meta(5, 0, 10)}, {1, meta(6, 10, 20)}}},
		"nested in L3":  {NewTables: []NewTable{{3, meta(5, 0, 100)}, {3, meta(6, 10, 20)}}},
		"reversed keys": {NewTables: []NewTable{{0, meta(5, 10, 0)}}},
		"file number not below next": {NextFileNumber: 6, HasNextFileNumber: true,
			NewTables: []NewTable{{0, meta(6, 0, 1)}}},
		"log number not below next": {LogNumber: 6, HasLogNumber: true, NextFileNumber: 6, HasNextFileNumber: true},
		"sequence above last": {LastSequence: 5, HasLastSequence: true,
			NewTables: []NewTable{{0, meta(5, 0, 1)}}},
		// A key's trailer holds 56 bits: the engine would number its
		// next writes past what a key can carry.
		"last sequence above SeqNumMax": {LastSequence: uint64(base.SeqNumMax) + 1, HasLastSequence: true},
		"last sequence 2^64-1":          {LastSequence: 1<<64 - 1, HasLastSequence: true},
	}
	for name, e := range cases {
		var b BulkVersionEdit
		if err := replay(t, &b, e); err != nil {
			t.Fatalf("%s: Accumulate: %v", name, err)
		}
		if _, err := b.Apply(); !errors.Is(err, ErrCorruption) {
			t.Errorf("%s: Apply = %v, want ErrCorruption", name, err)
		}
	}
	// L0 tables may overlap: that is what L0 is for.
	var b BulkVersionEdit
	replay(t, &b, &VersionEdit{NewTables: []NewTable{{0, meta(5, 0, 10)}, {0, meta(6, 5, 20)}}})
	mustApply(t, &b)
}

// TestApplyMatchesModel drives random flushes, deletions, moves and bad
// edits through encode, decode and Accumulate, and checks Apply against a
// plain map of what each level should hold.
func TestApplyMatchesModel(t *testing.T) {
	for seed := uint64(0); seed < 30; seed++ {
		rng := rand.New(rand.NewPCG(seed, 7))
		var b BulkVersionEdit
		model := map[uint64]placed{}
		// Each level >= 1 is cut into 16 key slots; a table fills one slot,
		// so tables of a level never overlap.
		slot := func(level int, s uint64) bool {
			for _, p := range model {
				if p.level == level && binary.BigEndian.Uint64(p.meta.Smallest.UserKey) == s*100 {
					return true
				}
			}
			return false
		}
		next := uint64(1)
		for step := 0; step < 300; step++ {
			e := &VersionEdit{}
			switch op := rng.IntN(10); {
			case op < 4: // add
				level := rng.IntN(NumLevels)
				s := rng.Uint64N(16)
				if level > 0 && slot(level, s) {
					continue
				}
				m := meta(next, s*100, s*100+99)
				next++
				e.NewTables = []NewTable{{level, m}}
				e.NextFileNumber, e.HasNextFileNumber = next, true
				e.LastSequence, e.HasLastSequence = next+1, true
				model[m.FileNum] = placed{level, m}
			case op < 6 && len(model) > 0: // delete
				for fn, p := range model {
					e.DeletedTables = []DeletedTable{{p.level, fn}}
					delete(model, fn)
					break
				}
			case op < 8 && len(model) > 0: // move down if the slot is free
				for fn, p := range model {
					s := binary.BigEndian.Uint64(p.meta.Smallest.UserKey) / 100
					if p.level+1 < NumLevels && !slot(p.level+1, s) {
						e.DeletedTables = []DeletedTable{{p.level, fn}}
						e.NewTables = []NewTable{{p.level + 1, p.meta}}
						model[fn] = placed{p.level + 1, p.meta}
					}
					break
				}
			default: // an inconsistent edit, which must be refused
				bad := &VersionEdit{DeletedTables: []DeletedTable{{rng.IntN(NumLevels), next + 1000}}}
				if err := b.Accumulate(bad); !errors.Is(err, ErrCorruption) {
					t.Fatalf("seed %d step %d: bad edit accepted: %v", seed, step, err)
				}
				continue
			}
			if err := replay(t, &b, e); err != nil {
				t.Fatalf("seed %d step %d: %v", seed, step, err)
			}
		}
		s := mustApply(t, &b)
		var want [NumLevels][]*TableMetadata
		for _, p := range model {
			want[p.level] = append(want[p.level], p.meta)
		}
		for level := range want {
			if level == 0 {
				// Newest first (V2): meta's sequence numbers grow with the
				// file number.
				slices.SortFunc(want[level], func(x, y *TableMetadata) int { return cmpUint(y.FileNum, x.FileNum) })
			} else {
				slices.SortFunc(want[level], func(x, y *TableMetadata) int { return base.Compare(x.Smallest, y.Smallest) })
			}
			if !reflect.DeepEqual(s.Levels[level], want[level]) {
				t.Fatalf("seed %d: level %d holds %v, model %v", seed, level, fileNums(s.Levels[level]), fileNums(want[level]))
			}
		}
	}
}

// TestFoldDoesNotAliasDecodeInput: the tables a replayed fold holds own
// their keys, so the record buffer the MANIFEST reader reuses cannot change
// them. (The fold itself shares the edits' TableMetadata: V1 makes them
// immutable once published.)
func TestFoldDoesNotAliasDecodeInput(t *testing.T) {
	rec := (&VersionEdit{NewTables: []NewTable{{0, meta(5, 1, 2)}}}).Encode()
	var e VersionEdit
	if err := e.Decode(rec); err != nil {
		t.Fatal(err)
	}
	var b BulkVersionEdit
	if err := b.Accumulate(&e); err != nil {
		t.Fatal(err)
	}
	for i := range rec {
		rec[i] = 0xff
	}
	if s := mustApply(t, &b); !slices.Equal(s.Levels[0][0].Smallest.UserKey, key(1)) {
		t.Fatal("the fold kept a reference to the decoded record's bytes")
	}
}

// TestFoldOntoBase: an edit folded onto a published version's tables (what
// the engine does for every flush and compaction) checks against them and
// shares them with the new version.
func TestFoldOntoBase(t *testing.T) {
	var first BulkVersionEdit
	if err := replay(t, &first, &VersionEdit{NewTables: []NewTable{{0, meta(5, 0, 9)}, {1, meta(6, 0, 9)}}}); err != nil {
		t.Fatal(err)
	}
	v := mustApply(t, &first).Version
	b := NewBulkVersionEdit(v)
	if err := b.Accumulate(&VersionEdit{DeletedTables: []DeletedTable{{0, 7}}}); !errors.Is(err, ErrCorruption) {
		t.Fatalf("deleting a table the base lacks: %v", err)
	}
	moved := v.Levels[1][0]
	if err := b.Accumulate(&VersionEdit{DeletedTables: []DeletedTable{{1, 6}}, NewTables: []NewTable{{2, moved}}}); err != nil {
		t.Fatal(err)
	}
	nv := mustApply(t, b)
	if nv.Levels[2][0] != moved || nv.Levels[0][0] != v.Levels[0][0] || len(nv.Levels[1]) != 0 {
		t.Fatalf("fold onto base: %v %v %v", fileNums(nv.Levels[0]), fileNums(nv.Levels[1]), fileNums(nv.Levels[2]))
	}
	if len(v.Levels[1]) != 1 {
		t.Fatal("the fold changed its base version")
	}
}
