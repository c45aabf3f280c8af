package kv

import (
	"errors"
	"strings"
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
