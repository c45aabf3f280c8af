package errorfs

import (
	"errors"
	"testing"

	"github.com/sievekv/sievekv/vfs"
)

// workload does a fixed mix of operations and returns the first error.
func workload(fs *FS) error {
	f, err := fs.Create("a")
	if err != nil {
		return err
	}
	if _, err := f.Write([]byte("hello")); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := fs.Rename("a", "b"); err != nil {
		return err
	}
	g, err := fs.Open("b")
	if err != nil {
		return err
	}
	defer g.Close()
	buf := make([]byte, 5)
	if _, err := g.ReadAt(buf, 0); err != nil {
		return err
	}
	return fs.Remove("b")
}

// TestEveryOperationFailsOnce counts the workload's operations, then fails
// each in turn: exactly that one reports ErrInjected (E1, E2).
func TestEveryOperationFailsOnce(t *testing.T) {
	fs := Wrap(vfs.NewMem(), OpAll)
	if err := workload(fs); err != nil {
		t.Fatal(err)
	}
	n := fs.Count()
	if n != 7 { // create, write, sync, rename, open, read, remove
		t.Fatalf("counted %d operations, want 7", n)
	}
	for i := int64(1); i <= n; i++ {
		fs := Wrap(vfs.NewMem(), OpAll)
		fs.FailAt(i, false)
		err := workload(fs)
		if !errors.Is(err, ErrInjected) {
			t.Fatalf("FailAt(%d): err = %v, want ErrInjected", i, err)
		}
		if fs.Injected() != 1 || fs.LastInjected() == "" {
			t.Fatalf("FailAt(%d): injected %d (%q)", i, fs.Injected(), fs.LastInjected())
		}
	}
}

func TestOnlySelectedKindsCount(t *testing.T) {
	fs := Wrap(vfs.NewMem(), OpSync|OpRename)
	if err := workload(fs); err != nil {
		t.Fatal(err)
	}
	if fs.Count() != 2 {
		t.Fatalf("counted %d, want 2 (sync, rename)", fs.Count())
	}
	fs2 := Wrap(vfs.NewMem(), OpSync|OpRename)
	fs2.FailAt(2, false)
	if err := workload(fs2); !errors.Is(err, ErrInjected) || fs2.LastInjected() != "rename a (operation 2)" {
		t.Fatalf("err = %v, last = %q", err, fs2.LastInjected())
	}
}

func TestStickyFailsEverythingAfter(t *testing.T) {
	fs := Wrap(vfs.NewMem(), OpAll)
	fs.FailAt(2, true)
	f, err := fs.Create("x")
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		if _, err := f.Write([]byte("x")); !errors.Is(err, ErrInjected) {
			t.Fatalf("write %d: %v", i, err)
		}
	}
	if fs.Injected() != 3 {
		t.Fatalf("injected %d", fs.Injected())
	}
	fs.FailAt(0, false)
	if _, err := f.Write([]byte("x")); err != nil {
		t.Fatalf("after disabling: %v", err)
	}
}

func TestMatchNarrowsByName(t *testing.T) {
	fs := Wrap(vfs.NewMem(), OpAll)
	fs.SetMatch(func(op Op, name string) bool { return name == "b" })
	if err := workload(fs); err != nil {
		t.Fatal(err)
	}
	if fs.Count() != 3 { // open b, read b, remove b
		t.Fatalf("counted %d, want 3", fs.Count())
	}
}
