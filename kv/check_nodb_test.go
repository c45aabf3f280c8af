package kv

import (
	"errors"
	"io/fs"
	"path"
	"testing"

	"github.com/sievekv/sievekv/vfs"
)

// TestCheckOfNoDatabaseIsErrDBDoesNotExist points Check at a directory
// that does not exist, an empty one, one of someone else's files, and one
// holding only the LOCK a first Open left when it failed before writing
// CURRENT: the error must say "no database" in a form a caller can test
// (as Open's ReadOnly and ErrorIfNotExists refusals do), not only in its
// text. The last case used to be an untyped error.
func TestCheckOfNoDatabaseIsErrDBDoesNotExist(t *testing.T) {
	mem := vfs.NewMem()
	if err := mem.MkdirAll("empty", 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"home/notes.txt", "locked/LOCK"} {
		if err := mem.MkdirAll(path.Dir(name), 0o755); err != nil {
			t.Fatal(err)
		}
		f, err := mem.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	for _, dir := range []string{"missing", "empty", "home", "locked"} {
		_, err := Check(dir, &Options{FS: mem})
		if !errors.Is(err, ErrDBDoesNotExist) || !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("Check(%q) = %v, want ErrDBDoesNotExist and fs.ErrNotExist", dir, err)
		}
		if _, oerr := Open(dir, &Options{FS: mem, ReadOnly: true}); !errors.Is(oerr, ErrDBDoesNotExist) {
			t.Errorf("read-only Open(%q) = %v, want ErrDBDoesNotExist", dir, oerr)
		}
	}
}
