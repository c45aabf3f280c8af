package main

// readwhilewriting and readmissingwhilewriting read while a writer
// writes, as db_bench's readwhilewriting does: every other read workload
// reads a settled tree, but users read while they write, and then the
// tree is live: L0 tables arrive with every flush, compactions take them
// away, and a Get probes whatever runs are there at that moment. That is
// where per-table filters sized by a memory budget (sievekv's Monkey
// allocation, and its accounting of the tables a compaction is still
// writing) meet tables the budget sized a moment ago.
//
// Each engine runs them on its main DB as the loads before them left it
// (fillrandom, then overwrite in the default list): the same operations
// for every engine, and no full compaction or extra settle before the
// clock. The readers Get present keys (readwhilewriting) or absent ones
// (readmissingwhilewriting, where the filters decide) for the same time
// on every engine (-whilewriting: timeWhileWriting says why not the same
// count); beside them one writer overwrites random present keys, the same
// sequence for every engine, at full speed (no rate limit, for any
// engine) until the reads end; the reads start once its first write is
// done, so that every phase reads beside a writer that got going. The
// readers' ops/s and latencies are the result; the writer's ops/s is
// reported beside them, since an engine that wrote less would leave its
// readers more of the machine and fewer tables to probe (alloc B/op is
// the process's allocation over the reads, the writer's included). On a
// shared 2-core machine the writer is mostly waiting for a core (1M-key
// profile: about an eighth of its time on CPU), so its rate follows its
// share of the cores more than its cost per write. The writes keep
// the key set as it was, so the workloads after them read the same keys.
//
// reads/op counts only the readers' table reads: each reader goroutine
// is locked to its OS thread, and the file wrappers count a ReadAt made
// on one of those threads apart (ioCounters.readerThreads), so the
// flushes' and compactions' reads are not charged to the Gets. A table
// opened, or its filter loaded, on a Get's path counts as the Get's.
// pebble-l6filters runs them too, each Get on an iterator of its own
// (liveGet), since the iterator it reuses elsewhere reads the tree as it
// was when the iterator opened.

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"runtime/pprof"
	"sync/atomic"
	"time"

	"github.com/schollz/progressbar/v3"
)

// whileWritingReaders is the readers beside the one writer. The shared
// machines kvbench runs on have 2 cores: one reader and the writer take
// one each, and the engines' flushes and compactions compete with both,
// as a writing process's background work does. More readers than cores
// would measure the scheduler's turns, not the engines; how reads scale
// with goroutines is readrandom-par's question, on a quiet tree.
const whileWritingReaders = 1

// timeWhileWriting makes the while-writing phases ps time-bound: each
// engine's readers read for d, with ops a guard at 50 million a second
// (20 ns a Get) that no engine reaches (runParallel). With a fixed count of reads instead,
// the slower readers would read longer beside the same full-speed
// writer, and so on a tree with more L0 tables than the faster engine's
// readers ever met: the slower engine's reads made slower still. For the
// same time, every engine's writer gets as long to grow its tree.
func timeWhileWriting(ps []phaseSpec, d time.Duration) {
	for i := range ps {
		ps[i].duration, ps[i].ops = d, max(1, int(d.Seconds()*timedOpsGuardPerSecond))
	}
}

// timedOpsGuardPerSecond bounds a timed phase's reads per second of its
// duration: a guard against a runaway loop, not a figure any engine
// reaches.
const timedOpsGuardPerSecond = 50_000_000

// isWhileWriting reports whether w reads beside a writer.
func isWhileWriting(w string) bool { return w == "readwhilewriting" || w == "readmissingwhilewriting" }

// writerRun is what a while-writing phase's writer did.
type writerRun struct {
	ops     int
	written int64
	elapsed time.Duration
}

