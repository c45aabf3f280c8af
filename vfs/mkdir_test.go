package vfs_test

import (
	"slices"
	"sync"
	"testing"

	"github.com/sievekv/sievekv/vfs"
	"github.com/sievekv/sievekv/vfs/errorfs"
)

// syncRecorder wraps a MemFS and lists the names of the files and
// directories synced through it, in order.
func syncRecorder() (*errorfs.FS, func() []string) {
	efs := errorfs.Wrap(vfs.NewMem(), errorfs.OpSync)
	var mu sync.Mutex
	var names []string
	efs.SetMatch(func(_ errorfs.Op, name string) bool {
		mu.Lock()
		names = append(names, name)
		mu.Unlock()
		return false
	})
	return efs, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(names)
	}
}

// A new directory is an entry of its parent: MkdirAllDurable syncs the
// parent of every directory it creates, top down, and nothing when all
// exist.
func TestMkdirAllDurableSyncsEachNewDirectorysParent(t *testing.T) {
	fs, synced := syncRecorder()
	if err := fs.MkdirAll("a", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := vfs.MkdirAllDurable(fs, "a/b/c", 0o755); err != nil {
		t.Fatal(err)
	}
	if got, want := synced(), []string{"a", "a/b"}; !slices.Equal(got, want) {
		t.Fatalf("synced %q, want %q", got, want)
	}
	if _, err := fs.Stat("a/b/c"); err != nil {
		t.Fatal(err)
	}
	if err := vfs.MkdirAllDurable(fs, "a/b/c", 0o755); err != nil {
		t.Fatal(err)
	}
	if got := synced(); len(got) != 2 {
		t.Fatalf("MkdirAllDurable of an existing directory synced %q", got[2:])
	}
}
