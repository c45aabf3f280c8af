package kv

import (
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/sievekv/sievekv/internal/testutil"
	"github.com/sievekv/sievekv/vfs"
)

// TestExplainGetExactUnderLoad: ExplainGet's figures are the traced Get's
// own, not the DB-wide counters' movement, so they match a quiet run of
// the same key while other goroutines read (without a cache, every Get
// reads a block) and compactions rewrite other tables.
func TestExplainGetExactUnderLoad(t *testing.T) {
	d := openMem(t, vfs.NewMem(), &Options{DisableAutomaticCompactions: true, BlockCacheSize: -1})
	defer d.Close()
	set := func(k string) {
		if err := d.Set([]byte(k), []byte("v-"+k), NoSync); err != nil {
			t.Fatal(err)
		}
	}
	// Three L0 tables over the "a" range, the traced key only in the
	// oldest, so the trace shows filter answers and one block read; the
	// "b" range lives in its own tables, for the load to read and compact.
	// The memtable stays empty: Compact flushes it first, which would
	// change the trace's memtable steps.
	for round := range 3 {
		for i := range 100 {
			if round == 0 || i%10 != 5 {
				set(fmt.Sprintf("a%03d-%d", i, round))
			}
		}
		set("a050")
		if round > 0 {
			if err := d.Delete([]byte("a050"), NoSync); err != nil {
				t.Fatal(err)
			}
		}
		if err := d.Flush(); err != nil {
			t.Fatal(err)
		}
		for i := range 500 {
			set(fmt.Sprintf("b%04d", i*3+round))
		}
		if err := d.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	key := []byte("a049-0")

	quiet, err := d.ExplainGet(key)
	if err != nil || !quiet.Found {
		t.Fatalf("quiet ExplainGet: %+v, %v", quiet, err)
	}
	var blockReads int64
	tables := 0
	for _, s := range quiet.Steps {
		blockReads += s.DataBlockReads
		if s.Source == "table" {
			tables++
		}
	}
	if tables != 3 || blockReads < 1 {
		t.Fatalf("the quiet trace should consult 3 tables and read a block:\n%s", quiet)
	}

	var stop atomic.Bool
	var load testutil.Group
	for g := range 2 {
		load.Go(func() error {
			for i := 0; !stop.Load(); i++ {
				if _, err := d.Get([]byte(fmt.Sprintf("b%04d", (i*7+g)%1500))); err != nil {
					return err
				}
			}
			return nil
		})
	}
	load.Go(func() error {
		for !stop.Load() {
			if err := d.Compact([]byte("b"), []byte("c")); err != nil {
				return err
			}
		}
		return nil
	})
	defer func() {
		stop.Store(true)
		for _, err := range load.Wait() {
			t.Errorf("load: %v", err)
		}
	}()

	for i := range 2000 {
		tr, err := d.ExplainGet(key)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(tr.Steps, quiet.Steps) || tr.Found != quiet.Found {
			t.Fatalf("ExplainGet %d under load:\n%s\nquiet:\n%s", i, tr, quiet)
		}
	}
}

// TestExplainGetRangeDeleted caught ExplainGet of a key a range tombstone
// deletes tracing the source whose tombstone decided the answer as one
// that "does not have the key", its last step, so kvshell's explain get
// printed a plain "not found" and listed no source that deleted it; in a
// table, with a filter that said maybe, it was also called a filter false
// positive though the table holds the key. The step now says the range
// tombstone deletes it, in a memtable and in a table alike.
func TestExplainGetRangeDeleted(t *testing.T) {
	d := openMem(t, vfs.NewMem(), &Options{DisableAutomaticCompactions: true})
	defer d.Close()
	for _, k := range []string{"a", "b", "c"} {
		if err := d.Set([]byte(k), []byte("v"), NoSync); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := d.DeleteRange([]byte("a"), []byte("c"), NoSync); err != nil {
		t.Fatal(err)
	}
	check := func(where string, wantSteps int) {
		t.Helper()
		tr, err := d.ExplainGet([]byte("b"))
		if err != nil || tr.Found || tr.Err != nil {
			t.Fatalf("%s: explain get b = %+v, %v; want not found", where, tr, err)
		}
		if len(tr.Steps) != wantSteps {
			t.Fatalf("%s: %d steps; want %d:\n%s", where, len(tr.Steps), wantSteps, tr)
		}
		last := tr.Steps[len(tr.Steps)-1]
		if !last.RangeDeleted || last.Hit || last.FalsePositive {
			t.Fatalf("%s: last step %+v; want a range deletion, no hit, no false positive:\n%s", where, last, tr)
		}
		if !strings.Contains(tr.String(), "a range tombstone here deletes the key") {
			t.Fatalf("%s: trace does not say the key is range-deleted:\n%s", where, tr)
		}
	}
	check("tombstone in the memtable", 1)
	if err := d.Flush(); err != nil {
		t.Fatal(err)
	}
	// The memtable is empty, then the newest table holds the tombstone
	// (and, if the tables were merged, the covered value too).
	check("tombstone in a table", 2)
	// A version newer than the tombstone is the answer, and its source
	// has the key.
	if err := d.Set([]byte("b"), []byte("new"), NoSync); err != nil {
		t.Fatal(err)
	}
	tr, err := d.ExplainGet([]byte("b"))
	if err != nil || !tr.Found || string(tr.Value) != "new" || tr.Steps[len(tr.Steps)-1].RangeDeleted {
		t.Fatalf("after set b=new: %+v, %v", tr, err)
	}
}
