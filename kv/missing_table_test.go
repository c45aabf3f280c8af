package kv

import (
	"errors"
	"strings"
	"testing"

	"github.com/sievekv/sievekv/vfs"
)

// TestOpenMissingTableIsCorruption caught that a table the MANIFEST names
// but the directory lacks made Open fail with a plain "file does not
// exist" instead of ErrCorruption, so callers could not tell a damaged
// database from, say, a wrong path.
func TestOpenMissingTableIsCorruption(t *testing.T) {
	fs := vfs.NewMem()
	d := openMem(t, fs, nil)
	if err := d.Set([]byte("k"), []byte("v"), Sync); err != nil {
		t.Fatal(err)
	}
	mustFlush(t, d)
	tables := mustTables(t, d)
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if len(tables) != 1 {
		t.Fatalf("want 1 table, have %d", len(tables))
	}
	name := fileName(fileKindTable, fileNum(tables[0].FileNum))
	if err := fs.Remove("db/" + name); err != nil {
		t.Fatal(err)
	}
	_, err := Open("db", &Options{FS: fs})
	if !errors.Is(err, ErrCorruption) || !strings.Contains(err.Error(), name) {
		t.Fatalf("Open = %v, want ErrCorruption naming %s", err, name)
	}
}
