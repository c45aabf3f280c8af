package kv

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/sievekv/sievekv/vfs"
	"github.com/sievekv/sievekv/vfs/errorfs"
)

// rangeDelSweepOp is one write of the sweep's workload.
type rangeDelSweepOp struct {
	kind       int // 0 Set, 1 Delete, 2 DeleteRange
	key, value []byte
}

// rangeDelSweepBatches is a fixed workload of batches mixing Sets, Deletes
// and DeleteRanges over 40 keys, and the model after each batch.
func rangeDelSweepBatches() ([][]rangeDelSweepOp, []map[string]string) {
	return rangeDelBatches(5, 36)
}

// rangeDelBatches draws n such batches from seed.
func rangeDelBatches(seed uint64, n int) ([][]rangeDelSweepOp, []map[string]string) {
	rng := rand.New(rand.NewPCG(seed, 5))
	var batches [][]rangeDelSweepOp
	models := []map[string]string{{}}
	for i := range n {
		m := maps.Clone(models[len(models)-1])
		var ops []rangeDelSweepOp
		for j := range 1 + rng.IntN(4) {
			k := fmt.Appendf(nil, "k%02d", rng.IntN(40))
			switch r := rng.IntN(10); {
			case r < 5:
				v := fmt.Appendf(nil, "v%d.%d%s", i, j, bytes.Repeat([]byte{'.'}, rng.IntN(200)))
				ops = append(ops, rangeDelSweepOp{0, k, v})
				m[string(k)] = string(v)
			case r < 7:
				ops = append(ops, rangeDelSweepOp{1, k, nil})
				delete(m, string(k))
			default:
				e := fmt.Appendf(nil, "k%02d", rng.IntN(40))
				if c := bytes.Compare(k, e); c == 0 {
					continue
				} else if c > 0 {
					k, e = e, k
				}
				ops = append(ops, rangeDelSweepOp{2, k, e})
				for mk := range m {
					if mk >= string(k) && mk < string(e) {
						delete(m, mk)
					}
				}
			}
		}
		batches = append(batches, ops)
		models = append(models, m)
	}
	return batches, models
}

// rangeDelBatch builds the batch of ops.
func rangeDelBatch(ops []rangeDelSweepOp) *Batch {
	b := newBatch()
	for _, op := range ops {
		switch op.kind {
		case 0:
			b.Set(op.key, op.value)
		case 1:
			b.Delete(op.key)
		default:
			b.DeleteRange(op.key, op.value)
		}
	}
	return b
}

func rangeDelSweepOptions(fs vfs.FS) *Options {
	return &Options{FS: fs, MemTableSize: 1 << 10, BlockSize: 256, BlockCacheSize: -1,
		RangeFilterBitsPerKey: 8, L0CompactionThreshold: 2, TargetFileSize: 512, LBaseMaxBytes: 2 << 10}
}

// runRangeDelSweep runs the workload on fs, every batch synced, with
// flushes and compactions between them; it returns how many batches were
// acknowledged before the first failure (after which none may be).
func runRangeDelSweep(t *testing.T, label string, fs vfs.FS) (acked int, failed bool) {
	t.Helper()
	batches, models := rangeDelSweepBatches()
	d, err := Open("db", rangeDelSweepOptions(fs))
	if err != nil {
		if !errors.Is(err, errorfs.ErrInjected) {
			t.Fatalf("%s: Open: %v", label, err)
		}
		return 0, true
	}
	defer func() {
		if err := d.Close(); err != nil && !errors.Is(err, errorfs.ErrInjected) && !errors.Is(err, ErrReadOnly) {
			t.Fatalf("%s: Close: %v", label, err)
		}
	}()
	expected := func(err error) bool { return errors.Is(err, errorfs.ErrInjected) || errors.Is(err, ErrReadOnly) }
	for i, ops := range batches {
		err := d.Apply(rangeDelBatch(ops), Sync)
		switch {
		case err == nil && failed:
			t.Fatalf("%s: batch %d acknowledged after batch %d failed", label, i, acked)
		case err == nil:
			acked = i + 1
		case !expected(err):
			t.Fatalf("%s: batch %d: %v", label, i, err)
		default:
			failed = true
		}
		// Reads stay right whatever failed: the state is that after the
		// acknowledged batches, or after the failed one too.
		for k := range 40 {
			key := fmt.Appendf(nil, "k%02d", k)
			v, err := d.Get(key)
			if err != nil && !errors.Is(err, ErrNotFound) {
				if expected(err) {
					continue
				}
				t.Fatalf("%s: Get(%s): %v", label, key, err)
			}
			w0, ok0 := models[acked][string(key)]
			w1, ok1 := models[min(acked+1, len(models)-1)][string(key)]
			if (err == nil) != ok0 && (err == nil) != ok1 || err == nil && string(v) != w0 && string(v) != w1 {
				t.Fatalf("%s: after batch %d Get(%s) = %.12q, %v; want %.12q (%v)", label, i, key, v, err, w0, ok0)
			}
		}
		var werr error
		switch i % 12 {
		case 5:
			werr = d.Flush()
		case 9:
			werr = d.Compact([]byte("k10"), []byte("k30"))
		case 11:
			werr = d.Compact(nil, nil)
		}
		if werr != nil && !expected(werr) {
			t.Fatalf("%s: after batch %d: %v", label, i, werr)
		}
	}
	return acked, failed
}

