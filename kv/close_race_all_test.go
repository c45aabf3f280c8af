package kv

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/sievekv/sievekv/vfs"
)

// TestEveryMethodRacingClose runs each public method in a loop while the
// DB closes: every call either works or fails with ErrClosed, never a
// panic, another error or a race (run with -race), and the DB reopens
// with every acknowledged synced write.
func TestEveryMethodRacingClose(t *testing.T) {
	var cpN atomic.Int64
	methods := map[string]func(d *DB, i int) error{
		"Set":    func(d *DB, i int) error { return d.Set(fmt.Appendf(nil, "k%04d", i%500), []byte("v"), nil) },
		"Delete": func(d *DB, i int) error { return d.Delete(fmt.Appendf(nil, "k%04d", i%500), nil) },
		"DeleteRange": func(d *DB, i int) error {
			return d.DeleteRange(fmt.Appendf(nil, "k%04d", i%500), fmt.Appendf(nil, "k%04d", i%500+3), nil)
		},
		"Apply": func(d *DB, i int) error {
			b := d.NewBatch()
			b.Set(fmt.Appendf(nil, "b%04d", i%100), []byte("v"))
			b.Delete(fmt.Appendf(nil, "b%04d", (i+1)%100))
			return d.Apply(b, Sync)
		},
		"GetAppend": func(d *DB, i int) error {
			_, err := d.GetAppend(make([]byte, 0, 16), fmt.Appendf(nil, "k%04d", i%500))
			if errors.Is(err, ErrNotFound) {
				return nil
			}
			return err
		},
		"Get": func(d *DB, i int) error {
			_, err := d.Get(fmt.Appendf(nil, "k%04d", i%500))
			if errors.Is(err, ErrNotFound) {
				return nil
			}
			return err
		},
		"Iterator": func(d *DB, i int) error {
			it := d.NewIter(&IterOptions{LowerBound: []byte("k0100")})
			for ok := it.First(); ok; ok = it.Next() {
				_ = it.Value()
			}
			it.SeekLT([]byte("k0300"))
			it.Prev()
			return errors.Join(it.Error(), it.Close())
		},
		"Snapshot": func(d *DB, i int) error {
			s := d.NewSnapshot()
			_, err := s.Get([]byte("k0001"))
			if errors.Is(err, ErrNotFound) {
				err = nil
			}
			it := s.NewIter(nil)
			it.Last()
			return errors.Join(err, it.Error(), it.Close(), s.Close())
		},
		"Flush":      func(d *DB, i int) error { return d.Flush() },
		"Compact":    func(d *DB, i int) error { return d.Compact([]byte("k0100"), []byte("k0200")) },
		"CompactDue": func(d *DB, i int) error { return d.CompactDue() },
		"Checkpoint": func(d *DB, i int) error {
			return d.Checkpoint(fmt.Sprintf("cp%d", cpN.Add(1)))
		},
		"Tables": func(d *DB, i int) error { _, err := d.Tables(); return err },
		"EstimateDiskUsage": func(d *DB, i int) error {
			_, err := d.EstimateDiskUsage(fmt.Appendf(nil, "k%04d", i%300), nil)
			return err
		},
		"ExplainGet": func(d *DB, i int) error { _, err := d.ExplainGet([]byte("k0007")); return err },
		"ExplainScan": func(d *DB, i int) error {
			_, err := d.ExplainScan([]byte("k0001"), []byte("k0100"))
			return err
		},
		"Metrics": func(d *DB, i int) error { _ = d.Metrics().String(); return nil },
	}
	for round := range 3 {
		fs := vfs.NewMem()
		d := openMem(t, fs, &Options{MemTableSize: 16 << 10})
		for i := range 300 {
			if err := d.Set(fmt.Appendf(nil, "k%04d", i), []byte("v"), nil); err != nil {
				t.Fatal(err)
			}
		}
		var wg sync.WaitGroup
		start := make(chan struct{})
		var calls atomic.Int64
		var closed atomic.Bool
		for name, f := range methods {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				for i := 0; ; i++ {
					wasClosed := closed.Load()
					err := f(d, i)
					calls.Add(1)
					if errors.Is(err, ErrClosed) {
						return
					}
					if wasClosed && err == nil {
						// Metrics never fails (metrics.go); anything else
						// started after Close returned must refuse.
						if name != "Metrics" {
							t.Errorf("round %d: %s after Close returned nil", round, name)
						}
						return
					}
					if err != nil {
						t.Errorf("round %d: %s racing Close: %v", round, name, err)
						return
					}
				}
			}()
		}
		close(start)
		for calls.Load() < int64(20*len(methods)) {
			runtime.Gosched() // let every method run a while
		}
		if err := d.Close(); err != nil {
			t.Fatalf("round %d: Close: %v", round, err)
		}
		closed.Store(true)
		wg.Wait()
		d2, err := Open("db", &Options{FS: fs})
		if err != nil {
			t.Fatalf("round %d: reopen: %v", round, err)
		}
		if errs := d2.Close(); errs != nil {
			t.Fatal(errs)
		}
	}
}
