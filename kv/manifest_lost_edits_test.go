package kv

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/sievekv/sievekv/vfs"
)

// TestOpenManifestWithLostEditsIsCorruption caught that a MANIFEST cut
// short (or with a damaged last record) read as a crash's torn tail: Open
// silently went back to an older version, deleted the newer tables as
// orphans, and since the WALs of those tables had been deleted long
// before, served values from far in the past. The WAL the recovered
// version needs must exist; if not, Open reports corruption.
func TestOpenManifestWithLostEditsIsCorruption(t *testing.T) {
	fs := vfs.NewMem()
	d := openMem(t, fs, nil)
	var sizes []int64
	manifest := ""
	for i := 0; i < 3; i++ {
		if err := d.Set([]byte(fmt.Sprintf("k%d", i)), []byte("v"), Sync); err != nil {
			t.Fatal(err)
		}
		if err := d.Flush(); err != nil {
			t.Fatal(err)
		}
		manifest = fileName(fileKindManifest, d.manifest.num)
		st, err := fs.Stat("db/" + manifest)
		if err != nil {
			t.Fatal(err)
		}
		sizes = append(sizes, st.Size())
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	b := readMemFile(t, fs, "db/"+manifest)
	// Drop the last flush edit, as a truncation that happens to end on a
	// record boundary would.
	writeMemFile(t, fs, "db/"+manifest, b[:sizes[1]])
	_, err := Open("db", &Options{FS: fs})
	if !errors.Is(err, ErrCorruption) || !strings.Contains(err.Error(), manifest) {
		t.Fatalf("Open = %v, want ErrCorruption naming %s", err, manifest)
	}
	if rep, err := Check("db", &Options{FS: fs}); err != nil || rep.OK() {
		t.Fatalf("Check = %v, %v; want a problem", rep, err)
	}
}

// TestOpenCURRENTNamingMissingManifestIsCorruption: CURRENT that names a
// MANIFEST that does not exist is damage, not a missing database.
func TestOpenCURRENTNamingMissingManifestIsCorruption(t *testing.T) {
	fs := vfs.NewMem()
	d := openMem(t, fs, nil)
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	writeMemFile(t, fs, "db/CURRENT", []byte("MANIFEST-000099\n"))
	_, err := Open("db", &Options{FS: fs})
	if !errors.Is(err, ErrCorruption) || !strings.Contains(err.Error(), "MANIFEST-000099") {
		t.Fatalf("Open = %v, want ErrCorruption naming MANIFEST-000099", err)
	}
}
