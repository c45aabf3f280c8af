package kv

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/sievekv/sievekv/internal/base"
	"github.com/sievekv/sievekv/vfs"
)

// rdModel is the plain model of the DB's visible state.
type rdModel map[string]string

func (m rdModel) deleteRange(start, end string) {
	for k := range m {
		if k >= start && k < end {
			delete(m, k)
		}
	}
}

func (m rdModel) clone() rdModel {
	c := rdModel{}
	for k, v := range m {
		c[k] = v
	}
	return c
}

// reader is what DB and Snapshot share for the checks.
type reader interface {
	Get([]byte) ([]byte, error)
	NewIter(*IterOptions) *Iterator
}

// checkAgainst compares every Get of keys and a scan in both directions,
// with and without bounds, with the model.
func checkAgainst(t *testing.T, what string, db reader, m rdModel, keys []string, lower, upper string) {
	t.Helper()
	for _, k := range keys {
		v, err := db.Get([]byte(k))
		want, ok := m[k]
		switch {
		case ok && (err != nil || string(v) != want):
			t.Fatalf("%s: Get(%s) = %q, %v; want %q", what, k, v, err, want)
		case !ok && !errors.Is(err, ErrNotFound):
			t.Fatalf("%s: Get(%s) = %q, %v; want not found", what, k, v, err)
		}
	}
	var inRange []string
	for k := range m {
		if (lower == "" || k >= lower) && (upper == "" || k < upper) {
			inRange = append(inRange, k)
		}
	}
	// Sorted by key, not as "k=v": "k\x00=…" sorts before "k=…".
	slices.Sort(inRange)
	want := make([]string, len(inRange))
	for i, k := range inRange {
		want[i] = k + "=" + m[k]
	}
	o := &IterOptions{}
	if lower != "" {
		o.LowerBound = []byte(lower)
	}
	if upper != "" {
		o.UpperBound = []byte(upper)
	}
	it := db.NewIter(o)
	var fwd, back []string
	for ok := it.First(); ok; ok = it.Next() {
		fwd = append(fwd, string(it.Key())+"="+string(it.Value()))
	}
	for ok := it.Last(); ok; ok = it.Prev() {
		back = append(back, string(it.Key())+"="+string(it.Value()))
	}
	if err := it.Close(); err != nil {
		t.Fatalf("%s: iterator: %v", what, err)
	}
	slices.Reverse(back)
	if strings.Join(fwd, " ") != strings.Join(want, " ") {
		t.Fatalf("%s: forward scan [%s, %s)\n got %v\nwant %v", what, lower, upper, fwd, want)
	}
	if strings.Join(back, " ") != strings.Join(want, " ") {
		t.Fatalf("%s: backward scan [%s, %s)\n got %v\nwant %v", what, lower, upper, back, want)
	}
}

func rdKey(i int) string { return fmt.Sprintf("k%03d", i) }

