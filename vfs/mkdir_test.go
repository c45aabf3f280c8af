package vfs_test

import (
	"slices"
	"testing"

	"github.com/sievekv/sievekv/vfs"
	"github.com/sievekv/sievekv/vfs/errorfs"
)

// A new directory is an entry of its parent: MkdirAllDurable syncs the
// parent of every directory it creates, top down, and nothing when all
// exist.
func TestMkdirAllDurableSyncsEachNewDirectorysParent(t *testing.T) {
	fs, synced := errorfs.Record(vfs.NewMem(), errorfs.OpSync)
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
