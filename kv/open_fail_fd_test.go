package kv

import (
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/sievekv/sievekv/internal/testutil"
	"github.com/sievekv/sievekv/vfs"
	"github.com/sievekv/sievekv/vfs/errorfs"
)

// TestFailedOpenClosesItsWAL caught an Open that failed after creating the
// new memtable's WAL (here creating the new MANIFEST fails; a table the
// tombstone index could not read did the same) keeping that WAL's file
// descriptor: a process retrying Open on a failing disk lost one per try.
func TestFailedOpenClosesItsWAL(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "db")
	d, err := Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Set([]byte("a"), []byte("1"), nil); err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	before := testutil.OpenFilesUnder(t, dir)
	for range 5 {
		var walCreated atomic.Bool
		efs := errorfs.Wrap(vfs.Default, errorfs.OpAll)
		efs.SetMatch(func(op errorfs.Op, name string) bool {
			if op == errorfs.OpCreate && strings.HasSuffix(name, ".log") {
				walCreated.Store(true)
			}
			return walCreated.Load() && op == errorfs.OpCreate && strings.Contains(name, "MANIFEST")
		})
		efs.FailAt(1, true)
		if d, err := Open(dir, &Options{FS: efs}); err == nil {
			d.Close()
			t.Fatal("the injected fault was not reached")
		}
	}
	if after := testutil.OpenFilesUnder(t, dir); len(after) > len(before) {
		t.Fatalf("5 failed Opens: open descriptors %d -> %d:\n%s", len(before), len(after), strings.Join(after, "\n"))
	}
	// The directory still opens, with its data.
	d, err = Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if v, err := d.Get([]byte("a")); err != nil || string(v) != "1" {
		t.Fatalf("a = %q, %v after the failed Opens", v, err)
	}
}