// TestDeleteRangeEverywhere: one range deletion seen by Get and by
// iterators in both directions with bounds, from a snapshot taken before
// and one taken after, while it is in the memtable, after a flush, after a
// compaction and after a reopen.
func TestDeleteRangeEverywhere(t *testing.T) {
	opts := &Options{}
	d := openMem(t, vfs.NewMem(), opts) // sets opts.FS, which the reopen uses
	m := rdModel{}
	var keys []string
	for i := range 100 {
		keys = append(keys, rdKey(i))
		m[rdKey(i)] = fmt.Sprint(i)
		if err := d.Set([]byte(rdKey(i)), []byte(fmt.Sprint(i)), NoSync); err != nil {
			t.Fatal(err)
		}
	}
	// Half the keys in a table below, half in the memtable with the
	// tombstone.
	if err := d.Flush(); err != nil {
		t.Fatal(err)
	}
	before := d.NewSnapshot()
	defer before.Close()
	mBefore := m.clone()
	if err := d.DeleteRange([]byte(rdKey(20)), []byte(rdKey(60)), Sync); err != nil {
		t.Fatal(err)
	}
	m.deleteRange(rdKey(20), rdKey(60))
	// A write after the tombstone inside its range is visible.
	if err := d.Set([]byte(rdKey(30)), []byte("again"), NoSync); err != nil {
		t.Fatal(err)
	}
	m[rdKey(30)] = "again"
	after := d.NewSnapshot()
	defer after.Close()
	mAfter := m.clone()

	check := func(stage string) {
		for _, b := range [][2]string{{"", ""}, {rdKey(10), rdKey(70)}, {rdKey(25), rdKey(55)}, {rdKey(59), ""}} {
			checkAgainst(t, stage+" db", d, m, keys, b[0], b[1])
			checkAgainst(t, stage+" snapshot before", before, mBefore, keys, b[0], b[1])
			checkAgainst(t, stage+" snapshot after", after, mAfter, keys, b[0], b[1])
		}
	}
	check("memtable")
	if err := d.Flush(); err != nil {
		t.Fatal(err)
	}
	check("flushed")
	if err := d.Compact(nil, nil); err != nil {
		t.Fatal(err)
	}
	check("compacted")
	before.Close()
	after.Close()
	d = reopen(t, d, "db", opts)
	defer d.Close()
	checkAgainst(t, "reopened", d, m, keys, "", "")
	if err := d.Compact(nil, nil); err != nil {
		t.Fatal(err)
	}
	checkAgainst(t, "recompacted", d, m, keys, "", "")
}

// TestDeleteRangeReplayedFromWAL: a range deletion only in the WAL comes
// back on reopen.
func TestDeleteRangeReplayedFromWAL(t *testing.T) {
	fs := vfs.NewMem()
	d, err := Open("db", &Options{FS: fs})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 10 {
		d.Set([]byte(rdKey(i)), []byte("v"), NoSync)
	}
	d.Flush()
	if err := d.DeleteRange([]byte(rdKey(2)), []byte(rdKey(8)), Sync); err != nil {
		t.Fatal(err)
	}
	crashed := fs.CrashClone()
	d.Close()
	d, err = Open("db", &Options{FS: crashed})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	m := rdModel{}
	for _, i := range []int{0, 1, 8, 9} {
		m[rdKey(i)] = "v"
	}
	var keys []string
	for i := range 10 {
		keys = append(keys, rdKey(i))
	}
	checkAgainst(t, "after crash", d, m, keys, "", "")
}

// TestDeleteRangeInvalid: an empty or reversed range is a typed error, and
// a batch holding one writes nothing.
func TestDeleteRangeInvalid(t *testing.T) {
	d, err := Open("db", &Options{FS: vfs.NewMem()})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	for _, r := range [][2]string{{"b", "a"}, {"a", "a"}, {"", ""}} {
		if err := d.DeleteRange([]byte(r[0]), []byte(r[1]), NoSync); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("DeleteRange(%q, %q) = %v, want ErrInvalidArgument", r[0], r[1], err)
		}
	}
	b := d.NewBatch()
	b.Set([]byte("x"), []byte("1"))
	b.DeleteRange([]byte("z"), []byte("a"))
	if err := d.Apply(b, NoSync); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("Apply of a batch with a reversed range = %v, want ErrInvalidArgument", err)
	}
	if _, err := d.Get([]byte("x")); !errors.Is(err, ErrNotFound) {
		t.Fatalf("the rest of the rejected batch was applied: %v", err)
	}
	b.Reset()
	b.Set([]byte("x"), []byte("1"))
	if err := d.Apply(b, NoSync); err != nil {
		t.Fatalf("Reset must clear the batch's error: %v", err)
	}
	// A range from the empty key deletes everything below end.
	if err := d.DeleteRange(nil, []byte("y"), NoSync); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Get([]byte("x")); !errors.Is(err, ErrNotFound) {
		t.Fatalf("DeleteRange(nil, y) left x: %v", err)
	}
}

