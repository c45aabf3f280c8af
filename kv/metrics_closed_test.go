package kv

import (
	"sync"
	"testing"

	"github.com/sievekv/sievekv/vfs"
)

// metricsAfterCloseDB is a DB with one flushed table and one Get, so
// every figure Metrics reports has a non-zero value to keep.
func metricsAfterCloseDB(t *testing.T) *DB {
	d := openMem(t, vfs.NewMem(), nil)
	for i := range 100 {
		if err := d.Set([]byte{byte(i)}, []byte("v"), nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.Flush(); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Get([]byte{7}); err != nil {
		t.Fatal(err)
	}
	return d
}

// TestMetricsAfterCloseAreTheFinalFigures caught Metrics on a closed DB
// reporting its levels' filters as perfect (FilterFP 0, the filters no
// longer read) beside table counts read from a released version, with
// nothing to say the DB was closed. Metrics cannot fail, so after Close it
// returns the figures as of Close, marked Closed.
func TestMetricsAfterCloseAreTheFinalFigures(t *testing.T) {
	d := metricsAfterCloseDB(t)
	live := d.Metrics()
	if live.Closed {
		t.Fatal("an open DB's Metrics say Closed")
	}
	if live.Levels[0].Tables != 1 || live.Levels[0].FilterFP <= 0 {
		t.Fatalf("setup: L0 %+v", live.Levels[0])
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		m := d.Metrics()
		if !m.Closed {
			t.Fatal("Metrics of a closed DB do not say Closed")
		}
		if m.Levels[0].Tables != live.Levels[0].Tables || m.Levels[0].Bytes != live.Levels[0].Bytes {
			t.Fatalf("L0 after Close %+v, before %+v", m.Levels[0], live.Levels[0])
		}
		if m.Levels[0].FilterFP != live.Levels[0].FilterFP {
			t.Fatalf("L0 filter FP after Close %v, before %v", m.Levels[0].FilterFP, live.Levels[0].FilterFP)
		}
		if m.Gets != live.Gets || m.Flushes != live.Flushes {
			t.Fatalf("counters after Close: gets %d flushes %d, before %d %d", m.Gets, m.Flushes, live.Gets, live.Flushes)
		}
	}
}

// TestMetricsRacingClose: a Metrics call overlapping Close sees either
// the live figures or the final ones, never a half-closed mix (run with
// -race: it must not read a table Close has closed).
func TestMetricsRacingClose(t *testing.T) {
	for range 20 {
		d := metricsAfterCloseDB(t)
		var wg sync.WaitGroup
		for range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range 20 {
					m := d.Metrics()
					if m.Levels[0].Tables != 1 || m.Levels[0].FilterFP <= 0 {
						t.Errorf("Metrics racing Close: L0 %+v (closed %v)", m.Levels[0], m.Closed)
						return
					}
				}
			}()
		}
		if err := d.Close(); err != nil {
			t.Fatal(err)
		}
		wg.Wait()
	}
}
