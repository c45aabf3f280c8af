package tests

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/sievekv/sievekv/internal/testutil"
	"github.com/sievekv/sievekv/kv"
	"github.com/sievekv/sievekv/vfs"
	"github.com/sievekv/sievekv/vfs/errorfs"
)

// The fault-injection test runs a scripted workload (open, synced and
// unsynced batches, reads, flushes, a compaction, a scan, close) over
// errorfs, first counting its file-system operations, then once per
// operation N with the Nth one failing (and again with every operation
// from N on failing: a dead disk). For every N:
//   - nothing panics and nothing hangs (a watchdog fails the test);
//   - every error a call returns wraps the injected error or ErrReadOnly,
//     and once a write fails with ErrReadOnly every later one does
//     (sticky), as does every write after Metrics reports a background
//     error;
//   - no read returns a wrong value;
//   - after the "process restart" (reopen of the same files without
//     faults) every acknowledged batch is present, every failed batch is
//     present entirely or not at all, and no batch that was never
//     attempted is.

const (
	faultBatches  = 24
	faultKeysEach = 3
)

func faultKey(batch, j int) []byte { return []byte(fmt.Sprintf("b%03d/k%d", batch, j)) }
func faultValue(batch, j int) string {
	return fmt.Sprintf("v%d-%d-%s", batch, j, strings.Repeat("x", 40+batch*7%90))
}

type batchOutcome int

const (
	notAttempted batchOutcome = iota
	acked
	failed
)

// faultRun is what one run of the workload did.
type faultRun struct {
	outcome [faultBatches]batchOutcome
	// problems are violations seen during the run.
	problems []string
}

func (r *faultRun) problemf(format string, args ...any) {
	r.problems = append(r.problems, fmt.Sprintf(format, args...))
}

// expectedErr reports whether err is one the workload may see.
func expectedErr(err error) bool {
	return errors.Is(err, errorfs.ErrInjected) || errors.Is(err, kv.ErrReadOnly)
}

func faultOptions(fs vfs.FS) *kv.Options {
	return &kv.Options{FS: fs, MemTableSize: 2 << 10, BlockSize: 256, BlockCacheSize: -1}
}

// faultWorkload is the scripted workload. It never calls t.Fatal: it
// runs on a watchdog goroutine and reports through the faultRun.
func faultWorkload(fs vfs.FS, run *faultRun) {
	d, err := kv.Open("db", faultOptions(fs))
	if err != nil {
		if !expectedErr(err) {
			run.problemf("Open: unexpected error %v", err)
		}
		return
	}
	readOnly := false
	checkGet := func(b int) {
		for j := range faultKeysEach {
			v, err := d.Get(faultKey(b, j))
			switch {
			case err == nil && string(v) != faultValue(b, j):
				run.problemf("Get(%s) = %.20q, want %.20q", faultKey(b, j), v, faultValue(b, j))
			case errors.Is(err, kv.ErrNotFound) && run.outcome[b] == acked:
				run.problemf("Get(%s) of an acknowledged batch: not found", faultKey(b, j))
			case err != nil && !errors.Is(err, kv.ErrNotFound) && !expectedErr(err):
				run.problemf("Get(%s): unexpected error %v", faultKey(b, j), err)
			}
		}
	}
	for i := range faultBatches {
		bgFailed := d.Metrics().BackgroundErrors > 0
		b := d.NewBatch()
		for j := range faultKeysEach {
			b.Set(faultKey(i, j), []byte(faultValue(i, j)))
		}
		opts := kv.NoSync
		if i%2 == 0 {
			opts = kv.Sync
		}
		err := d.Apply(b, opts)
		switch {
		case err == nil:
			run.outcome[i] = acked
			if readOnly || bgFailed {
				run.problemf("batch %d acknowledged after the DB became read-only", i)
			}
		case !expectedErr(err):
			run.outcome[i] = failed
			run.problemf("batch %d: unexpected error %v", i, err)
		default:
			run.outcome[i] = failed
			if (readOnly || bgFailed) && !errors.Is(err, kv.ErrReadOnly) {
				run.problemf("batch %d after a sticky failure: %v, want ErrReadOnly", i, err)
			}
			readOnly = readOnly || errors.Is(err, kv.ErrReadOnly)
		}
		if m := d.Metrics(); m.BackgroundErrors > 0 && m.BackgroundError == "" {
			run.problemf("Metrics counts a background error but has no message")
		}
		checkGet(i)
		switch i {
		case 8, 16:
			if err := d.Flush(); err != nil && !expectedErr(err) {
				run.problemf("Flush: unexpected error %v", err)
			}
		case 12:
			if err := d.Compact(nil, nil); err != nil && !expectedErr(err) {
				run.problemf("Compact: unexpected error %v", err)
			}
		}
	}
	for i := range faultBatches {
		checkGet(i)
	}
	it := d.NewIter(nil)
	for ok := it.First(); ok; ok = it.Next() {
		var b, j int
		if _, err := fmt.Sscanf(string(it.Key()), "b%03d/k%d", &b, &j); err != nil || b >= faultBatches || j >= faultKeysEach {
			run.problemf("scan: unexpected key %q", it.Key())
			continue
		}
		if string(it.Value()) != faultValue(b, j) {
			run.problemf("scan: %s = %.20q, wrong value", it.Key(), it.Value())
		}
	}
	if err := it.Close(); err != nil && !expectedErr(err) {
		run.problemf("scan: unexpected error %v", err)
	}
	if err := d.Close(); err != nil && !expectedErr(err) {
		run.problemf("Close: unexpected error %v", err)
	}
}