// TestDeleteRangeAtomicInBatch: a batch's range deletion and its other
// writes commit together, and the batch's own later writes inside the
// range survive it (each entry gets the next sequence number).
func TestDeleteRangeAtomicInBatch(t *testing.T) {
	d, err := Open("db", &Options{FS: vfs.NewMem()})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	for i := range 10 {
		d.Set([]byte(rdKey(i)), []byte("old"), NoSync)
	}
	snap := d.NewSnapshot()
	defer snap.Close()
	b := d.NewBatch()
	b.DeleteRange([]byte(rdKey(0)), []byte(rdKey(9)))
	b.Set([]byte(rdKey(5)), []byte("new"))
	if err := d.Apply(b, NoSync); err != nil {
		t.Fatal(err)
	}
	var keys []string
	for i := range 10 {
		keys = append(keys, rdKey(i))
	}
	checkAgainst(t, "batch", d, rdModel{rdKey(5): "new", rdKey(9): "old"}, keys, "", "")
	old := rdModel{}
	for _, k := range keys {
		old[k] = "old"
	}
	checkAgainst(t, "snapshot before the batch", snap, old, keys, "", "")
}

// TestDeleteRangeBeatsNewerTablesFilter is the filter-first trap: the key
// lives in a deep table, a newer table holds only the range tombstone, so
// that table's point filter says "absent" for the key. The Get must still
// answer not found, without reading a data block of the newer table.
func TestDeleteRangeBeatsNewerTablesFilter(t *testing.T) {
	d, err := Open("db", &Options{FS: vfs.NewMem(), DisableAutomaticCompactions: true})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	d.Set([]byte("deep"), []byte("v"), NoSync)
	d.Set([]byte("other"), []byte("v"), NoSync)
	if err := d.Compact(nil, nil); err != nil {
		t.Fatal(err)
	}
	d.Set([]byte("zzz"), []byte("v"), NoSync) // the newer table has a filter
	if err := d.DeleteRange([]byte("a"), []byte("n"), NoSync); err != nil {
		t.Fatal(err)
	}
	if err := d.Flush(); err != nil {
		t.Fatal(err)
	}
	tables, _ := d.Tables()
	if len(tables) != 2 || tables[0].Level != 0 {
		t.Fatalf("want one L0 table over one deep table, got %+v", tables)
	}
	tr, err := d.ExplainGet([]byte("deep"))
	if err != nil {
		t.Fatal(err)
	}
	if tr.Found {
		t.Fatalf("a key covered by a newer table's range tombstone was found:\n%s", tr)
	}
	if _, err := d.Get([]byte("other")); err != nil {
		t.Fatalf("a key outside the range: %v", err)
	}
}

// TestCompactionDropsRangeDeletedData: compaction at the bottom drops the
// covered entries and the tombstone itself, unless a snapshot still sees
// them, in which case it keeps both and the snapshot keeps reading them.
func TestCompactionDropsRangeDeletedData(t *testing.T) {
	d, err := Open("db", &Options{FS: vfs.NewMem(), DisableAutomaticCompactions: true})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	for i := range 1000 {
		d.Set([]byte(fmt.Sprintf("k%04d", i)), []byte("value"), NoSync)
	}
	if err := d.Compact(nil, nil); err != nil {
		t.Fatal(err)
	}
	snap := d.NewSnapshot()
	if err := d.DeleteRange([]byte("k0010"), []byte("k0990"), NoSync); err != nil {
		t.Fatal(err)
	}
	if err := d.Compact(nil, nil); err != nil {
		t.Fatal(err)
	}
	if got := tableEntries(t, d); got != 1000 {
		t.Fatalf("with a snapshot open, compaction left %d entries, want all 1000", got)
	}
	if v, err := snap.Get([]byte("k0500")); err != nil || string(v) != "value" {
		t.Fatalf("snapshot read after compaction: %q, %v", v, err)
	}
	snap.Close()
	if err := d.Compact(nil, nil); err != nil {
		t.Fatal(err)
	}
	if got := tableEntries(t, d); got != 20 {
		t.Fatalf("compaction left %d entries, want the 20 outside the range", got)
	}
	for _, ti := range mustTables(t, d) {
		h, err := d.tables.acquire(d.current.Levels[ti.Level][0])
		if err != nil {
			t.Fatal(err)
		}
		n := len(h.reader().RangeDels())
		h.release()
		if n != 0 {
			t.Fatalf("the bottom level still holds %d range tombstones", n)
		}
	}
	if _, err := d.Get([]byte("k0500")); !errors.Is(err, ErrNotFound) {
		t.Fatalf("deleted key after compaction: %v", err)
	}
}

