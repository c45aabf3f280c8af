package kv

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/sievekv/sievekv/vfs"
	"github.com/sievekv/sievekv/vfs/errorfs"
)

// TestIdlePurgeFaultSweep fails each file operation an idle purge makes
// (table creates, writes and syncs, the MANIFEST append and sync, the
// directory sync, the removal of its inputs), once and from there on (a
// dead disk): the failure is either harmless (a removal of an obsolete
// file) or sticky (every later write ErrReadOnly wrapping the injected
// error, Metrics.BackgroundErrors counting it), reads stay right, and
// after reopening on a sound disk nothing is lost and the deletes still
// hold.
func TestIdlePurgeFaultSweep(t *testing.T) {
	withTickInterval(t, time.Hour) // the test's own d.tick calls only
	setup := func() (*errorfs.FS, vfs.FS, *DB) { return idlePurgeSetup(t) }
	const n = idlePurgeKeys
	deleted := idlePurgeDeleted

	purge := func(d *DB) {
		d.tick()
		d.tick() // idle since the last tick: the purge starts
		waitFor(t, "the idle purge", func() bool {
			m := d.Metrics()
			return !m.Compaction.InProgress && (m.Compaction.IdlePurges > 0 || m.BackgroundErrors > 0)
		})
	}
	// Count the purge's operations on a sound disk.
	efs, _, d := setup()
	purge(d)
	ops := efs.Count()
	if d.Metrics().Compaction.IdlePurges == 0 || ops == 0 {
		t.Fatalf("the purge ran no operation (%d) or did not run", ops)
	}
	d.Close()

	for at := int64(1); at <= ops; at++ {
		for _, sticky := range []bool{false, true} {
			t.Run(fmt.Sprintf("op%d-sticky%v", at, sticky), func(t *testing.T) {
				efs, mem, d := setup()
				efs.FailAt(at, sticky)
				purge(d)
				if efs.Injected() == 0 {
					t.Fatalf("operation %d of %d never ran", at, ops)
				}
				what := efs.LastInjected()
				m := d.Metrics()
				if m.BackgroundErrors > 0 {
					err := d.Set([]byte("after"), []byte("x"), NoSync)
					if !errors.Is(err, ErrReadOnly) || !errors.Is(err, errorfs.ErrInjected) {
						t.Fatalf("%s failed: a write after it = %v, want ErrReadOnly wrapping the injected error", what, err)
					}
				}
				checkDeleted(t, d, n, deleted)
				efs.FailAt(0, false)
				d.Close()
				d2, err := Open("db", &Options{FS: mem})
				if err != nil {
					t.Fatalf("%s failed: reopen: %v", what, err)
				}
				defer d2.Close()
				checkDeleted(t, d2, n, deleted)
				it := d2.NewIter(nil)
				kept := 0
				for ok := it.First(); ok; ok = it.Next() {
					kept++
				}
				if err := it.Close(); err != nil {
					t.Fatal(err)
				}
				if want := n - n/25; kept != want && kept != want+1 { // +1: "after"
					t.Fatalf("%s failed: %d keys after reopening, want %d", what, kept, want)
				}
			})
		}
	}
}

const idlePurgeKeys = 300

func idlePurgeDeleted(i int) bool { return i%25 == 3 }

// idlePurgeSetup returns a DB whose only due work is an idle purge of a
// lone L0 table of tombstones, on an FS that counts mutating operations
// (the inner FS returned beside it), the count reset.
func idlePurgeSetup(t *testing.T) (*errorfs.FS, vfs.FS, *DB) {
	t.Helper()
	const n = idlePurgeKeys
	deleted := idlePurgeDeleted
	mem := vfs.NewMem()
	efs := errorfs.Wrap(mem, errorfs.OpMutating)
	d := bottomDB(t, &Options{FS: efs, MemTableSize: 1 << 20, TombstoneMaxAge: -1}, n)
	deleteAndFlush(t, d, n, deleted)
	if !d.Metrics().Compaction.IdlePurgePending {
		t.Fatal("no idle purge pending")
	}
	// The flush's rotation has the next WAL created ahead in the
	// background (wal_prepare.go); counted in the purge's window, its
	// create and directory sync made the sweep expect two operations a
	// later run did not make.
	waitPreparedLog(t, d)
	efs.Reset()
	return efs, mem, d
}

// TestIdlePurgeRacingClose closes the DB at moments from before the idle
// purge starts to after it ends: Close returns nil, waits for the purge,
// and the reopened DB holds every key and every delete.
func TestIdlePurgeRacingClose(t *testing.T) {
	withTickInterval(t, time.Hour)
	rounds := 12
	if raceEnabled {
		rounds = 6
	}
	for r := 0; r < rounds; r++ {
		_, mem, d := idlePurgeSetup(t)
		d.tick()
		done := make(chan struct{})
		go func() {
			defer close(done)
			d.tick() // starts the purge
		}()
		time.Sleep(time.Duration(r) * 300 * time.Microsecond)
		if err := d.Close(); err != nil {
			t.Fatalf("round %d: Close: %v", r, err)
		}
		<-done
		d2, err := Open("db", &Options{FS: mem})
		if err != nil {
			t.Fatalf("round %d: reopen: %v", r, err)
		}
		checkDeleted(t, d2, idlePurgeKeys, idlePurgeDeleted)
		if err := d2.Close(); err != nil {
			t.Fatal(err)
		}
	}
}
