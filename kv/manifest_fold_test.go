package kv

import (
	"errors"
	"testing"

	"github.com/sievekv/sievekv/internal/base"
	"github.com/sievekv/sievekv/internal/manifest"
	"github.com/sievekv/sievekv/vfs"
)

// TestInconsistentEditNeverReachesTheManifest: an edit that does not fold
// onto the current version is refused before it is written, so the
// MANIFEST stays replayable and the DB stays writable. (The edit used to be
// written and synced first and only then found inconsistent, leaving a
// MANIFEST the next Open rejects.)
func TestInconsistentEditNeverReachesTheManifest(t *testing.T) {
	fs := vfs.NewMem()
	d := openMem(t, fs, &Options{DisableAutomaticCompactions: true})
	if err := d.Set([]byte("a"), []byte("1"), Sync); err != nil {
		t.Fatal(err)
	}
	if err := d.Flush(); err != nil {
		t.Fatal(err)
	}
	name := fileName(fileKindManifest, d.manifest.num)
	before, err := fs.Stat(d.fs.PathJoin(d.dirname, name))
	if err != nil {
		t.Fatal(err)
	}
	d.mu.Lock()
	live := d.current.Levels[0][0]
	bad := []*manifest.VersionEdit{
		{DeletedTables: []manifest.DeletedTable{{Level: 3, FileNum: live.FileNum}}}, // wrong level
		{NewTables: []manifest.NewTable{{Level: 1, Meta: live}}},                    // added twice
	}
	for i, e := range bad {
		if err := d.logAndApplyLocked(e); !errors.Is(err, base.ErrCorruption) {
			d.mu.Unlock()
			t.Fatalf("edit %d: logAndApplyLocked = %v, want corruption", i, err)
		}
	}
	sticky := d.bgErr
	d.mu.Unlock()
	if sticky != nil {
		t.Fatalf("a refused edit left a sticky error: %v", sticky)
	}
	after, err := fs.Stat(d.fs.PathJoin(d.dirname, name))
	if err != nil {
		t.Fatal(err)
	}
	if after.Size() != before.Size() {
		t.Fatalf("%s grew from %d to %d bytes: a refused edit was written", name, before.Size(), after.Size())
	}
	if err := d.Set([]byte("b"), []byte("2"), Sync); err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	d = openMem(t, fs, nil)
	defer d.Close()
	for _, k := range []string{"a", "b"} {
		if _, err := d.Get([]byte(k)); err != nil {
			t.Fatalf("Get(%q) after reopen: %v", k, err)
		}
	}
}
