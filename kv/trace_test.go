package kv

import (
	"fmt"
	"slices"
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
