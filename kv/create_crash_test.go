package kv

import (
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/sievekv/sievekv/vfs"
	"github.com/sievekv/sievekv/vfs/errorfs"
)

// TestOpenAfterInterruptedCreation caught that an Open creating a new DB
// which failed (or crashed) after writing its first MANIFEST but before
// CURRENT named it left a directory every later Open refused as
// corrupt ("CURRENT is missing but MANIFEST-000002 exists"), although no
// write could ever have been acknowledged in it.
func TestOpenAfterInterruptedCreation(t *testing.T) {
	for _, step := range []errorfs.Op{errorfs.OpCreate, errorfs.OpWrite, errorfs.OpSync, errorfs.OpRename} {
		t.Run(step.String(), func(t *testing.T) {
			mem := vfs.NewMem()
			efs := errorfs.Wrap(mem, step)
			efs.SetMatch(func(_ errorfs.Op, name string) bool { return strings.HasSuffix(name, ".tmp") })
			efs.FailAt(1, false)
			if _, err := Open("db", &Options{FS: efs}); !errors.Is(err, errorfs.ErrInjected) {
				t.Fatalf("Open with a failing CURRENT update = %v", err)
			}
			// The power-loss image of that state must open too.
			for _, fs := range []*vfs.MemFS{mem.CrashClone(), mem} {
				d, err := Open("db", &Options{FS: fs})
				if err != nil {
					t.Fatalf("reopen: %v", err)
				}
				if err := d.Set([]byte("k"), []byte("v"), Sync); err != nil {
					t.Fatal(err)
				}
				if err := d.Close(); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

// TestOpenMissingCURRENTWithLoggedWritesIsCorruption: the relaxation above
// must not hide real damage: a WAL that holds writes means the DB was
// created and used, so its lost CURRENT is corruption.
func TestOpenMissingCURRENTWithLoggedWritesIsCorruption(t *testing.T) {
	fs := vfs.NewMem()
	d := openMem(t, fs, nil)
	if err := d.Set([]byte("k"), []byte("v"), Sync); err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if err := fs.Remove("db/CURRENT"); err != nil {
		t.Fatal(err)
	}
	if _, err := Open("db", &Options{FS: fs}); !errors.Is(err, ErrCorruption) {
		t.Fatalf("Open = %v, want ErrCorruption", err)
	}
}

// dirSyncs opens an FS over a MemFS that records the name of every Sync.
func dirSyncs() (*errorfs.FS, func(name string) bool) {
	efs := errorfs.Wrap(vfs.NewMem(), errorfs.OpSync)
	var mu sync.Mutex
	synced := map[string]bool{}
	efs.SetMatch(func(_ errorfs.Op, name string) bool {
		mu.Lock()
		synced[name] = true
		mu.Unlock()
		return false
	})
	return efs, func(name string) bool {
		mu.Lock()
		defer mu.Unlock()
		return synced[name]
	}
}

// A directory Open or Checkpoint creates is an entry of its parent, lost
// on a power loss with everything in it unless the parent is synced
// (vfs's V1): every parent that gained a directory is synced before the
// call returns.
func TestCreatedDirectoriesAreMadeDurable(t *testing.T) {
	fs, synced := dirSyncs()
	d, err := Open("data/db", &Options{FS: fs})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	for _, parent := range []string{".", "data"} {
		if !synced(parent) {
			t.Errorf("Open of data/db did not sync %q, which gained a directory", parent)
		}
	}
	if err := d.Checkpoint("backups/cp1"); err != nil {
		t.Fatal(err)
	}
	if !synced("backups") {
		t.Errorf("Checkpoint into backups/cp1 did not sync backups, which gained cp1")
	}
}