// checkRangeDelSweep reopens fs without faults: the state must be the
// model after the acknowledged batches or, if one failed, after it too;
// every scan must agree with the Gets.
func checkRangeDelSweep(t *testing.T, label string, fs vfs.FS, acked int, failed bool) {
	t.Helper()
	_, models := rangeDelSweepBatches()
	opts := rangeDelSweepOptions(fs)
	if _, err := Check("db", opts); errors.Is(err, ErrDBDoesNotExist) && acked == 0 {
		return // the first Open failed before it created the DB
	}
	checkRangeDelImage(t, label, fs, opts, models, acked, failed)
}

// TestRangeDeleteFaultSweep fails each file-system operation of a
// DeleteRange-heavy workload over tables with range filters (WAL
// rotations, flushes, compactions that split and drop range tombstones),
// once and from then on: every error is the injected one or ErrReadOnly,
// reads stay right, and the files, and their power-loss image, reopen
// with exactly the acknowledged batches (and perhaps the failed one).
func TestRangeDeleteFaultSweep(t *testing.T) {
	stride := int64(4)
	if testing.Short() || raceEnabled {
		stride = 13
	}
	runRangeDelFaultSweep(t, stride)
}

// TestRangeDeleteFaultSweepSoak fails every operation, for make soak.
func TestRangeDeleteFaultSweepSoak(t *testing.T) {
	skipUnlessSoak(t)
	runRangeDelFaultSweep(t, 1)
}

// runRangeDelFaultSweep fails every stride-th operation of the workload.
func runRangeDelFaultSweep(t *testing.T, stride int64) {
	count := errorfs.Wrap(vfs.NewMem(), errorfs.OpAll)
	if acked, _ := runRangeDelSweep(t, "clean run", count); acked != 36 {
		t.Fatalf("clean run acknowledged %d batches", acked)
	}
	total := count.Count()
	t.Logf("%d operations", total)
	forEachFault(total, func(n int64, sticky bool, label string) {
		if (n-1)%stride != 0 {
			return
		}
		mem := vfs.NewMem()
		efs := errorfs.Wrap(mem, errorfs.OpAll)
		efs.FailAt(n, sticky)
		acked, failed := runRangeDelSweep(t, label, efs)
		label += ": " + efs.LastInjected()
		checkRangeDelSweep(t, label+", power loss after", mem.CrashClone(), acked, failed)
		checkRangeDelSweep(t, label, mem, acked, failed)
	})
}

// TestPowerLossDuringRangeDeletesAndIdlePurges takes power-loss images of
// a DB at random moments of a DeleteRange-heavy workload, synced batch by
// synced batch, while flushes, compactions, tombstone-age compactions (1
// ms) and, when the 1 ms ticker finds the DB idle, idle purges run in the
// background: each image must pass Check
// and reopen as the model after the batches acknowledged before the image,
// or after the one in flight too.
func TestPowerLossDuringRangeDeletesAndIdlePurges(t *testing.T) {
	runPowerLossRangeDeletes(t, 6)
}

