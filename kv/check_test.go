package kv

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/sievekv/sievekv/vfs"
)

func readMemFile(t *testing.T, fs vfs.FS, name string) []byte {
	t.Helper()
	f, err := fs.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, _ := f.Stat()
	b := make([]byte, st.Size())
	if _, err := f.ReadAt(b, 0); err != nil && err != io.EOF {
		t.Fatal(err)
	}
	return b
}

func writeMemFile(t *testing.T, fs vfs.FS, name string, b []byte) {
	t.Helper()
	f, err := fs.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(b); err != nil {
		t.Fatal(err)
	}
	f.Sync()
	f.Close()
}

// buildCheckDB writes a DB with tables at L0 and L6 and a WAL holding
// unflushed writes, closes it, and returns its FS and file names.
func buildCheckDB(t *testing.T) (*vfs.MemFS, []string) {
	t.Helper()
	fs := vfs.NewMem()
	// Automatic compactions off: the test wants tables left at L0.
	d, err := Open("db", &Options{FS: fs, MemTableSize: 4 << 10, BlockSize: 256, DisableAutomaticCompactions: true})
	if err != nil {
		t.Fatal(err)
	}
	put := func(lo, hi int) {
		for i := lo; i < hi; i++ {
			if err := d.Set([]byte(fmt.Sprintf("key%05d", i)), []byte(strings.Repeat("v", i%50)), NoSync); err != nil {
				t.Fatal(err)
			}
		}
	}
	put(0, 300)
	if err := d.Compact(nil, nil); err != nil {
		t.Fatal(err)
	}
	put(200, 400)
	if err := d.Flush(); err != nil {
		t.Fatal(err)
	}
	put(400, 420)
	if err := d.Delete([]byte("key00001"), Sync); err != nil {
		t.Fatal(err)
	}
	// A second synced record: its chunk's synced-through mark proves the
	// records before it were durable, so damage there is corruption, not
	// a torn tail (wal's W4).
	if err := d.Set([]byte("last"), []byte("x"), Sync); err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	names, _ := fs.List("db")
	return fs, names
}

func firstWithSuffix(names []string, suffix string) string {
	for _, n := range names {
		if strings.HasSuffix(n, suffix) {
			return n
		}
	}
	return ""
}

func TestCheckHealthyDB(t *testing.T) {
	fs, _ := buildCheckDB(t)
	rep, err := Check("db", &Options{FS: fs})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK() {
		t.Fatalf("healthy DB has problems:\n%s", rep)
	}
	if rep.Tables < 2 || rep.Levels[NumLevels-1] == 0 || rep.Levels[0] == 0 {
		t.Fatalf("want tables at L0 and L6:\n%s", rep)
	}
	if rep.Entries < 400 || rep.WALs != 1 || rep.WALRecords != 22 || rep.LastSeq != 522 {
		t.Fatalf("counts wrong:\n%s", rep)
	}
	// Check does not change the DB: it opens cleanly with every write.
	d := openMem(t, fs, nil)
	defer d.Close()
	if v, err := d.Get([]byte("key00419")); err != nil || len(v) != 419%50 {
		t.Fatalf("Get after Check: %q %v", v, err)
	}
	if _, err := d.Get([]byte("key00001")); !errors.Is(err, ErrNotFound) {
		t.Fatalf("deleted key: %v", err)
	}
}

func TestCheckRefusesAnOpenDB(t *testing.T) {
	fs := vfs.NewMem()
	d := openMem(t, fs, nil)
	defer d.Close()
	if _, err := Check("db", &Options{FS: fs}); !errors.Is(err, vfs.ErrLocked) {
		t.Fatalf("Check of an open DB = %v, want ErrLocked", err)
	}
	if _, err := Check("nothing", &Options{FS: fs}); err == nil {
		t.Fatal("Check of a missing DB succeeded")
	}
}