func tableEntries(t *testing.T, d *DB) uint64 {
	var n uint64
	for _, ti := range mustTables(t, d) {
		n += ti.Entries
	}
	return n
}

// TestDeleteRangeRandomOps runs random writes, range deletions (alone and
// in batches), snapshots, flushes, compactions and reopens against the
// plain model, checking Gets and bounded scans in both directions.
func TestDeleteRangeRandomOps(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for round := range 4 {
		fs := vfs.NewMem()
		opts := &Options{FS: fs, MemTableSize: 2 << 10, L0CompactionThreshold: 2, TargetFileSize: 16 << 10}
		d, err := Open("db", opts)
		if err != nil {
			t.Fatal(err)
		}
		m := rdModel{}
		type snapModel struct {
			s *Snapshot
			m rdModel
		}
		var snaps []snapModel
		var keys []string
		for i := range 60 {
			keys = append(keys, rdKey(i))
		}
		key := func() string { return keys[r.IntN(len(keys))] }
		for step := range 400 {
			switch op := r.IntN(100); {
			case op < 45:
				k, v := key(), fmt.Sprintf("v%d.%d", round, step)
				if err := d.Set([]byte(k), []byte(v), NoSync); err != nil {
					t.Fatal(err)
				}
				m[k] = v
			case op < 55:
				k := key()
				d.Delete([]byte(k), NoSync)
				delete(m, k)
			case op < 65:
				a, b := key(), key()
				if a == b {
					continue
				}
				if a > b {
					a, b = b, a
				}
				if err := d.DeleteRange([]byte(a), []byte(b), NoSync); err != nil {
					t.Fatal(err)
				}
				m.deleteRange(a, b)
			case op < 72:
				bt := d.NewBatch()
				for range 1 + r.IntN(4) {
					if r.IntN(2) == 0 {
						a, b := key(), key()
						if a >= b {
							continue
						}
						bt.DeleteRange([]byte(a), []byte(b))
						m.deleteRange(a, b)
					} else {
						k, v := key(), fmt.Sprintf("b%d.%d", round, step)
						bt.Set([]byte(k), []byte(v))
						m[k] = v
					}
				}
				if err := d.Apply(bt, NoSync); err != nil {
					t.Fatal(err)
				}
			case op < 77:
				snaps = append(snaps, snapModel{d.NewSnapshot(), m.clone()})
			case op < 80 && len(snaps) > 0:
				i := r.IntN(len(snaps))
				snaps[i].s.Close()
				snaps = slices.Delete(snaps, i, i+1)
			case op < 86:
				if err := d.Flush(); err != nil {
					t.Fatal(err)
				}
			case op < 91:
				a, b := key(), key()
				if a > b {
					a, b = b, a
				}
				if err := d.Compact([]byte(a), []byte(b)); err != nil {
					t.Fatal(err)
				}
			case op < 94:
				for _, s := range snaps {
					s.s.Close()
				}
				snaps = nil
				if err := d.Close(); err != nil {
					t.Fatal(err)
				}
				if d, err = Open("db", opts); err != nil {
					t.Fatal(err)
				}
			default:
				lo, hi := key(), key()
				if lo > hi {
					lo, hi = hi, lo
				}
				checkAgainst(t, fmt.Sprintf("round %d step %d", round, step), d, m, keys, lo, hi)
				for i, s := range snaps {
					checkAgainst(t, fmt.Sprintf("round %d step %d snapshot %d", round, step, i), s.s, s.m, keys, "", "")
				}
			}
		}
		checkAgainst(t, fmt.Sprintf("round %d end", round), d, m, keys, "", "")
		for _, s := range snaps {
			s.s.Close()
		}
		rep, err := d.checkAfterClose(t)
		if err != nil {
			t.Fatal(err)
		}
		if !rep.OK() {
			t.Fatalf("round %d: Check:\n%s", round, rep)
		}
	}
}

