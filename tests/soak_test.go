package tests

import (
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sievekv/sievekv/kv"
	"github.com/sievekv/sievekv/vfs"
)

// The concurrency churn: writers, readers, snapshots, flushes and
// compactions all at once under -race, checked against models.
//   - Each writer owns the keys "s<w>/..." and keeps the exact model of
//     them: its own Gets, scans of its range and its snapshots must match
//     the model (at the snapshot's time) exactly.
//   - Every write sets a key and its twin "<key>~" to the same value in one
//     batch (or deletes both), so any reader, at any moment, must see twins
//     equal: a batch is visible entirely or not at all (K2, K3).
//   - Values carry the writer's operation counter; a reader's view of a
//     writer is never ahead of what that writer has issued.
//
// make test runs it for a few seconds; make soak (SIEVEKV_SOAK=1) for
// SIEVEKV_CHURN_SECONDS (default 600).

func TestConcurrentChurn(t *testing.T) {
	dur := 3 * time.Second
	if testing.Short() {
		dur = time.Second
	}
	if os.Getenv("SIEVEKV_SOAK") != "" {
		secs := 600
		if s, err := strconv.Atoi(os.Getenv("SIEVEKV_CHURN_SECONDS")); err == nil && s > 0 {
			secs = s
		}
		dur = time.Duration(secs) * time.Second
	}
	fs := vfs.NewMem()
	d, err := kv.Open("db", &kv.Options{FS: fs, MemTableSize: 16 << 10, BlockSize: 512})
	if err != nil {
		t.Fatal(err)
	}
	const writers, readers, keysEach = 4, 3, 64
	var issued [writers]atomic.Int64 // operations each writer has started
	var stop atomic.Bool
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	report := func(format string, args ...any) {
		select {
		case errs <- fmt.Errorf(format, args...):
		default:
		}
		stop.Store(true)
	}
	var ops, snaps, scans atomic.Int64

	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(w), 1))
			model := map[string]string{}
			key := func() string { return fmt.Sprintf("s%d/%03d", w, r.IntN(keysEach)) }
			type openSnap struct {
				s     *kv.Snapshot
				model map[string]string
			}
			var held []openSnap
			checkRange := func(label string, it *kv.Iterator, want map[string]string) {
				got := map[string]string{}
				for ok := it.First(); ok; ok = it.Next() {
					k := string(it.Key())
					if !strings.HasSuffix(k, "~") {
						got[k] = string(it.Value())
					}
				}
				if err := it.Close(); err != nil {
					report("writer %d %s: %v", w, label, err)
					return
				}
				if !maps.Equal(got, want) {
					report("writer %d %s differs from the model:\n%s", w, label, diffStates(want, got))
				}
			}
			bounds := &kv.IterOptions{LowerBound: []byte(fmt.Sprintf("s%d/", w)), UpperBound: []byte(fmt.Sprintf("s%d0", w))}
			for n := int64(1); !stop.Load(); n++ {
				issued[w].Store(n)
				ops.Add(1)
				switch p := r.IntN(100); {
				case p < 55: // set a pair
					k := key()
					v := fmt.Sprintf("w%d-n%d-%s", w, n, strings.Repeat("q", r.IntN(100)))
					b := d.NewBatch()
					b.Set([]byte(k), []byte(v))
					b.Set([]byte(k+"~"), []byte(v))
					opts := kv.NoSync
					if r.IntN(10) == 0 {
						opts = kv.Sync
					}
					if err := d.Apply(b, opts); err != nil {
						report("writer %d set: %v", w, err)
						return
					}
					model[k] = v
				case p < 70: // delete a pair
					k := key()
					b := d.NewBatch()
					b.Delete([]byte(k))
					b.Delete([]byte(k + "~"))
					if err := d.Apply(b, kv.NoSync); err != nil {
						report("writer %d delete: %v", w, err)
						return
					}
					delete(model, k)
				case p < 85: // get
					k := key()
					v, err := d.Get([]byte(k))
					want, ok := model[k]
					if ok && (err != nil || string(v) != want) || !ok && !errors.Is(err, kv.ErrNotFound) {
						report("writer %d Get(%s) = %.30q, %v; model %.30q (present %v)", w, k, v, err, want, ok)
						return
					}
				case p < 92: // scan own range
					checkRange("scan", d.NewIter(bounds), model)
				case p < 96: // take a snapshot
					if len(held) < 3 {
						held = append(held, openSnap{s: d.NewSnapshot(), model: maps.Clone(model)})
						snaps.Add(1)
					}
				default: // check and release the oldest snapshot
					if len(held) > 0 {
						h := held[0]
						held = held[1:]
						checkRange("snapshot scan", h.s.NewIter(bounds), h.model)
						k := key()
						v, err := h.s.Get([]byte(k))
						want, ok := h.model[k]
						if ok && (err != nil || string(v) != want) || !ok && !errors.Is(err, kv.ErrNotFound) {
							report("writer %d snapshot Get(%s) = %.30q, %v; model %.30q", w, k, v, err, want)
						}
						if err := h.s.Close(); err != nil {
							report("writer %d snapshot close: %v", w, err)
						}
					}
				}
			}
			for _, h := range held {
				h.s.Close()
			}
		}()
	}
	for rd := range readers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				var seen [writers]int64 // largest counter seen per writer
				var it *kv.Iterator
				var snap *kv.Snapshot
				if rd == 0 {
					snap = d.NewSnapshot()
					it = snap.NewIter(nil)
				} else {
					it = d.NewIter(nil)
				}
				// Twins are adjacent in key order ("k" < "k~" and no other
				// key sorts between them).
				var prevKey, prevVal string
				for ok := it.First(); ok; ok = it.Next() {
					k, v := string(it.Key()), string(it.Value())
					if strings.HasSuffix(k, "~") {
						if prevKey+"~" != k || prevVal != v {
							report("reader %d: %s = %.30q but its twin %s = %.30q: a batch seen in part", rd, k, v, prevKey, prevVal)
							break
						}
					} else if prevKey != "" && !strings.HasSuffix(prevKey, "~") {
						report("reader %d: %s has no twin (next key %s)", rd, prevKey, k)
						break
					}
					var w int
					var n int64
					if _, err := fmt.Sscanf(v, "w%d-n%d-", &w, &n); err != nil || w >= writers {
						report("reader %d: malformed value %.30q at %s", rd, v, k)
						break
					}
					seen[w] = max(seen[w], n)
					prevKey, prevVal = k, v
				}
				if prevKey != "" && !strings.HasSuffix(prevKey, "~") {
					report("reader %d: last key %s has no twin", rd, prevKey)
				}
				if err := it.Close(); err != nil {
					report("reader %d: %v", rd, err)
				}
				if snap != nil {
					snap.Close()
				}
				for w, n := range seen {
					if n > issued[w].Load() {
						report("reader %d: saw writer %d's operation %d before it was issued", rd, w, n)
					}
				}
				scans.Add(1)
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		r := rand.New(rand.NewPCG(9, 9))
		for !stop.Load() {
			time.Sleep(time.Duration(r.IntN(20)) * time.Millisecond)
			var err error
			switch r.IntN(3) {
			case 0:
				err = d.Flush()
			case 1:
				w := r.IntN(writers)
				err = d.Compact([]byte(fmt.Sprintf("s%d/", w)), []byte(fmt.Sprintf("s%d/~", w)))
			default:
				m := d.Metrics()
				if m.BackgroundErrors != 0 {
					err = errors.New(m.BackgroundError)
				}
			}
			if err != nil {
				report("background: %v", err)
			}
		}
	}()

	select {
	case err := <-errs:
		stop.Store(true)
		wg.Wait()
		d.Close()
		t.Fatal(err)
	case <-time.After(dur):
	}
	stop.Store(true)
	wg.Wait()
	select {
	case err := <-errs:
		t.Fatal(err)
	default:
	}
	m := d.Metrics()
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if rep, err := kv.Check("db", &kv.Options{FS: fs}); err != nil || !rep.OK() {
		t.Fatalf("Check after the churn: %v\n%v", err, rep)
	}
	t.Logf("%v: %d writer ops, %d snapshots, %d full scans, %d flushes, %d compactions", dur, ops.Load(), snaps.Load(), scans.Load(), m.Flushes, m.Compactions)
	if m.Flushes == 0 || m.Compactions == 0 || scans.Load() == 0 {
		t.Fatalf("the churn did not exercise flushes, compactions and scans: %+v", m)
	}
}
