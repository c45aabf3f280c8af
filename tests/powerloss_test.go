package tests

import (
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sievekv/sievekv/internal/testutil"
	"github.com/sievekv/sievekv/kv"
	"github.com/sievekv/sievekv/vfs"
)

// The power-loss test runs the model workload in-process on a MemFS and, at
// a random instant while writers, flushes and compactions run, takes
// CrashClone: the state a power loss would leave, where every write not
// followed by a Sync of its file is gone, and every created or renamed
// name not followed by a Sync of its directory is unbound. A missing fsync
// of a file or directory that a SIGKILL cannot reveal shows up here.
//
// What must hold in the clone, per writer: every batch acknowledged with
// Sync before the crash is present (so is every batch before it, which
// its sync made durable); NoSync batches after the last synced one may be
// lost, but only as a suffix; nothing is there that was not at least in
// flight; kv.Check finds nothing wrong.

func powerCfg(seed uint64) wlConfig {
	return wlConfig{seed: seed, writers: 4, keys: 200, maxOps: 5, maxValue: 200, noSyncPct: 50}
}

func TestPowerLossCrashClone(t *testing.T) {
	runPowerLoss(t, shortOr(8, 40), 11)
}

// TestPowerLossSoak is the long form, for make soak.
func TestPowerLossSoak(t *testing.T) {
	runPowerLoss(t, shortOr(8, soakCycles(t, 1500)), 12)
}

func runPowerLoss(t *testing.T, cycles int, seed uint64) {
	cfg := powerCfg(seed)
	model := newModel(cfg)
	fs := vfs.NewMem()
	opts := func(fs vfs.FS) *kv.Options {
		return &kv.Options{FS: fs, MemTableSize: 8 << 10, BlockSize: 512}
	}
	r := rand.New(rand.NewPCG(seed, 3))
	var lostNoSync int
	for cycle := 0; cycle < cycles; cycle++ {
		d, err := kv.Open("db", opts(fs))
		if err != nil {
			t.Fatalf("cycle %d: open: %v", cycle, err)
		}
		lastAck := make([]atomic.Int64, cfg.writers)
		lastSyncAck := make([]atomic.Int64, cfg.writers)
		for w := range cfg.writers {
			lastAck[w].Store(int64(model.applied[w]) - 1)
			lastSyncAck[w].Store(int64(model.applied[w]) - 1)
		}
		var stop atomic.Bool
		var g testutil.Group
		for w := range cfg.writers {
			g.Go(func() error {
				for i := model.applied[w]; !stop.Load(); i++ {
					if err := cfg.apply(d, w, i); err != nil {
						return fmt.Errorf("writer %d batch %d: %w", w, i, err)
					}
					lastAck[w].Store(int64(i))
					if _, sync := cfg.batch(w, i); sync {
						lastSyncAck[w].Store(int64(i))
					}
				}
				return nil
			})
		}
		g.Go(func() error {
			rr := rand.New(rand.NewPCG(seed, uint64(cycle)))
			for !stop.Load() {
				time.Sleep(time.Duration(rr.IntN(10)) * time.Millisecond)
				var err error
				if rr.IntN(3) == 0 {
					lo := fmt.Sprintf("w%d/", rr.IntN(cfg.writers))
					err = d.Compact([]byte(lo), []byte(lo+"\xff"))
				} else {
					err = d.Flush()
				}
				if err != nil {
					return err
				}
			}
			return nil
		})

		time.Sleep(time.Duration(r.IntN(40)) * time.Millisecond)
		lo, hi := make([]int, cfg.writers), make([]int, cfg.writers)
		for w := range lo {
			lo[w] = int(lastSyncAck[w].Load()) + 1
		}
		clone := fs.CrashClone()
		for w := range hi {
			hi[w] = int(lastAck[w].Load()) + 2 // acknowledged count, +1 in flight
		}
		stop.Store(true)
		if errs := g.Wait(); len(errs) > 0 {
			t.Fatalf("cycle %d: %v", cycle, errs[0])
		}
		if err := d.Close(); err != nil {
			t.Fatalf("cycle %d: close: %v", cycle, err)
		}

		rep, err := kv.Check("db", &kv.Options{FS: clone})
		if err != nil {
			t.Fatalf("cycle %d: Check of the crash image: %v\nfiles:\n%s", cycle, err, clone)
		}
		if !rep.OK() {
			t.Fatalf("cycle %d: Check of the crash image found problems:\n%s\nfiles:\n%s", cycle, rep, clone)
		}
		cd, err := kv.Open("db", opts(clone))
		if err != nil {
			t.Fatalf("cycle %d: open the crash image: %v\nfiles:\n%s", cycle, err, clone)
		}
		found := model.verify(t, cd, lo, hi)
		for w := range found {
			// Acknowledged NoSync batches a power loss took.
			lostNoSync += max(0, hi[w]-1-found[w])
		}
		if err := cd.Close(); err != nil {
			t.Fatalf("cycle %d: close the crash image: %v", cycle, err)
		}
		fs = clone
	}
	total := 0
	for _, n := range model.applied {
		total += n
	}
	t.Logf("%d power losses, %d batches verified, %d acknowledged NoSync batches lost (allowed)", cycles, total, lostNoSync)
	if total < cycles {
		t.Fatalf("only %d batches over %d cycles", total, cycles)
	}
}
