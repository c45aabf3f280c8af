package kv

import (
	"fmt"
	"sync"
	"testing"

	"github.com/sievekv/sievekv/internal/base"
	"github.com/sievekv/sievekv/internal/manifest"
	"github.com/sievekv/sievekv/vfs"
)

// TestCompactDropsVersionsASnapshotKeptAtTheBottom: versions a snapshot
// kept at the bottom, in tables with no tombstone, go once the snapshot
// is released and the range compacted again (compaction's C1): Compact
// drops what no open snapshot needs. The level-by-level Compact rewrote
// only the bottom tables holding tombstones, so these older versions
// stayed (the old Compact rewrote every table in range).
func TestCompactDropsVersionsASnapshotKeptAtTheBottom(t *testing.T) {
	d := openMem(t, vfs.NewMem(), &Options{DisableAutomaticCompactions: true})
	defer d.Close()
	const n = 100
	key := func(i int) []byte { return fmt.Appendf(nil, "k%04d", i) }
	set := func(round int) {
		for i := range n {
			if err := d.Set(key(i), fmt.Appendf(nil, "v%d", round), nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	entries := func() (n uint64) {
		v := refCurrent(d)
		defer v.Unref()
		for l, ts := range v.Levels {
			for _, tm := range ts {
				if l != NumLevels-1 {
					t.Fatalf("table %d left at L%d", tm.FileNum, l)
				}
				n += tm.Entries()
			}
		}
		return n
	}
	compact := func(wantSteps uint64) {
		t.Helper()
		before := d.Metrics().Compaction.Manual
		if err := d.Compact(nil, nil); err != nil {
			t.Fatal(err)
		}
		if got := d.Metrics().Compaction.Manual - before; got != wantSteps {
			t.Errorf("Compact ran %d steps, want %d", got, wantSteps)
		}
	}
	set(0)
	s := d.NewSnapshot()
	set(1)
	// L0 into the bottom; its outputs, written with the snapshot open,
	// are not rewritten again at once.
	compact(1)
	if got := entries(); got != 2*n {
		t.Fatalf("with the snapshot open: %d entries at the bottom, want %d", got, 2*n)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	compact(1)
	if got := entries(); got != n {
		t.Errorf("snapshot released, then Compact: %d entries at the bottom, want %d", got, n)
	}
	// Nothing left to drop: a live range alone is not rewritten.
	compact(0)
	for i := range n {
		if v, err := d.Get(key(i)); err != nil || string(v) != "v1" {
			t.Fatalf("Get(%s) = %q, %v", key(i), v, err)
		}
	}
}

// TestCompactUnderASnapshotWritesTheBottomOnce: with a snapshot open, the
// tombstones it needs stay in the outputs of Compact's step into the
// bottom; the last step must not rewrite those outputs again (they were
// written with the same snapshots, a rewrite drops nothing). It did,
// writing the range's bottom twice per Compact while any snapshot was
// open.
func TestCompactUnderASnapshotWritesTheBottomOnce(t *testing.T) {
	d, key := hundredKeysAtL0(t)
	defer d.Close()
	s := d.NewSnapshot()
	defer s.Close()
	for i := 0; i < 100; i += 2 {
		if err := d.Delete(key(i), nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.DeleteRange(key(50), key(60), nil); err != nil {
		t.Fatal(err)
	}
	before := d.Metrics()
	if err := d.Compact(nil, nil); err != nil {
		t.Fatal(err)
	}
	after := d.Metrics()
	if steps := after.Compaction.Manual - before.Compaction.Manual; steps != 1 {
		t.Errorf("Compact ran %d steps, want 1 (L0 into the bottom)", steps)
	}
	if v, err := s.Get(key(0)); err != nil || string(v) != "v" {
		t.Fatalf("snapshot Get = %q, %v", v, err)
	}
}

// TestCompactRewritesItsOutputsOnceTheirSnapshotGoes: a snapshot released
// while Compact's step into the bottom runs leaves that step's outputs
// holding tombstones no one needs; the last step rewrites them after all,
// so Compact still returns with none in its range.
func TestCompactRewritesItsOutputsOnceTheirSnapshotGoes(t *testing.T) {
	d, key := hundredKeysAtL0(t)
	defer d.Close()
	s := d.NewSnapshot()
	for i := range 100 {
		if err := d.Delete(key(i), nil); err != nil {
			t.Fatal(err)
		}
	}
	var once sync.Once
	hook := shadowAuditHook(func(cd *DB, _ *manifest.Version, outputLevel int, _ []levelTable,
		inner func(base.InternalKey, []byte, base.SeqNum) bool) func(base.InternalKey, []byte, base.SeqNum) bool {
		if cd == d {
			// Mid-step: the step picked its snapshots already.
			once.Do(func() {
				if err := s.Close(); err != nil {
					t.Error(err)
				}
			})
		}
		return inner
	})
	testShadowAudit.Store(&hook)
	defer testShadowAudit.Store(nil)
	before := d.Metrics().Compaction.Manual
	if err := d.Compact(nil, nil); err != nil {
		t.Fatal(err)
	}
	if steps := d.Metrics().Compaction.Manual - before; steps != 2 {
		t.Errorf("Compact ran %d steps, want 2 (L0 into the bottom, and its outputs again)", steps)
	}
	v := refCurrent(d)
	defer v.Unref()
	for l, ts := range v.Levels {
		for _, tm := range ts {
			t.Errorf("L%d table %06d left with %d entries (%d tombstones)", l, tm.FileNum, tm.Entries(), tm.NumDeletions())
		}
	}
}

// hundredKeysAtL0 opens a DB without automatic compactions whose
// memtable holds key(0) .. key(99), each set to "v".
func hundredKeysAtL0(t *testing.T) (*DB, func(int) []byte) {
	t.Helper()
	d := openMem(t, vfs.NewMem(), &Options{DisableAutomaticCompactions: true})
	key := func(i int) []byte { return fmt.Appendf(nil, "k%04d", i) }
	for i := range 100 {
		if err := d.Set(key(i), []byte("v"), nil); err != nil {
			t.Fatal(err)
		}
	}
	return d, key
}
