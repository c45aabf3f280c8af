package kv

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/sievekv/sievekv/vfs"
)

// TestOpenErrorIfNotExistsLeavesForeignDirAlone: a caller that means to
// open an existing DB and is handed a directory of someone else's files
// gets ErrDBDoesNotExist, and the directory is byte for byte as it was:
// no LOCK, CURRENT, MANIFEST or WAL among the files, and none of them
// removed (a stray N.tmp, which a creating Open deletes as its own
// interrupted CURRENT, included).
func TestOpenErrorIfNotExistsLeavesForeignDirAlone(t *testing.T) {
	dir := t.TempDir()
	foreign := map[string]string{"notes.txt": "mine", ".profile": "export A=1", "000007.tmp": "not a CURRENT"}
	for n, c := range foreign {
		if err := os.WriteFile(filepath.Join(dir, n), []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	listing := func() []string {
		es, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		var ns []string
		for _, e := range es {
			ns = append(ns, e.Name())
		}
		return ns
	}
	before := listing()
	d, err := Open(dir, &Options{ErrorIfNotExists: true})
	if err == nil {
		d.Close()
		t.Fatal("Open with ErrorIfNotExists created a DB among foreign files")
	}
	if !errors.Is(err, ErrDBDoesNotExist) || !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Open = %v, want ErrDBDoesNotExist wrapping fs.ErrNotExist", err)
	}
	if after := listing(); !slices.Equal(before, after) {
		t.Fatalf("directory changed: %v, then %v", before, after)
	}
	for n, c := range foreign {
		if b, err := os.ReadFile(filepath.Join(dir, n)); err != nil || string(b) != c {
			t.Fatalf("%s: %q, %v", n, b, err)
		}
	}
}

// TestOpenErrorIfNotExistsAndErrorIfExists covers the two options on a
// missing directory, an empty one, an interrupted creation and a DB.
func TestOpenErrorIfNotExistsAndErrorIfExists(t *testing.T) {
	mem := vfs.NewMem()
	open := func(dir string, o Options) (*DB, error) {
		o.FS = mem
		return Open(dir, &o)
	}
	// A missing directory is not created.
	if _, err := open("missing", Options{ErrorIfNotExists: true}); !errors.Is(err, ErrDBDoesNotExist) {
		t.Fatalf("missing dir: %v", err)
	}
	if _, err := mem.Stat("missing"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("missing dir was created: %v", err)
	}
	// An empty directory holds no DB either, for a read-only open too.
	if err := mem.MkdirAll("empty", 0o755); err != nil {
		t.Fatal(err)
	}
	for _, o := range []Options{{ErrorIfNotExists: true}, {ReadOnly: true}, {ReadOnly: true, ErrorIfNotExists: true}} {
		if _, err := open("empty", o); !errors.Is(err, ErrDBDoesNotExist) || !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("empty dir %+v: %v", o, err)
		}
	}
	if ns, _ := mem.List("empty"); len(ns) != 0 {
		t.Fatalf("empty dir now holds %v", ns)
	}
	// ErrorIfExists creates a DB where none is.
	d, err := open("db", Options{ErrorIfExists: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Set([]byte("k"), []byte("v"), Sync); err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	// And refuses one that is.
	if _, err := open("db", Options{ErrorIfExists: true}); !errors.Is(err, ErrDBExists) {
		t.Fatalf("existing DB with ErrorIfExists: %v", err)
	}
	// ErrorIfNotExists opens it, as does a plain Open after the refusal.
	for _, o := range []Options{{ErrorIfNotExists: true}, {}} {
		d, err := open("db", o)
		if err != nil {
			t.Fatalf("%+v: %v", o, err)
		}
		if v, err := d.Get([]byte("k")); err != nil || string(v) != "v" {
			t.Fatalf("%+v: Get = %q, %v", o, v, err)
		}
		if err := d.Close(); err != nil {
			t.Fatal(err)
		}
	}
	// An interrupted creation (a MANIFEST and an empty WAL, no CURRENT)
	// is no DB: ErrorIfNotExists refuses it, a plain Open creates afresh.
	if err := mem.MkdirAll("half", 0o755); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"MANIFEST-000002", "000001.log"} {
		f, err := mem.Create("half/" + n)
		if err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	if _, err := open("half", Options{ErrorIfNotExists: true}); !errors.Is(err, ErrDBDoesNotExist) {
		t.Fatalf("interrupted creation with ErrorIfNotExists: %v", err)
	}
}

// TestOpenRefusesFlagsNoDirectorySatisfies: ErrorIfExists with
// ErrorIfNotExists, or with ReadOnly (which never creates), can open no
// directory; Open said so only as ErrDBExists or ErrDBDoesNotExist,
// whichever the directory gave, naming one flag of the two.
func TestOpenRefusesFlagsNoDirectorySatisfies(t *testing.T) {
	fs := vfs.NewMem()
	d := openMem(t, fs, nil)
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{"db", "none"} {
		for name, o := range map[string]Options{
			"ErrorIfExists+ErrorIfNotExists": {ErrorIfExists: true, ErrorIfNotExists: true},
			"ErrorIfExists+ReadOnly":         {ErrorIfExists: true, ReadOnly: true},
		} {
			o.FS = fs
			if _, err := Open(dir, &o); !errors.Is(err, ErrInvalidOptions) {
				t.Errorf("Open(%s) with %s = %v, want ErrInvalidOptions", dir, name, err)
			}
		}
	}
}