// checkAfterClose closes d and runs Check on its directory.
func (d *DB) checkAfterClose(t *testing.T) (*CheckReport, error) {
	fs := d.fs
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	return Check("db", &Options{FS: fs})
}

// TestDeleteRangeSpanningCompactionOutputs: a tombstone that must be kept
// (a snapshot sees what it covers) and whose range spans what would be
// several output tables keeps the level's tables disjoint: the output is
// not cut inside the tombstone's range.
func TestDeleteRangeSpanningCompactionOutputs(t *testing.T) {
	d, err := Open("db", &Options{FS: vfs.NewMem(), DisableAutomaticCompactions: true, TargetFileSize: 16 << 10})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	r := rand.New(rand.NewPCG(7, 8))
	for i := range 1000 {
		value := make([]byte, 200) // incompressible, so the output is cut often
		for j := range value {
			value[j] = byte(r.Uint32())
		}
		d.Set([]byte(fmt.Sprintf("k%04d", i)), value, NoSync)
	}
	if err := d.Compact(nil, nil); err != nil {
		t.Fatal(err)
	}
	snap := d.NewSnapshot()
	defer snap.Close()
	if err := d.DeleteRange([]byte("k0100"), []byte("k0900"), NoSync); err != nil {
		t.Fatal(err)
	}
	if err := d.Compact(nil, nil); err != nil {
		t.Fatalf("compaction with a tombstone spanning outputs: %v", err)
	}
	if n := len(mustTables(t, d)); n < 3 {
		t.Fatalf("only %d output tables: the test needs the output cut around the range", n)
	}
	for _, k := range []string{"k0099", "k0100", "k0500", "k0899", "k0900"} {
		_, err := d.Get([]byte(k))
		deleted := k >= "k0100" && k < "k0900"
		if deleted != errors.Is(err, ErrNotFound) || (!deleted && err != nil) {
			t.Errorf("Get(%s) = %v, deleted=%v", k, err, deleted)
		}
		if v, err := snap.Get([]byte(k)); err != nil || len(v) != 200 {
			t.Errorf("snapshot Get(%s) = %v", k, err)
		}
	}
}

// TestDecodeBatchRangeDelete: a range deletion round-trips through the
// batch encoding as one entry, and a decoded empty or reversed range is
// corruption, never a tombstone that a flush could not write.
func TestDecodeBatchRangeDelete(t *testing.T) {
	b := newBatch()
	b.Set([]byte("a"), []byte("1"))
	b.DeleteRange([]byte("b"), []byte("d"))
	b.setSeq(10)
	var got []string
	_, n, err := decodeBatch(b.data, func(seq base.SeqNum, e batchEntry) error {
		got = append(got, fmt.Sprintf("%d %s %s %s", seq, e.Kind, e.Key, e.Value))
		return nil
	})
	if err != nil || n != 2 || strings.Join(got, "; ") != "10 SET a 1; 11 RANGEDEL b d" {
		t.Fatalf("decoded %d entries %q, %v", n, got, err)
	}
	reversed := newBatch()
	reversed.add(base.KindRangeDelete, []byte("d"), []byte("b"))
	reversed.setSeq(1)
	if _, _, err := decodeBatch(reversed.data, nil); !errors.Is(err, ErrCorruption) {
		t.Fatalf("reversed range in a batch: %v, want corruption", err)
	}
}
