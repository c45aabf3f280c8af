package kv

import (
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/sievekv/sievekv/vfs"
)

// TestIdlePurgeConcurrentWriters: writers that write in bursts and pause
// for a few ticks, so the DB turns idle and back again under them while
// idle purges, age compactions and early drop run on a 1 ms ticker, and a
// reader that takes snapshots between bursts and checks each, after more
// purges, against the writers' models at the moment it was taken. Every
// writer owns its keys; its model is exact.
func TestIdlePurgeConcurrentWriters(t *testing.T) {
	withTickInterval(t, time.Millisecond)
	const seed = 5
	d := openMem(t, vfs.NewMem(), &Options{MemTableSize: 4 << 10, TargetFileSize: 2 << 10, LBaseMaxBytes: 8 << 10,
		L0CompactionThreshold: 2, TombstoneMaxAge: 2 * time.Millisecond, IdlePurgeMinShare: 1e-9})
	defer d.Close()
	const writers, keysEach = 3, 30
	bursts := 40
	if raceEnabled {
		bursts = 15
	}
	var mus [writers]sync.Mutex
	models := make([]map[string]string, writers)
	for w := range models {
		models[w] = map[string]string{}
	}
	key := func(w, i int) []byte { return []byte(fmt.Sprintf("w%d\x00k%03d", w, i)) }
	var wg sync.WaitGroup
	errc := make(chan error, writers+1)
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(seed, uint64(w)))
			for b := 0; b < bursts; b++ {
				mus[w].Lock()
				for i, n := 0, 1+rng.IntN(30); i < n; i++ {
					k := key(w, rng.IntN(keysEach))
					var err error
					if rng.IntN(3) == 0 {
						err = d.Delete(k, NoSync)
						delete(models[w], string(k))
					} else {
						v := fmt.Sprintf("%d.%d", b, i)
						err = d.Set(k, []byte(v), NoSync)
						models[w][string(k)] = v
					}
					if err != nil {
						mus[w].Unlock()
						errc <- err
						return
					}
				}
				mus[w].Unlock()
				time.Sleep(time.Duration(rng.IntN(4)) * time.Millisecond)
			}
		}(w)
	}
	type heldSnap struct {
		snap   *Snapshot
		models []map[string]string
	}
	check := func(s heldSnap) error {
		for w, m := range s.models {
			for i := 0; i < keysEach; i++ {
				k := key(w, i)
				v, err := s.snap.Get(k)
				want, ok := m[string(k)]
				if (!ok && !errors.Is(err, ErrNotFound)) || (ok && (err != nil || string(v) != want)) {
					return fmt.Errorf("seed %d: snapshot Get %q = %q, %v; model has %q (%v)", seed, k, v, err, want, ok)
				}
			}
		}
		return nil
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		rng := rand.New(rand.NewPCG(seed, 99))
		var held []heldSnap
		for r := 0; r < bursts; r++ {
			for w := range mus {
				mus[w].Lock()
			}
			s := heldSnap{snap: d.NewSnapshot()}
			for w := range models {
				s.models = append(s.models, maps.Clone(models[w]))
			}
			for w := range mus {
				mus[w].Unlock()
			}
			held = append(held, s)
			time.Sleep(time.Duration(rng.IntN(5)) * time.Millisecond)
			if i := rng.IntN(len(held)); rng.IntN(2) == 0 {
				err := check(held[i])
				held[i].snap.Close()
				held = append(held[:i], held[i+1:]...)
				if err != nil {
					errc <- err
					return
				}
			}
		}
		for _, s := range held {
			err := check(s)
			s.snap.Close()
			if err != nil {
				errc <- err
				return
			}
		}
	}()
	wg.Wait()
	<-done
	close(errc)
	for err := range errc {
		t.Fatal(err)
	}
	time.Sleep(20 * time.Millisecond)
	for w, m := range models {
		for i := 0; i < keysEach; i++ {
			k := key(w, i)
			v, err := d.Get(k)
			want, ok := m[string(k)]
			if (!ok && !errors.Is(err, ErrNotFound)) || (ok && (err != nil || string(v) != want)) {
				t.Fatalf("seed %d: Get %q = %q, %v; model has %q (%v)", seed, k, v, err, want, ok)
			}
		}
	}
	if m := d.Metrics().Compaction; m.IdlePurges+m.AgeCompactions == 0 {
		t.Fatalf("no idle purge or age compaction ran: %+v", m)
	}
}