// TestCheckFindsDamage damages one file per case and wants a problem
// wrapping ErrCorruption that names the file.
func TestCheckFindsDamage(t *testing.T) {
	cases := []struct {
		name   string
		damage func(t *testing.T, fs *vfs.MemFS, names []string) string // returns the file to be named
	}{
		{"table-byte-flip", func(t *testing.T, fs *vfs.MemFS, names []string) string {
			n := firstWithSuffix(names, ".sst")
			b := readMemFile(t, fs, "db/"+n)
			b[len(b)/3] ^= 0x40
			writeMemFile(t, fs, "db/"+n, b)
			return n
		}},
		{"table-truncated", func(t *testing.T, fs *vfs.MemFS, names []string) string {
			n := firstWithSuffix(names, ".sst")
			b := readMemFile(t, fs, "db/"+n)
			writeMemFile(t, fs, "db/"+n, b[:len(b)-10])
			return n
		}},
		{"table-missing", func(t *testing.T, fs *vfs.MemFS, names []string) string {
			n := firstWithSuffix(names, ".sst")
			fs.Remove("db/" + n)
			return n
		}},
		{"manifest-byte-flip", func(t *testing.T, fs *vfs.MemFS, names []string) string {
			n := firstWithSuffix(names, "MANIFEST-")
			for _, x := range names {
				if strings.HasPrefix(x, "MANIFEST-") {
					n = x
				}
			}
			b := readMemFile(t, fs, "db/"+n)
			b[10] ^= 1
			writeMemFile(t, fs, "db/"+n, b)
			return n
		}},
		{"current-garbage", func(t *testing.T, fs *vfs.MemFS, names []string) string {
			writeMemFile(t, fs, "db/CURRENT", []byte("nonsense"))
			return "CURRENT"
		}},
		{"current-missing", func(t *testing.T, fs *vfs.MemFS, names []string) string {
			fs.Remove("db/CURRENT")
			return "CURRENT"
		}},
		{"wal-byte-flip-mid", func(t *testing.T, fs *vfs.MemFS, names []string) string {
			n := firstWithSuffix(names, ".log")
			b := readMemFile(t, fs, "db/"+n)
			b[20] ^= 0x10 // inside the first record, valid records follow
			writeMemFile(t, fs, "db/"+n, b)
			return n
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fs, names := buildCheckDB(t)
			file := c.damage(t, fs, names)
			rep, err := Check("db", &Options{FS: fs})
			if err != nil {
				t.Fatal(err)
			}
			if rep.OK() {
				t.Fatalf("no problem found:\n%s", rep)
			}
			for _, p := range rep.Problems {
				if !errors.Is(p, ErrCorruption) {
					t.Errorf("problem does not wrap ErrCorruption: %v", p)
				}
			}
			if !strings.Contains(rep.Err().Error(), file) {
				t.Errorf("problems do not name %s:\n%s", file, rep)
			}
			// The engine agrees: Open, or a full scan after it, reports
			// the same damage as corruption (a data block is only read
			// when a read needs it).
			d, err := Open("db", &Options{FS: fs})
			if err == nil {
				it := d.NewIter(nil)
				for it.First(); it.Valid(); it.Next() {
				}
				err = it.Close()
				d.Close()
			}
			if !errors.Is(err, ErrCorruption) || !strings.Contains(err.Error(), file) {
				t.Errorf("Open+scan = %v, want ErrCorruption naming %s", err, file)
			}
		})
	}
}

// TestCheckTornWALTailIsANote: a cut-off last record is what a crash
// leaves, so it is noted, not a problem.
func TestCheckTornWALTailIsANote(t *testing.T) {
	fs, names := buildCheckDB(t)
	n := firstWithSuffix(names, ".log")
	b := readMemFile(t, fs, "db/"+n)
	writeMemFile(t, fs, "db/"+n, b[:len(b)-3])
	rep, err := Check("db", &Options{FS: fs})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK() || len(rep.Notes) == 0 || rep.WALRecords != 21 {
		t.Fatalf("want OK with a torn-tail note and 21 records:\n%s", rep)
	}
}

func TestCheckNotesOrphanTable(t *testing.T) {
	fs, names := buildCheckDB(t)
	b := readMemFile(t, fs, "db/"+firstWithSuffix(names, ".sst"))
	writeMemFile(t, fs, "db/999999.sst", b)
	rep, err := Check("db", &Options{FS: fs})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK() || !strings.Contains(strings.Join(rep.Notes, "\n"), "999999.sst") {
		t.Fatalf("want OK with an orphan note:\n%s", rep)
	}
}

// Check only reads: pointed at a directory holding no database it says so
// and leaves the directory as it was (it used to create LOCK there), and
// it checks a database it may only read, beside a read-only open.
func TestCheckWritesNothing(t *testing.T) {
	fs := vfs.NewMem()
	if err := fs.MkdirAll("empty", 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := Check("empty", &Options{FS: fs}); err == nil {
		t.Fatal("Check of a directory without a database succeeded")
	}
	if names, err := fs.List("empty"); err != nil || len(names) != 0 {
		t.Fatalf("Check left %v (%v) in a directory without a database", names, err)
	}

	fs, _ = buildCheckDB(t)
	r, err := Open("db", &Options{FS: fs, ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	rep, err := Check("db", &Options{FS: fs})
	if err != nil {
		t.Fatalf("Check beside a read-only open: %v", err)
	}
	if !rep.OK() {
		t.Fatalf("healthy DB has problems:\n%s", rep)
	}
}