// TestPowerLossRangeDeletesSoak is the long form, for make soak.
func TestPowerLossRangeDeletesSoak(t *testing.T) {
	skipUnlessSoak(t)
	runPowerLossRangeDeletes(t, 200)
}

func runPowerLossRangeDeletes(t *testing.T, seeds int) {
	withTickInterval(t, time.Millisecond)
	var compactions, idlePurges uint64
	for seed := uint64(1); seed <= uint64(seeds); seed++ {
		batches, models := rangeDelBatches(seed, 120)
		mem := vfs.NewMem()
		opts := rangeDelSweepOptions(mem)
		opts.TombstoneMaxAge, opts.IdlePurgeMinShare = time.Millisecond, 1e-9
		d, err := Open("db", opts)
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(seed, 9))
		type image struct {
			fs    *vfs.MemFS
			acked int
		}
		var images []image
		for i, ops := range batches {
			if rng.IntN(4) == 0 {
				// A pause of a few ticks turns the DB idle and purges,
				// into the next batches.
				time.Sleep(time.Duration(rng.IntN(8)) * time.Millisecond)
			}
			done := make(chan *vfs.MemFS, 1)
			go func() { done <- mem.CrashClone() }()
			if err := d.Apply(rangeDelBatch(ops), Sync); err != nil {
				t.Fatalf("seed %d batch %d: %v", seed, i, err)
			}
			if img := <-done; rng.IntN(6) == 0 {
				images = append(images, image{img, i})
			}
		}
		if err := d.Close(); err != nil {
			t.Fatal(err)
		}
		images = append(images, image{mem.CrashClone(), len(batches)})
		m := d.Metrics()
		compactions += m.Compactions
		idlePurges += m.Compaction.IdlePurges
		t.Logf("seed %d: %d flushes, %d compactions (%d for tombstone age, %d idle purges), %d images",
			seed, m.Flushes, m.Compactions, m.Compaction.AgeCompactions, m.Compaction.IdlePurges, len(images))
		for _, img := range images {
			label := fmt.Sprintf("seed %d, image before batch %d acknowledged", seed, img.acked)
			checkRangeDelImage(t, label, img.fs, opts, models, img.acked, true)
		}
	}
	// Which background compactions ran depends on the scheduler (idle
	// purges need the ticker to find the DB idle): counted, not required.
	t.Logf("%d compactions, %d of them idle purges", compactions, idlePurges)
	if compactions == 0 {
		t.Fatal("no compaction ran: the test exercised less than it says")
	}
}

// checkRangeDelImage checks the files of fs: Check finds no problem, and
// they open as the model after acked batches or, with inFlight, after the
// next one too; every scan agrees with the Gets.
func checkRangeDelImage(t *testing.T, label string, fs vfs.FS, opts *Options, models []map[string]string, acked int, inFlight bool) {
	t.Helper()
	o := *opts
	o.FS = fs
	if rep, err := Check("db", &o); err != nil || len(rep.Problems) > 0 {
		t.Fatalf("%s: Check: %v %v", label, err, rep)
	}
	d, err := Open("db", &o)
	if err != nil {
		t.Fatalf("%s: reopen: %v", label, err)
	}
	defer d.Close()
	got := map[string]string{}
	it := d.NewIter(nil)
	for ok := it.First(); ok; ok = it.Next() {
		got[string(it.Key())] = string(it.Value())
	}
	if err := it.Close(); err != nil {
		t.Fatalf("%s: scan: %v", label, err)
	}
	for k := range 40 {
		key := fmt.Sprintf("k%02d", k)
		v, err := d.Get([]byte(key))
		if w, ok := got[key]; ok != (err == nil) || ok && w != string(v) {
			t.Fatalf("%s: Get(%s) = %q, %v; scan says %q, %v", label, key, v, err, w, ok)
		}
	}
	if !maps.Equal(got, models[acked]) && (!inFlight || acked+1 >= len(models) || !maps.Equal(got, models[acked+1])) {
		t.Fatalf("%s: reopened state is neither the model after %d batches nor after %d", label, acked, acked+1)
	}
}
