package kv

import (
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/sievekv/sievekv/vfs"
	"github.com/sievekv/sievekv/vfs/errorfs"
)

// hookDirSyncFS runs onSync once, the first time a directory named dir is
// opened for its sync after arm: a seam to close the DB at one instant of
// a checkpoint.
type hookDirSyncFS struct {
	vfs.FS
	dir    string
	mu     sync.Mutex
	onSync func()
}

func (h *hookDirSyncFS) OpenDir(name string) (vfs.File, error) {
	h.mu.Lock()
	f := h.onSync
	if name == h.dir {
		h.onSync = nil
	}
	h.mu.Unlock()
	if f != nil && name == h.dir {
		f()
	}
	return h.FS.OpenDir(name)
}

func (h *hookDirSyncFS) arm(f func()) {
	h.mu.Lock()
	h.onSync = f
	h.mu.Unlock()
}

// TestCheckpointLosingARaceWithCloseLeavesNothing caught a Checkpoint
// that created its directory, then found the DB closed (its flush
// answered ErrClosed) and returned, leaving an empty directory that a
// retry into the same name then refused as not empty.
func TestCheckpointLosingARaceWithCloseLeavesNothing(t *testing.T) {
	mem := vfs.NewMem()
	fs := &hookDirSyncFS{FS: mem, dir: "backups"}
	if err := mem.MkdirAll("backups", 0o755); err != nil {
		t.Fatal(err)
	}
	d := openMem(t, fs, nil)
	if err := d.Set([]byte("k"), []byte("v"), Sync); err != nil {
		t.Fatal(err)
	}
	// MkdirAllDurable syncs backups/ once it made backups/cp: Close then.
	fs.arm(func() {
		if err := d.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	if err := d.Checkpoint("backups/cp"); !errors.Is(err, ErrClosed) {
		t.Fatalf("Checkpoint racing Close = %v, want ErrClosed", err)
	}
	if _, err := mem.Stat("backups/cp"); err == nil {
		t.Fatalf("the Checkpoint that lost to Close left backups/cp behind:\n%s", mem)
	}
}

// TestFailedCheckpointRemovesWhatItWrote: a checkpoint that fails part
// way (here its MANIFEST cannot be created, as on a full disk) removes
// the tables it linked and the directory it made, and keeps a directory
// the user made.
func TestFailedCheckpointRemovesWhatItWrote(t *testing.T) {
	for _, userDir := range []bool{false, true} {
		mem := vfs.NewMem()
		efs := errorfs.Wrap(mem, errorfs.OpCreate)
		efs.SetMatch(func(_ errorfs.Op, name string) bool { return strings.HasPrefix(name, "cp/MANIFEST") })
		efs.FailAt(1, true)
		d := openMem(t, efs, nil)
		for i := range 3 {
			if err := d.Set([]byte{byte('a' + i)}, []byte("v"), nil); err != nil {
				t.Fatal(err)
			}
			if err := d.Flush(); err != nil {
				t.Fatal(err)
			}
		}
		if userDir {
			if err := mem.MkdirAll("cp", 0o755); err != nil {
				t.Fatal(err)
			}
		}
		if err := d.Checkpoint("cp"); !errors.Is(err, errorfs.ErrInjected) {
			t.Fatalf("Checkpoint with its MANIFEST failing = %v, want the injected failure", err)
		}
		names, err := mem.List("cp")
		switch {
		case userDir && err != nil:
			t.Fatalf("the failed Checkpoint removed the user's directory: %v", err)
		case !userDir && err == nil:
			t.Fatalf("the failed Checkpoint left its directory behind, holding %q", names)
		case len(names) > 0:
			t.Fatalf("the failed Checkpoint left %q behind", names)
		}
		// The source is whole, and a retry succeeds once the disk has room.
		efs.FailAt(0, false)
		if err := d.Checkpoint("cp"); err != nil {
			t.Fatalf("retry: %v", err)
		}
		if err := d.Close(); err != nil {
			t.Fatal(err)
		}
		cp, err := Open("cp", &Options{FS: mem})
		if err != nil {
			t.Fatal(err)
		}
		if v, err := cp.Get([]byte("c")); err != nil || string(v) != "v" {
			t.Fatalf("checkpoint Get = %q, %v", v, err)
		}
		cp.Close()
	}
}
