package kv

import (
	"errors"
	"testing"

	"github.com/sievekv/sievekv/vfs"
)

// An iterator positioned after its own Close must say it is closed: a bare
// false from First reads as "no keys", a wrong answer to a caller that
// checks Error after the loop as it should.
func TestIteratorUsedAfterItsCloseReportsErrClosed(t *testing.T) {
	d := openMem(t, vfs.NewMem(), nil)
	defer d.Close()
	if err := d.Set([]byte("a"), []byte("1"), NoSync); err != nil {
		t.Fatal(err)
	}
	snap := d.NewSnapshot()
	defer snap.Close()
	for _, tc := range []struct {
		name string
		move func(*Iterator) bool
	}{
		{"First", (*Iterator).First},
		{"Last", (*Iterator).Last},
		{"Next", (*Iterator).Next},
		{"Prev", (*Iterator).Prev},
		{"SeekGE", func(it *Iterator) bool { return it.SeekGE([]byte("a")) }},
		{"SeekLT", func(it *Iterator) bool { return it.SeekLT([]byte("z")) }},
	} {
		for src, newIter := range map[string]func() *Iterator{
			"db":       func() *Iterator { return d.NewIter(nil) },
			"snapshot": func() *Iterator { return snap.NewIter(nil) },
		} {
			it := newIter()
			if !it.First() {
				t.Fatalf("%s: First on a DB holding a key = false (%v)", src, it.Error())
			}
			if err := it.Close(); err != nil {
				t.Fatalf("%s: Close: %v", src, err)
			}
			if tc.move(it) || it.Valid() || it.Key() != nil {
				t.Errorf("%s %s after Close: positioned on a key", src, tc.name)
			}
			if err := it.Error(); !errors.Is(err, ErrClosed) {
				t.Errorf("%s %s after Close: Error() = %v, want ErrClosed", src, tc.name, err)
			}
			if err := it.Close(); !errors.Is(err, ErrClosed) {
				t.Errorf("%s second Close after %s: %v, want ErrClosed", src, tc.name, err)
			}
		}
	}
}

// Checkpoint on a DB that cannot flush fails before it touches dir, and
// fails with the DB's own state, not with a complaint about dir.
func TestCheckpointOfUnwritableDBLeavesNoDirectory(t *testing.T) {
	fs := vfs.NewMem()
	for _, tc := range []struct {
		name  string
		setup func() *DB
		want  error
	}{
		{"closed", func() *DB {
			d := openMem(t, fs, nil)
			if err := d.Close(); err != nil {
				t.Fatal(err)
			}
			return d
		}, ErrClosed},
		{"read-only", func() *DB {
			d := openMem(t, fs, &Options{ReadOnly: true})
			t.Cleanup(func() { d.Close() })
			return d
		}, ErrReadOnly},
	} {
		d := tc.setup()
		dir := "cp-" + tc.name
		if err := d.Checkpoint(dir); !errors.Is(err, tc.want) {
			t.Errorf("%s: Checkpoint = %v, want %v", tc.name, err, tc.want)
		}
		if _, err := fs.Stat(dir); err == nil {
			t.Errorf("%s: failed Checkpoint created %s", tc.name, dir)
		}
		// A non-empty target must not mask the DB's state either.
		full := "full-" + tc.name
		if err := fs.MkdirAll(full, 0o755); err != nil {
			t.Fatal(err)
		}
		f, err := fs.Create(fs.PathJoin(full, "x"))
		if err != nil {
			t.Fatal(err)
		}
		f.Close()
		if err := d.Checkpoint(full); !errors.Is(err, tc.want) {
			t.Errorf("%s: Checkpoint into a full dir = %v, want %v", tc.name, err, tc.want)
		}
	}
}

func TestCheckpointRejectsEmptyDirName(t *testing.T) {
	d := openMem(t, vfs.NewMem(), nil)
	defer d.Close()
	if err := d.Checkpoint(""); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("Checkpoint(\"\") = %v, want ErrInvalidArgument", err)
	}
}

// Every public call that takes a key range rejects an inverted one with the
// same sentinel, so a caller can tell its own mistake from an engine failure.
func TestInvertedRangesAreInvalidArguments(t *testing.T) {
	d := openMem(t, vfs.NewMem(), nil)
	defer d.Close()
	a, b := []byte("a"), []byte("b")
	_, explainErr := d.ExplainScan(b, a)
	_, estimateErr := d.EstimateDiskUsage(b, a)
	for name, err := range map[string]error{
		"DeleteRange(b, a)":       d.DeleteRange(b, a, NoSync),
		"DeleteRange(a, a)":       d.DeleteRange(a, a, NoSync),
		"Compact(b, a)":           d.Compact(b, a),
		"ExplainScan(b, a)":       explainErr,
		"EstimateDiskUsage(b, a)": estimateErr,
	} {
		if !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("%s = %v, want ErrInvalidArgument", name, err)
		}
	}
}

// Apply of a nil batch is the caller's mistake, reported with the sentinel
// callers test for, not an untyped error indistinguishable from a failure.
func TestApplyNilBatchIsInvalidArgument(t *testing.T) {
	d := openMem(t, vfs.NewMem(), nil)
	defer d.Close()
	if err := d.Apply(nil, Sync); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("Apply(nil) = %v, want ErrInvalidArgument", err)
	}
}