// runWhileWriting runs phase p's reads (readers, from warmReaders) while
// p.writer runs on a goroutine of its own, as fast as it goes, until the
// reads end. The reads start only once the writer's first write is done:
// started together, the readers could run to their end before the
// scheduler gave the writer a turn (a busy 2-core machine, a short phase),
// and the phase would have read a quiet tree with no writer beside it. Each
// reader is locked to its OS thread, which io counts the reads of apart.
// It returns how many reads ran, how many found their key, the readers'
// own time (not the writer's first write before them, nor the write in
// flight it finishes after them), and what the writer did.
func runWhileWriting(p phaseSpec, readers []opFunc, io *ioCounters, lat *[]time.Duration, bar *progressbar.ProgressBar) (int, int, time.Duration, writerRun, error) {
	var stop atomic.Bool
	var wr writerRun
	var werr error
	wrote, stopped := make(chan struct{}), make(chan struct{})
	// The goroutines carry a pprof label (kvbench=writer, reader), so that
	// a -cpuprofile tells the writer's time from the readers' and from
	// the engines' background work.
	go pprof.Do(context.Background(), pprof.Labels("kvbench", "writer"), func(context.Context) {
		defer close(stopped)
		t0 := time.Now()
		for i := 0; !stop.Load(); i++ {
			n, _, err := p.writer(i)
			if err != nil {
				werr = fmt.Errorf("writer op %d: %w", i, err)
				break
			}
			wr.ops++
			wr.written += n
			if i == 0 {
				close(wrote)
			}
		}
		wr.elapsed = time.Since(t0)
	})
	select {
	case <-wrote:
	case <-stopped: // the first write failed
		return 0, 0, 0, wr, werr
	}
	start := time.Now()
	done, found, err := runParallel(p, readers, lat, bar, func() func() {
		pprof.SetGoroutineLabels(pprof.WithLabels(context.Background(), pprof.Labels("kvbench", "reader")))
		runtime.LockOSThread()
		tid, ok := threadID()
		if ok {
			io.setReaderThread(tid, true)
		}
		return func() {
			if ok {
				io.setReaderThread(tid, false)
			}
			runtime.UnlockOSThread()
		}
	})
	elapsed := time.Since(start)
	stop.Store(true)
	<-stopped
	return done, found, elapsed, wr, errors.Join(err, werr)
}

// whileWritingDescription is the header line for the two workloads.
func whileWritingDescription(d time.Duration) string {
	counted := "only the readers' table reads (each reader locked to its OS thread, whose ReadAt calls are counted apart)"
	if _, ok := threadID(); !ok {
		counted = "every table read, the flushes' and compactions' included (this OS does not name threads)"
	}
	return fmt.Sprintf("readwhilewriting, readmissingwhilewriting: on each engine's main DB as the loads before them left it (no compaction or settle first), "+
		"%d reader(s) Get present (readwhilewriting) or absent keys for %s (-whilewriting) while 1 writer overwrites random present keys at full speed, "+
		"the same sequences for every engine; ops/s and latencies are the readers', the writer's ops/s is beside them; reads/op counts %s; "+
		"pebble-l6filters opens an iterator per Get there, so that it reads the live tree\n", whileWritingReaders, d, counted)
}

// writerLine sets each engine's writer rate beside the readers' on a
// while-writing workload.
func writerLine(rs []result, w string) string {
	if !isWhileWriting(w) {
		return ""
	}
	line := "writer beside the readers (overwrites/s, full speed):"
	for _, r := range rs {
		if r.Workload == w {
			line += fmt.Sprintf(" %s %.0f (%d);", r.Engine, r.WriterOpsPerSec, r.WriterOps)
		}
	}
	return line[:len(line)-1]
}

// whileWritingGoals are the read path's goals on a live tree. The readers'
// ops/s counts only if the writer kept up too: an engine whose writer
// wrote less would leave its readers more of the machine and fewer
// tables. Reads per absent Get are the filters' work on tables that
// come and go; against plain Pebble (which skips L6 filters) and the
// L6-filter variant.
func whileWritingGoals(rs []result) []goal {
	var gs []goal
	for _, w := range []string{"readwhilewriting", "readmissingwhilewriting"} {
		s, p := find(rs, w, "sievekv"), find(rs, w, "pebble")
		if s == nil || p == nil {
			continue
		}
		gs = append(gs, goal{"17", w + ": readers' ops/s >= 1.0x pebble, its writer's ops/s beside them >= 1.0x pebble's too",
			fmt.Sprintf("readers %s vs %s = %s; writer %s vs %s = %s", fmtFigure(s.OpsPerSec), fmtFigure(p.OpsPerSec), ratioStr(s.OpsPerSec, p.OpsPerSec),
				fmtFigure(s.WriterOpsPerSec), fmtFigure(p.WriterOpsPerSec), ratioStr(s.WriterOpsPerSec, p.WriterOpsPerSec)),
			s.OpsPerSec >= p.OpsPerSec && s.WriterOpsPerSec >= p.WriterOpsPerSec, true})
	}
	for _, peb := range []string{"pebble", "pebble-l6filters"} {
		s, p := find(rs, "readmissingwhilewriting", "sievekv"), find(rs, "readmissingwhilewriting", peb)
		if s == nil || p == nil {
			continue
		}
		gs = append(gs, goal{"17", "readmissingwhilewriting: reads per Get <= 1.0x " + peb,
			fmt.Sprintf("%.4f vs %.4f = %s (writer %s)", s.DataBlockReadsPerOp, p.DataBlockReadsPerOp, ratioStr(s.DataBlockReadsPerOp, p.DataBlockReadsPerOp),
				ratioStr(s.WriterOpsPerSec, p.WriterOpsPerSec)),
			s.DataBlockReadsPerOp <= p.DataBlockReadsPerOp, true})
	}
	return gs
}
