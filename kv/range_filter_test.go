package kv

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/sievekv/sievekv/vfs"
)

// scanAll returns the keys and values an iterator over [lower, upper)
// yields forward, then backward, then from a SeekGE and a SeekLT at seek.
func scanAll(t *testing.T, d *DB, lower, upper, seek []byte) string {
	t.Helper()
	it := d.NewIter(&IterOptions{LowerBound: lower, UpperBound: upper})
	var b strings.Builder
	for ok := it.First(); ok; ok = it.Next() {
		fmt.Fprintf(&b, "%s=%s ", it.Key(), it.Value())
	}
	b.WriteString("| ")
	for ok := it.Last(); ok; ok = it.Prev() {
		fmt.Fprintf(&b, "%s ", it.Key())
	}
	b.WriteString("| ")
	if it.SeekGE(seek) {
		fmt.Fprintf(&b, "ge %s ", it.Key())
		if it.Next() {
			fmt.Fprintf(&b, "next %s ", it.Key())
		}
	}
	if it.SeekLT(seek) {
		fmt.Fprintf(&b, "lt %s ", it.Key())
		if it.Prev() {
			fmt.Fprintf(&b, "prev %s ", it.Key())
		}
	}
	if err := it.Close(); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func idKey(id int) []byte { return fmt.Appendf(nil, "user%08d", id) }

// TestRangeFilterScansIdentical checks that range filters change no scan's
// answer (no false negative reaches the engine) through flushes into L0,
// compactions into deeper levels and a reopen, and that they do rule
// tables out.
func TestRangeFilterScansIdentical(t *testing.T) {
	rng := rand.New(rand.NewPCG(22, 20))
	fs := vfs.NewMem()
	open := func(dir string, bits float64) *DB {
		d, err := Open(dir, &Options{FS: fs, RangeFilterBitsPerKey: bits, MemTableSize: 64 << 10,
			BlockCacheSize: -1, DisableAutomaticCompactions: true})
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	plain, withRF := open("plain", 0), open("rf", 16)
	both := func(fn func(d *DB) error) {
		for _, d := range []*DB{plain, withRF} {
			if err := fn(d); err != nil {
				t.Fatal(err)
			}
		}
	}
	// Ids in runs and holes, written in rounds: each round lands in an L0
	// table; the first rounds are compacted into the bottom level.
	for round := 0; round < 6; round++ {
		for id := rng.IntN(3000); id < 60_000; id += 1 + rng.IntN(40) {
			if rng.IntN(8) == 0 {
				id += 2000 // a hole
			}
			k, v := idKey(id), fmt.Appendf(nil, "v%d.%d", id, round)
			del := rng.IntN(10) == 0
			both(func(d *DB) error {
				if del {
					return d.Delete(k, nil)
				}
				return d.Set(k, v, nil)
			})
		}
		both(func(d *DB) error { return d.Flush() })
		if round == 2 {
			both(func(d *DB) error { return d.Compact(nil, nil) })
		}
	}
	check := func(stage string) {
		for q := 0; q < 300; q++ {
			lo := rng.IntN(62_000)
			w := []int{1, 9, 180, 400, 3000}[rng.IntN(5)]
			lower, upper, seek := idKey(lo), idKey(lo+w), idKey(lo+rng.IntN(w))
			if want, got := scanAll(t, plain, lower, upper, seek), scanAll(t, withRF, lower, upper, seek); want != got {
				t.Fatalf("%s: scan [%s, %s) differs with range filters:\nwant %s\ngot  %s", stage, lower, upper, want, got)
			}
		}
	}
	check("after writes")
	m := withRF.Metrics()
	if m.Filter.RangeChecks == 0 || m.Filter.RangeNegatives == 0 || m.Filter.RangeBytes == 0 {
		t.Fatalf("range filters unused: %+v", m.Filter)
	}
	if pm := plain.Metrics(); pm.Filter.RangeChecks != 0 || pm.Filter.RangeBytes != 0 {
		t.Fatalf("DB without range filters reports some: %+v", pm.Filter)
	}
	both(func(d *DB) error { return d.Close() })
	plain, withRF = open("plain", 0), open("rf", 16)
	check("after reopen")
	both(func(d *DB) error { return d.Compact(nil, nil) })
	check("after full compaction")
	both(func(d *DB) error { return d.Close() })
}

// TestRangeFilterEmptyScanReadsNoBlock checks the point of range filters:
// a bounded scan of an empty id range reads no data block, while the same
// DB without them reads one per overlapping table.
func TestRangeFilterEmptyScanReadsNoBlock(t *testing.T) {
	reads := map[float64]uint64{}
	for _, bits := range []float64{0, 16} {
		d, err := Open("db", &Options{FS: vfs.NewMem(), RangeFilterBitsPerKey: bits, BlockCacheSize: -1,
			DisableAutomaticCompactions: true})
		if err != nil {
			t.Fatal(err)
		}
		for round := 0; round < 3; round++ {
			for id := round; id < 30_000; id += 3 {
				if id%1000 < 500 { // ids 500-999 of every thousand are a hole
					d.Set(idKey(id), []byte("v"), nil)
				}
			}
			d.Flush()
		}
		before := d.Metrics().DiskReads.DataBlocks
		for lo := 600; lo < 30_000; lo += 1000 {
			for _, w := range []int{1, 9, 180} {
				it := d.NewIter(&IterOptions{LowerBound: idKey(lo), UpperBound: idKey(lo + w)})
				if it.First() {
					t.Fatalf("key %s in an empty range", it.Key())
				}
				it.Close()
			}
		}
		reads[bits] = d.Metrics().DiskReads.DataBlocks - before
		d.Close()
	}
	if reads[0] == 0 || reads[16] != 0 {
		t.Errorf("data-block reads of empty scans: %d without range filters, %d with; want > 0 and 0", reads[0], reads[16])
	}
}

func TestRangeFilterOptionValidated(t *testing.T) {
	for _, bits := range []float64{-1, 2.5, 49} {
		if _, err := Open("db", &Options{FS: vfs.NewMem(), RangeFilterBitsPerKey: bits}); !errors.Is(err, ErrInvalidOptions) {
			t.Errorf("RangeFilterBitsPerKey %v: Open = %v, want ErrInvalidOptions", bits, err)
		}
	}
}

// TestExplainScanOfAnEmptyRangeMeetsNoTable: [k, k) holds no key, so no
// table is one a scan of it would read, even the table holding k (an
// explanation listing it would claim a read the scan never makes).
func TestExplainScanOfAnEmptyRangeMeetsNoTable(t *testing.T) {
	d := openMem(t, vfs.NewMem(), &Options{RangeFilterBitsPerKey: 16, DisableAutomaticCompactions: true})
	defer d.Close()
	d.Set(idKey(100), []byte("a"), nil)
	d.Flush()
	ex, err := d.ExplainScan(idKey(100), idKey(100))
	if err != nil {
		t.Fatal(err)
	}
	if len(ex.Tables) != 0 {
		t.Fatalf("an empty range meets %d tables:\n%s", len(ex.Tables), ex)
	}
}

// TestExplainScanShowsRuledOutTables checks ExplainScan against the scan
// it explains: the tables it says are ruled out are the ones the filter
// skips, and a range holding a key is never ruled out in its table.
func TestExplainScanShowsRuledOutTables(t *testing.T) {
	d := openMem(t, vfs.NewMem(), &Options{RangeFilterBitsPerKey: 16, DisableAutomaticCompactions: true})
	defer d.Close()
	d.Set(idKey(100), []byte("a"), nil)
	d.Set(idKey(300), []byte("b"), nil)
	d.Flush()
	d.Set(idKey(200), []byte("c"), nil)
	d.Flush()
	ex, err := d.ExplainScan(idKey(150), idKey(250))
	if err != nil {
		t.Fatal(err)
	}
	if len(ex.Tables) != 2 {
		t.Fatalf("%d tables overlap, want 2:\n%s", len(ex.Tables), ex)
	}
	for _, s := range ex.Tables {
		holds200 := s.Table == ex.Tables[0].Table // L0 newest first: the second flush
		if !s.HasRangeFilter || s.RuledOut == holds200 {
			t.Errorf("table %06d: range filter %v, ruled out %v; want ruled out %v\n%s", s.Table, s.HasRangeFilter, s.RuledOut, !holds200, ex)
		}
	}
	if out := ex.String(); !strings.Contains(out, "rules it out") || !strings.Contains(out, "1 ruled out") {
		t.Errorf("explanation lacks the ruled-out table:\n%s", out)
	}
	if !bytes.Equal(ex.Lower, idKey(150)) {
		t.Error("explanation lost its bounds")
	}
}
