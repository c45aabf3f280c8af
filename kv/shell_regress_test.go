package kv

import (
	"testing"

	"github.com/sievekv/sievekv/vfs"
)

// TestReadOnlyMetricsCountReplayedWALs: kvshell's stats on a DB opened
// with -readonly said "wal: 0 files" while the only copy of the recent
// writes was a WAL file the open had just replayed. A read-only open keeps
// those WALs (it may not flush them), so they are live and count.
func TestReadOnlyMetricsCountReplayedWALs(t *testing.T) {
	fs := vfs.NewMem()
	d := openMem(t, fs, nil)
	if err := d.Set([]byte("a"), []byte("1"), Sync); err != nil {
		t.Fatal(err)
	}
	if got := d.Metrics().WAL.Files; got != 1 {
		t.Fatalf("read-write: WAL.Files = %d, want 1", got)
	}
	d = reopen(t, d, "db", &Options{FS: fs, ReadOnly: true})
	defer d.Close()
	if v, err := d.Get([]byte("a")); err != nil || string(v) != "1" {
		t.Fatalf("Get = %q, %v", v, err)
	}
	if got := d.Metrics().WAL.Files; got != 1 {
		t.Fatalf("read-only: WAL.Files = %d, want 1 (the replayed log holds the only copy of a)", got)
	}
}
