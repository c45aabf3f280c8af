package kv

import (
	"errors"
	"fmt"
	"testing"

	"github.com/sievekv/sievekv/vfs"
	"github.com/sievekv/sievekv/vfs/errorfs"
)

// sweepKeys are the writes of sweepImage: k000-k059 in tables, k060-k089
// in the WAL only, and [k010, k020) range-deleted in the WAL.
func sweepWant(i int) (string, bool) {
	return fmt.Sprintf("v%03d", i), i < 10 || i >= 20
}

// sweepImage is a DB as a power loss leaves it: tables, a MANIFEST, and a
// WAL of synced writes that Open must replay.
func sweepImage(t *testing.T) *vfs.MemFS {
	mem := vfs.NewMem()
	d := openMem(t, mem, &Options{MemTableSize: 4 << 10})
	for i := range 90 {
		if err := d.Set(fmt.Appendf(nil, "k%03d", i), fmt.Appendf(nil, "v%03d", i), Sync); err != nil {
			t.Fatal(err)
		}
		if i == 59 {
			if err := d.Flush(); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := d.DeleteRange([]byte("k010"), []byte("k020"), Sync); err != nil {
		t.Fatal(err)
	}
	img := mem.CrashClone()
	d.Close()
	return img
}

// checkSweepDB opens fs without faults and checks every key.
func checkSweepDB(t *testing.T, label string, fs vfs.FS, dir string) {
	t.Helper()
	d, err := Open(dir, &Options{FS: fs})
	if err != nil {
		t.Fatalf("%s: reopen without faults: %v", label, err)
	}
	defer d.Close()
	for i := range 90 {
		want, live := sweepWant(i)
		v, err := d.Get(fmt.Appendf(nil, "k%03d", i))
		switch {
		case live && (err != nil || string(v) != want):
			t.Fatalf("%s: k%03d = %q, %v; want %s", label, i, v, err, want)
		case !live && !errors.Is(err, ErrNotFound):
			t.Fatalf("%s: range-deleted k%03d = %q, %v", label, i, v, err)
		}
	}
}

// TestOpenFaultSweep fails each file-system operation of an Open that
// recovers a crashed DB (WAL replay, its flush, the new MANIFEST and
// CURRENT, removing the obsolete files), once and from then on: Open
// either works or fails with the injected error, and both the files left
// and their power-loss image then open with every synced write.
func TestOpenFaultSweep(t *testing.T) {
	img := sweepImage(t)
	total := countSweepOps(t, img, "the recovering Open", 20, nil)
	forEachFault(total, func(n int64, sticky bool, label string) {
		mem := img.CrashClone()
		efs := errorfs.Wrap(mem, errorfs.OpAll)
		efs.FailAt(n, sticky)
		d, err := Open("db", &Options{FS: efs})
		if err == nil {
			if _, gerr := d.Get([]byte("k000")); gerr != nil && !errors.Is(gerr, errorfs.ErrInjected) {
				t.Fatalf("%s: Get after Open: %v", label, gerr)
			}
			if cerr := d.Close(); cerr != nil && !errors.Is(cerr, errorfs.ErrInjected) && !errors.Is(cerr, ErrReadOnly) {
				t.Fatalf("%s: Close: %v", label, cerr)
			}
		} else if !errors.Is(err, errorfs.ErrInjected) {
			t.Fatalf("%s (%s): Open = %v, want the injected error", label, efs.LastInjected(), err)
		}
		label += ": " + efs.LastInjected()
		checkSweepDB(t, label+", power loss after", mem.CrashClone(), "db")
		checkSweepDB(t, label, mem, "db")
	})
}

// TestCheckpointFaultSweep fails each file-system operation of a
// Checkpoint, once and from then on: the Checkpoint fails with the
// injected error (or a sticky ErrReadOnly its flush left) and leaves no
// directory, or works and its directory opens with every write, also
// after a power loss; the source always reopens whole.
func TestCheckpointFaultSweep(t *testing.T) {
	img := sweepImage(t)
	total := countSweepOps(t, img, "the Checkpoint", 10, func(d *DB) {
		if err := d.Checkpoint("cp"); err != nil {
			t.Fatal(err)
		}
	})
	forEachFault(total, func(n int64, sticky bool, label string) {
		mem := img.CrashClone()
		efs := errorfs.Wrap(mem, errorfs.OpAll)
		d, err := Open("db", &Options{FS: efs})
		if err != nil {
			t.Fatal(err)
		}
		efs.Reset()
		efs.FailAt(n, sticky)
		err = d.Checkpoint("cp")
		label += ": " + efs.LastInjected()
		efs.FailAt(0, false)
		d.Close()
		switch {
		case err == nil:
			checkSweepDB(t, label+": checkpoint after power loss", mem.CrashClone(), "cp")
		case !errors.Is(err, errorfs.ErrInjected) && !errors.Is(err, ErrReadOnly):
			t.Fatalf("%s: Checkpoint = %v, want the injected error", label, err)
		default:
			if names, lerr := mem.List("cp"); lerr == nil && !sticky {
				t.Fatalf("%s: the failed Checkpoint left cp holding %q", label, names)
			}
		}
		checkSweepDB(t, label+": source", mem, "db")
	})
}

// countSweepOps counts the file-system operations a sweep fails one by
// one: those of an Open of a crash image of img, or, when op is not nil,
// those of op on the opened DB. Fewer than least means the sweep would
// test too little (what names the operation in the failure).
func countSweepOps(t *testing.T, img *vfs.MemFS, what string, least int64, op func(*DB)) int64 {
	t.Helper()
	count := errorfs.Wrap(img.CrashClone(), errorfs.OpAll)
	d, err := Open("db", &Options{FS: count})
	if err != nil {
		t.Fatal(err)
	}
	total := count.Count()
	if op != nil {
		count.Reset()
		op(d)
		total = count.Count()
	}
	d.Close()
	t.Logf("%d operations", total)
	if total < least {
		t.Fatalf("%s made only %d file-system operations", what, total)
	}
	return total
}

// forEachFault calls run for every file-system operation 1..total of a
// sweep, failing it once and then failing it and every later one
// (sticky), with a label naming the case.
func forEachFault(total int64, run func(n int64, sticky bool, label string)) {
	for _, sticky := range []bool{false, true} {
		for n := int64(1); n <= total; n++ {
			run(n, sticky, fmt.Sprintf("fail op %d/%d (sticky %v)", n, total, sticky))
		}
	}
}