// runWithWatchdog runs the workload and fails t if it takes too long.
func runWithWatchdog(t *testing.T, label string, fs vfs.FS) *faultRun {
	t.Helper()
	run := &faultRun{}
	done := make(chan any, 1)
	go func() {
		defer func() { done <- recover() }()
		faultWorkload(fs, run)
	}()
	select {
	case p := <-done:
		if p != nil {
			t.Fatalf("%s: panic: %v", label, p)
		}
	case <-time.After(30 * time.Second):
		buf := make([]byte, 1<<20)
		n := runtime.Stack(buf, true)
		t.Fatalf("%s: workload hung for 30s\n%s", label, buf[:n])
	}
	return run
}

// verifyAfterRestart reopens the files without faults and checks every
// batch against its outcome.
func verifyAfterRestart(t *testing.T, label string, mem vfs.FS, run *faultRun) {
	t.Helper()
	for _, p := range run.problems {
		t.Errorf("%s: %s", label, p)
	}
	if t.Failed() {
		t.FailNow()
	}
	d, err := kv.Open("db", faultOptions(mem))
	if err != nil {
		t.Fatalf("%s: reopen without faults: %v", label, err)
	}
	defer d.Close()
	for b := range faultBatches {
		present := 0
		for j := range faultKeysEach {
			v, err := d.Get(faultKey(b, j))
			switch {
			case err == nil && string(v) == faultValue(b, j):
				present++
			case err == nil:
				t.Fatalf("%s: after restart %s has a wrong value", label, faultKey(b, j))
			case !errors.Is(err, kv.ErrNotFound):
				t.Fatalf("%s: after restart Get(%s): %v", label, faultKey(b, j), err)
			}
		}
		switch {
		case run.outcome[b] == acked && present != faultKeysEach:
			t.Fatalf("%s: acknowledged batch %d lost (%d of %d keys present)", label, b, present, faultKeysEach)
		case run.outcome[b] == notAttempted && present != 0:
			t.Fatalf("%s: batch %d was never written but %d keys are present", label, b, present)
		case present != 0 && present != faultKeysEach:
			t.Fatalf("%s: batch %d partially applied (%d of %d keys)", label, b, present, faultKeysEach)
		}
	}
}

func TestFaultInjectionEveryOperation(t *testing.T) {
	// Count the operations of a clean run.
	count := errorfs.Wrap(vfs.NewMem(), errorfs.OpAll)
	run := runWithWatchdog(t, "clean run", count)
	for b, o := range run.outcome {
		if o != acked {
			t.Fatalf("clean run: batch %d not acknowledged", b)
		}
	}
	total := count.Count()
	if total < 100 {
		t.Fatalf("the workload made only %d file-system operations", total)
	}
	stride := int64(1)
	if testing.Short() {
		stride = 7
	}
	var points int
	for _, sticky := range []bool{false, true} {
		for n := int64(1); n <= total; n += stride {
			mem := vfs.NewMem()
			efs := errorfs.Wrap(mem, errorfs.OpAll)
			efs.FailAt(n, sticky)
			label := fmt.Sprintf("fail op %d/%d (sticky %v)", n, total, sticky)
			run := runWithWatchdog(t, label, efs)
			if efs.Injected() == 0 {
				// The run took another path and never reached n: fine,
				// but count only the points that injected.
				continue
			}
			points++
			verifyAfterRestart(t, label+": "+efs.LastInjected(), mem, run)
		}
	}
	t.Logf("%d operations in the workload; %d fault points injected and verified", total, points)
	if points < int(total) && !testing.Short() {
		t.Fatalf("only %d fault points were reached in two sweeps of %d operations", points, total)
	}
}

// TestFaultInjectionSoak repeats the sweep over a larger workload shape
// by rerunning it with each kind of operation counted on its own, so the
// Nth sync, the Nth rename and so on are each failed in turn.
func TestFaultInjectionSoak(t *testing.T) {
	testutil.SkipUnlessSoak(t)
	kinds := []errorfs.Op{errorfs.OpRead, errorfs.OpWrite, errorfs.OpSync, errorfs.OpCreate, errorfs.OpOpen, errorfs.OpRename, errorfs.OpRemove, errorfs.OpList}
	points := 0
	for _, k := range kinds {
		count := errorfs.Wrap(vfs.NewMem(), k)
		runWithWatchdog(t, "count "+k.String(), count)
		for n := int64(1); n <= count.Count(); n++ {
			for _, sticky := range []bool{false, true} {
				mem := vfs.NewMem()
				efs := errorfs.Wrap(mem, k)
				efs.FailAt(n, sticky)
				label := fmt.Sprintf("fail %s %d (sticky %v)", k, n, sticky)
				run := runWithWatchdog(t, label, efs)
				if efs.Injected() > 0 {
					points++
					verifyAfterRestart(t, label+": "+efs.LastInjected(), mem, run)
				}
			}
		}
	}
	t.Logf("%d fault points verified", points)
}
