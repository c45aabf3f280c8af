package main

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/schollz/progressbar/v3"

	"github.com/sievekv/sievekv/kv"
)

// keySet holds the loaded keys and draws absent ones. Present keys are
// random keySize-byte strings whose last byte is even, in random order;
// absent keys are a present key with the last byte made odd, so they fall
// between present keys (inside every table's range) and are absent by
// construction: only filters can spare their reads.
type keySet struct {
	present [][]byte
	sorted  [][]byte
	keySize int
}

func newKeySet(seed uint64, n, keySize int) *keySet {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	ks := &keySet{keySize: keySize}
	seen := make(map[string]bool, n)
	for len(ks.present) < n {
		k := make([]byte, keySize)
		binary.BigEndian.PutUint64(k, rng.Uint64())
		for i := 8; i < keySize; i++ {
			k[i] = byte(rng.Uint32())
		}
		k[keySize-1] &^= 1
		if !seen[string(k)] {
			seen[string(k)] = true
			ks.present = append(ks.present, k)
		}
	}
	ks.sorted = slices.Clone(ks.present)
	slices.SortFunc(ks.sorted, func(a, b []byte) int { return bytesCompare(a, b) })
	return ks
}

func bytesCompare(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return int(a[i]) - int(b[i])
		}
	}
	return len(a) - len(b)
}

// deleteFraction is the share of keys deleterandom deletes (it loads 1M keys
// and deletes 30% of them). The deleted keys are the first 30% of present, which is
// in random order.
const deleteFraction = 0.3

func (ks *keySet) numDeleted() int { return int(float64(len(ks.present)) * deleteFraction) }

// scanLength is how many entries one scanrange op reads (db_bench's
// seekrandom with --seek_nexts=100 is the usual choice).
const scanLength = 100

// zipfS is the skew of the YCSB-style mixes. YCSB's zipfian constant is
// 0.99; math/rand/v2's Zipf needs s > 1, so 1.1 is the closest it offers.
const zipfS = 1.1

// result is one engine's measurement of one workload.
type result struct {
	Workload string `json:"workload"`
	Engine   string `json:"engine"`
	Filter   string `json:"filter"`
	Ops      int    `json:"ops"`
	// OpsPerSec, P50us...: throughput and latency of the timed loop.
	OpsPerSec float64 `json:"ops_per_sec"`
	P50us     float64 `json:"p50_us"`
	P99us     float64 `json:"p99_us"`
	P999us    float64 `json:"p999_us"`
	// DataBlockReadsPerOp is kvbench's own count: ReadAt calls on table
	// files per op, for every engine alike (block cache misses; with warm
	// caches these are data blocks). BytesReadPerOp is their bytes.
	DataBlockReadsPerOp float64 `json:"data_block_reads_per_op"`
	BytesReadPerOp      float64 `json:"bytes_read_per_op"`
	// EngineDataBlockReadsPerOp is sievekv's own Metrics.DiskReads.DataBlocks
	// per op (absent for other engines); in a while-writing phase it holds
	// the compactions' block reads too (quick runs: 1.49 per Get beside
	// the reader thread's 0.92).
	EngineDataBlockReadsPerOp *float64 `json:"engine_data_block_reads_per_op,omitempty"`
	// EngineFilterFPPerOp is sievekv's Metrics.Filter.FalsePositives per
	// op: the data blocks the filters let a Get read for a key the block
	// then did not hold, whether the block cache had the block or not.
	EngineFilterFPPerOp *float64 `json:"engine_filter_fp_per_op,omitempty"`
	// EngineWriteStalls and EngineWriteSlowdowns are sievekv's
	// Metrics.WriteStalls and WriteSlowdowns (1 ms delays) during the
	// phase: where its write latency tail comes from.
	EngineWriteStalls    uint64 `json:"engine_write_stalls,omitempty"`
	EngineWriteSlowdowns uint64 `json:"engine_write_slowdowns,omitempty"`
	// WriteAmp is table bytes written (flushes and compactions, counted by
	// the file-system wrapper, the memtable flushed at the end of the phase
	// included) over the key and value bytes the phase wrote. 0 for phases
	// that write nothing.
	WriteAmp float64 `json:"write_amp"`
	// LevelBytesWritten is, for a writing phase of an engine that reports
	// it (levelReporter), the table bytes written into each level during
	// the phase and its settle; Compactions the compactions run (moves
	// not counted) and LevelTablesAfter each level's table count once
	// settled.
	LevelBytesWritten []uint64 `json:"level_bytes_written,omitempty"`
	Compactions       uint64   `json:"compactions,omitempty"`
	LevelTablesAfter  []int    `json:"level_tables_after,omitempty"`
	// TombstonesAfter is, for a writing phase of an engine that counts
	// them (tombstoneReporter), the point tombstones its tables still hold
	// once settled, as space amp is measured.
	TombstonesAfter *uint64 `json:"tombstones_after,omitempty"`
	// SpaceAmp is the table files' bytes on disk over the key and value
	// bytes of the live keys, at the end of the phase.
	SpaceAmp float64 `json:"space_amp"`
	// FilterBytesPerKey is the live tables' filter memory over the live
	// keys (-1: the engine does not report it).
	FilterBytesPerKey float64 `json:"filter_bytes_per_key"`
	// PeakRSSMB is the process's peak resident set during the phase (all
	// engines of the run are open at once, so it is not one engine's).
	PeakRSSMB float64 `json:"peak_rss_mb"`
	// AllocBytesPerOp is Go heap allocation per op during the timed loop
	// (runtime.MemStats.TotalAlloc; the engines run one at a time and the
	// loop itself allocates nothing, so it is the engine's). Memory an
	// engine manages outside the Go heap (Pebble's block cache) is not in
	// it.
	AllocBytesPerOp float64 `json:"alloc_bytes_per_op"`
	// GCCycles is how many garbage collections ended during the timed
	// loop (runtime.MemStats.NumGC): the process's, but with one engine
	// running at a time and every loop starting from a collected heap
	// (quiesce), what that engine's garbage made due.
	GCCycles uint32 `json:"gc_cycles,omitempty"`
	// ValueSize is the value size of the run (a present-key Get's
	// allocation goal is relative to it).
	ValueSize  int     `json:"value_size"`
	Found      int     `json:"found"`
	ElapsedSec float64 `json:"elapsed_sec"`
	// ChunkSeconds is, for a phase measured in interleaved chunks (the
	// filter sweeps, the pairs), the time of each chunk in order: chunk k
	// of two results ran the same ops moments apart, so their per-chunk
	// ratios compare the two without the machine's swings (pairedSpeed).
	// ChunkCPUSeconds is the process's CPU time across each chunk
	// (pairedCPUSpeed).
	ChunkSeconds    []float64 `json:"chunk_seconds,omitempty"`
	ChunkCPUSeconds []float64 `json:"chunk_cpu_seconds,omitempty"`
	// EngineShape is sievekv's tree after readmissing-live (levelShape),
	// or in a paired phase as the clock started (and as it stopped, if
	// that differs).
	EngineShape string `json:"engine_shape,omitempty"`
	// RoundOpsPerSec and RoundWriteAmp are, in an isolated run of several
	// rounds (-isolate -rounds), this workload's and engine's ops/s and
	// write amp in each round, in round order (the result itself is the
	// median-ops/s round's): the spread the goals report (round_spread.go).
	RoundOpsPerSec []float64 `json:"round_ops_per_sec,omitempty"`
	RoundWriteAmp  []float64 `json:"round_write_amp,omitempty"`
	// WriterOps and WriterOpsPerSec are, in a while-writing phase
	// (while_writing.go), the overwrites its writer made beside the timed
	// reads and their rate over the writer's own time; the other figures
	// are the readers' (reads/op: the reader threads' table reads only).
	WriterOps       int     `json:"writer_ops,omitempty"`
	WriterOpsPerSec float64 `json:"writer_ops_per_sec,omitempty"`
	// PairedWith names the engine this one was measured against in
	// alternating chunks (pair.go), if it was.
	PairedWith string `json:"paired_with,omitempty"`
	// Samples (deletelarge) are table bytes over time while idle, as a
	// share of the pre-delete bytes; TableBytesRatio is the last one.
	Samples         []sample `json:"samples,omitempty"`
	TableBytesRatio float64  `json:"table_bytes_ratio,omitempty"`
	// EngineShadowedByLevel is sievekv's estimate, per level, of the bytes
	// its tombstones still shadow (Metrics.Levels[].ShadowedBytes) at the
	// end of deletelarge.
	EngineShadowedByLevel []uint64 `json:"engine_shadowed_by_level,omitempty"`
	// EngineTombstoneIndexPeak and EngineTombstoneIndexPeakBytesPerTombstone
	// are sievekv's tombstone index at its fullest by the end of the phase
	// (Metrics.TombstoneIndex.PeakEntries, PeakBytesPerTombstone): purge
	// compactions may have dropped the tombstones by then, and the filter
	// keeps the memory it grew to.
	EngineTombstoneIndexPeak                  uint64  `json:"engine_tombstone_index_peak,omitempty"`
	EngineTombstoneIndexPeakBytesPerTombstone float64 `json:"engine_tombstone_index_peak_bytes_per_tombstone,omitempty"`
	// EngineTombstoneIndexRebuilds, ...RebuildMs and ...UpdateMs are what
	// sievekv's tombstone index cost during the phase: the growths that
	// read the tables' tombstones, their time, and the time its adds and
	// removes took (Metrics.TombstoneIndex).
	EngineTombstoneIndexRebuilds  uint64  `json:"engine_tombstone_index_rebuilds,omitempty"`
	EngineTombstoneIndexRebuildMs float64 `json:"engine_tombstone_index_rebuild_ms,omitempty"`
	EngineTombstoneIndexUpdateMs  float64 `json:"engine_tombstone_index_update_ms,omitempty"`
	// EngineShadowedDropped and EngineShadowedDroppedBytes are the values
	// (and their key and value bytes) sievekv's compactions dropped early
	// during the phase and its settle, because a newer entry of their key
	// above already shadowed them; EngineShadowChecks and
	// EngineShadowPositives the tombstone-index lookups that chose which
	// values to confirm, and those answering "may have";
	// EngineShadowOverwriteLookups the values the index ruled out that
	// were looked up for a newer Set (Metrics.Compaction.Shadow*).
	EngineShadowedDropped        uint64 `json:"engine_shadowed_dropped,omitempty"`
	EngineShadowedDroppedBytes   uint64 `json:"engine_shadowed_dropped_bytes,omitempty"`
	EngineShadowChecks           uint64 `json:"engine_shadow_checks,omitempty"`
	EngineShadowPositives        uint64 `json:"engine_shadow_positives,omitempty"`
	EngineShadowOverwriteLookups uint64 `json:"engine_shadow_overwrite_lookups,omitempty"`
}

// opFunc performs op i and returns the user bytes it wrote and whether a
// read found its key (or for a scan, whether it read any entry).
type opFunc func(i int) (written int64, found bool, err error)

// phaseSpec is one timed loop.
type phaseSpec struct {
	workload string
	ops      int
	warmup   opFunc // may be nil
	op       opFunc
	// writes: flush after the loop and report write amplification.
	writes bool
	// wantFound checks the answers: -1 all found, 0 none, else no check.
	wantFound int
	// live, if > 0, is the number of live keys after the phase.
	live int
	// goroutines > 1 runs op from that many goroutines at once, each
	// taking the next i; op must then be safe for concurrent use.
	goroutines int
	// readers > 1 runs the timed loop on that many goroutines at once,
	// goroutine g running opFor(g) on its share of the ops (op and warmup
	// are then unused): throughput under concurrent Gets.
	readers int
	opFor   func(g int) opFunc
	// writer, if set, makes this a while-writing phase: it runs on a
	// goroutine of its own, op after op as fast as the engine takes them,
	// until the timed reads (p.readers goroutines of opFor), which start
	// after its first write, end; writes then means the writer's.
	writer opFunc
	// duration, if set, ends the readers' timed loop after that long (ops
	// is then a cap), and the phase counts the ops that ran.
	duration time.Duration
	// afterChunk, if set, runs after each chunk of a chunked measurement
	// (measureInterleaved), off the clock; hi is the chunk's end (ops for
	// the last). Its table writes count as the phase's.
	afterChunk func(hi int) error
}

// largeValueSize is filllarge's value size.
const largeValueSize = 4096

// largeFillOps is how many keys filllarge writes out of n loaded: n/25
// (16 MB of values at -quick, 160 MB at 1M keys), at least 1,000.
func largeFillOps(n int) int { return min(n, max(n/25, 1000)) }

// syncWriters is fillsync8's number of concurrent writers.
const syncWriters = 8

const (
	wantAll  = -1
	wantNone = 0
	noCheck  = 1
)

// measure runs one phase on one runner.
func measure(r *runner, p phaseSpec, progress io.Writer) (result, error) {
	if err := warmUp(p); err != nil {
		return result{}, err
	}
	var readers []opFunc
	if p.readers > 1 || p.writer != nil {
		var err error
		if readers, err = warmReaders(p); err != nil {
			return result{}, err
		}
	}
	quiesce()
	total := p.ops
	if p.duration > 0 {
		total = -1 // a timed phase's ops are not known ahead: a spinner
	}
	bar := newBar(progress, total, fmt.Sprintf("%-24s %-17s", p.workload, r.name))
	resetPeakRSS()
	m := newPhaseMeter(r, p)
	var shape string
	if p.writer != nil {
		shape = liveTreeOf(r.eng)
	}
	var ms0, ms1 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	start := time.Now()
	var written int64
	var found int
	var wr writerRun
	var reading time.Duration
	var err error
	done := p.ops
	switch {
	case p.writer != nil:
		done, found, reading, wr, err = runWhileWriting(p, readers, r.io, &m.lat, bar)
		written = wr.written
	case p.readers > 1:
		done, found, err = runParallel(p, readers, &m.lat, bar, nil)
	default:
		written, found, err = runOps(p, m.lat, bar)
	}
	if err != nil {
		return result{}, err
	}
	elapsed := time.Since(start)
	if p.writer != nil {
		elapsed = reading // the readers' time, without the writer's first write and last
	}
	if done == 0 {
		return result{}, fmt.Errorf("no op ran in %s", p.duration)
	}
	m.p.ops, m.lat = done, m.lat[:done] // a timed loop may end before its cap
	runtime.ReadMemStats(&ms1)
	m.add(elapsed, ms1.TotalAlloc-ms0.TotalAlloc, written, found)
	m.gcCycles += ms1.NumGC - ms0.NumGC
	bar.Finish()
	if p.writer != nil {
		// The tree as the clock started and as it stopped, before the
		// untimed flush and settle.
		if after := liveTreeOf(r.eng); after != shape {
			shape += " (by the end of the reads: " + after + ")"
		}
	}
	res, err := m.finish()
	if p.writer != nil {
		res.WriterOps, res.WriterOpsPerSec, res.EngineShape = wr.ops, float64(wr.ops)/wr.elapsed.Seconds(), shape
	}
	return res, err
}

// warmUp runs p's untimed warm-up ops.
func warmUp(p phaseSpec) error {
	if p.warmup == nil {
		return nil
	}
	for i := range min(p.ops/10, 20000) {
		if _, _, err := p.warmup(i); err != nil {
			return err
		}
	}
	return nil
}

// phaseMeter is one runner's measurement of one phase: its counters at
// the start, and the timed loop's latencies, time and allocation, which
// may come in pieces (the paired scans run each engine's loop in chunks).
type phaseMeter struct {
	r       *runner
	p       phaseSpec
	io0     ioSnapshot
	m0      kv.Metrics
	w0      levelWrites
	lat     []time.Duration // lat[i] is op i's latency
	elapsed time.Duration
	alloc   uint64
	written int64
	found   int
	// gcCycles: collections during the loop (measure's; the paired scans
	// leave it 0).
	gcCycles uint32
	// labels: the pprof labels runChunk gives its goroutine.
	labels context.Context
}

func newPhaseMeter(r *runner, p phaseSpec) *phaseMeter {
	m := &phaseMeter{r: r, p: p, io0: r.io.snapshot()}
	if p.duration == 0 {
		m.lat = make([]time.Duration, p.ops) // a timed phase's come from runParallel
	}
	if s, ok := r.eng.(*sieveEngine); ok {
		m.m0 = s.db.Metrics()
	}
	if lr, ok := r.eng.(levelReporter); ok {
		m.w0 = lr.levelWrites()
	}
	return m
}

// add counts a piece of the timed loop.
func (m *phaseMeter) add(elapsed time.Duration, alloc uint64, written int64, found int) {
	m.elapsed += elapsed
	m.alloc += alloc
	m.written += written
	m.found += found
}

// finish ends the phase (a writing phase's flush and compactions are
// counted, untimed) and makes its result.
func (m *phaseMeter) finish() (result, error) {
	r, p := m.r, m.p
	if p.writes {
		// Untimed, but its table writes count: the memtable's flush and
		// the compactions the phase made due are the phase's write
		// amplification, and the next phase starts on a quiet DB.
		if err := r.eng.flush(); err != nil {
			return result{}, fmt.Errorf("flush: %w", err)
		}
		if err := settle(r); err != nil {
			return result{}, err
		}
	}
	io0, io1 := m.io0, r.io.snapshot()
	reads, readBytes := io1.reads-io0.reads, io1.readBytes-io0.readBytes
	if _, ok := threadID(); ok && p.writer != nil {
		reads, readBytes = io1.readerReads-io0.readerReads, io1.readerReadBytes-io0.readerReadBytes
	}
	lat := m.lat
	slices.Sort(lat)
	n := float64(p.ops)
	found, written := m.found, m.written
	res := result{
		ValueSize:           r.valueSize,
		Workload:            p.workload,
		Engine:              r.name,
		Filter:              r.filter,
		Ops:                 p.ops,
		OpsPerSec:           n / m.elapsed.Seconds(),
		P50us:               pct(lat, 0.5),
		P99us:               pct(lat, 0.99),
		P999us:              pct(lat, 0.999),
		DataBlockReadsPerOp: float64(reads) / n,
		BytesReadPerOp:      float64(readBytes) / n,
		PeakRSSMB:           peakRSSMB(),
		AllocBytesPerOp:     float64(m.alloc) / n,
		GCCycles:            m.gcCycles,
		Found:               found,
		ElapsedSec:          m.elapsed.Seconds(),
	}
	if s, ok := r.eng.(*sieveEngine); ok {
		m0, m1 := m.m0, s.db.Metrics()
		v := float64(m1.DiskReads.DataBlocks-m0.DiskReads.DataBlocks) / n
		res.EngineDataBlockReadsPerOp = &v
		fp := float64(m1.Filter.FalsePositives-m0.Filter.FalsePositives) / n
		res.EngineFilterFPPerOp = &fp
		res.EngineWriteStalls = m1.WriteStalls - m0.WriteStalls
		res.EngineWriteSlowdowns = m1.WriteSlowdowns - m0.WriteSlowdowns
		if strings.HasPrefix(p.workload, "readmissing-live") {
			res.EngineShape = levelShape(m1)
		}
		res.EngineTombstoneIndexPeak = m1.TombstoneIndex.PeakEntries
		res.EngineTombstoneIndexPeakBytesPerTombstone = m1.TombstoneIndex.PeakBytesPerTombstone
		t0, t1 := m0.TombstoneIndex, m1.TombstoneIndex
		res.EngineTombstoneIndexRebuilds = t1.Rebuilds - t0.Rebuilds
		res.EngineTombstoneIndexRebuildMs = float64(t1.RebuildTime-t0.RebuildTime) / 1e6
		res.EngineTombstoneIndexUpdateMs = float64(t1.UpdateTime-t0.UpdateTime) / 1e6
		c0, c1 := m0.Compaction, m1.Compaction
		res.EngineShadowedDropped = c1.ShadowedDropped - c0.ShadowedDropped
		res.EngineShadowedDroppedBytes = c1.ShadowedDroppedBytes - c0.ShadowedDroppedBytes
		res.EngineShadowChecks, res.EngineShadowPositives = c1.ShadowChecks-c0.ShadowChecks, c1.ShadowPositives-c0.ShadowPositives
		res.EngineShadowOverwriteLookups = c1.ShadowOverwriteLookups - c0.ShadowOverwriteLookups
	}
	if written > 0 {
		res.WriteAmp = float64(io1.writeBytes-io0.writeBytes) / float64(written)
		if lr, ok := r.eng.(levelReporter); ok {
			phaseLevelWrites(&res, m.w0, lr.levelWrites())
		}
		if tr, ok := r.eng.(tombstoneReporter); ok {
			n := tr.tombstonesLeft()
			res.TombstonesAfter = &n
		}
	}
	if p.live > 0 {
		r.live = p.live
	}
	liveBytes := float64(r.live) * float64(r.keySize+r.valueSize)
	if disk := tableBytesOnDisk(r.dir); disk >= 0 && liveBytes > 0 {
		res.SpaceAmp = float64(disk) / liveBytes
	}
	res.FilterBytesPerKey = -1
	if fb := r.eng.filterBytes(); fb >= 0 && r.live > 0 {
		res.FilterBytesPerKey = float64(fb) / float64(r.live)
	}
	switch {
	case p.wantFound == wantAll && found != p.ops:
		return res, fmt.Errorf("found %d of %d keys that are present: wrong answers", found, p.ops)
	case p.wantFound == wantNone && found != 0:
		return res, fmt.Errorf("found %d of %d keys that are absent: wrong answers", found, p.ops)
	}
	return res, nil
}

// runOps runs p's timed loop, recording op i's latency in lat[i]: in this
// goroutine, or with p.goroutines workers claiming ops from a shared counter.
func runOps(p phaseSpec, lat []time.Duration, bar *progressbar.ProgressBar) (written int64, found int, err error) {
	workers := max(p.goroutines, 1)
	var next, sumWritten, sumFound atomic.Int64
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for g := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= p.ops {
					return
				}
				t0 := time.Now()
				w, ok, err := p.op(i)
				lat[i] = time.Since(t0)
				if err != nil {
					errs[g] = fmt.Errorf("op %d: %w", i, err)
					next.Store(int64(p.ops)) // stop the others
					return
				}
				sumWritten.Add(w)
				if ok {
					sumFound.Add(1)
				}
				if i&255 == 255 {
					bar.Add(256)
				}
			}
		}()
	}
	wg.Wait()
	return sumWritten.Load(), int(sumFound.Load()), errors.Join(errs...)
}

// settle waits until r's engine has no flush or compaction running (nor
// one due that it starts on its own once idle: sievekv's idle purge) and
// its table files have seen no write for 150 ms: the tree a user finds
// after the phase, once the DB has been left alone.
func settle(r *runner) error { return waitFor(r, 150*time.Millisecond, true) }

// waitQuiet waits until r's engine has no flush or compaction running and
// its table files have seen no write for quiet. It does not wait for an
// idle purge: a wait between a workload's chunks is not the DB left idle,
// and an idle purge after every chunk would be work no user running the
// workload sees.
func waitQuiet(r *runner, quiet time.Duration) error { return waitFor(r, quiet, false) }

// waitFor is settle (idle true) or waitQuiet.
func waitFor(r *runner, quiet time.Duration, idle bool) error {
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		w := r.io.writeBytes.Load()
		time.Sleep(quiet)
		if !r.eng.busy() && !(idle && idleWorkDue(r.eng)) && r.io.writeBytes.Load() == w {
			return nil
		}
	}
	return fmt.Errorf("background work still running after 2 minutes")
}

func pct(sorted []time.Duration, q float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	i := min(int(float64(len(sorted))*q), len(sorted)-1)
	return float64(sorted[i].Nanoseconds()) / 1e3
}

func newBar(w io.Writer, n int, desc string) *progressbar.ProgressBar {
	return progressbar.NewOptions(n,
		progressbar.OptionSetWriter(w),
		progressbar.OptionSetDescription(desc),
		progressbar.OptionSetVisibility(w != io.Discard),
		progressbar.OptionThrottle(200*time.Millisecond),
		progressbar.OptionShowCount(),
		progressbar.OptionClearOnFinish(),
		progressbar.OptionSetWidth(20),
	)
}

// valuePool is the source of values: each value is a window of it whose
// first half is random and second half zeros, so values compress to about
// half, as db_bench's default --compression_ratio=0.5 makes them. (All-zero
// values would let snappy hide every engine's write amplification.)
var valuePool = func() []byte {
	rng := rand.New(rand.NewPCG(7, 7))
	p := make([]byte, 1<<16)
	for i := 0; i < len(p); i += 64 {
		for j := i; j < i+32; j++ {
			p[j] = byte(rng.Uint32())
		}
	}
	return p
}()

// valueFor fills v with the value of op i: a window of valuePool chosen by
// i, with i itself in its first bytes so overwrites change the value.
func valueFor(v []byte, i int) []byte {
	off := (i * 64) % (len(valuePool) - len(v))
	copy(v, valuePool[off:off+len(v)])
	binary.LittleEndian.PutUint64(v[:8], uint64(i)+1)
	return v
}

// phases builds the timed loops of workload w for runner r. Every runner
// gets the same operation sequence (each phase seeds its own generator), so
// the engines do exactly the same work.
func phases(w string, r *runner, ks *keySet, ops int, seed uint64) ([]phaseSpec, error) {
	n := len(ks.present)
	val := make([]byte, r.valueSize)
	newRNG := func(salt uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, salt)) }
	kvLen := int64(ks.keySize + r.valueSize)
	set := func(k []byte, i int) (int64, bool, error) {
		return kvLen, false, r.eng.set(k, valueFor(val, i))
	}
	engGet := r.eng.get
	if v, ok := r.eng.(pebbleL6View); ok && isWhileWriting(w) {
		engGet = v.liveGet // its reused iterator would read an old tree
	}
	appendGet, _ := r.eng.(appendGetter)
	// get reads k; value is the calling op's own buffer, for an engine
	// that copies values into one (appendGetter).
	get := func(k []byte, value *[]byte) (int64, bool, error) {
		if appendGet != nil {
			v, ok, err := appendGet.getAppend((*value)[:0], k)
			*value = v
			return 0, ok, err
		}
		ok, err := engGet(k)
		return 0, ok, err
	}
	// uniform reads draw from keys; absent ones flip the last bit.
	uniform := func(salt uint64, keys [][]byte, absent bool) opFunc {
		rng := newRNG(salt)
		buf := make([]byte, ks.keySize)
		var value []byte
		return func(int) (int64, bool, error) {
			k := keys[rng.IntN(len(keys))]
			if absent {
				copy(buf, k)
				buf[len(buf)-1] |= 1
				k = buf
			}
			return get(k, &value)
		}
	}
	ycsb := func(name string, salt uint64, readShare float64) phaseSpec {
		mk := func(salt uint64) opFunc {
			rng := newRNG(salt)
			z := rand.NewZipf(rng, zipfS, 1, uint64(n-1))
			var value []byte
			return func(i int) (int64, bool, error) {
				// present is in random order, so zipf rank r maps to a
				// random key: YCSB's "scrambled" zipfian.
				k := ks.present[z.Uint64()]
				if rng.Float64() < readShare {
					return get(k, &value)
				}
				w, _, err := set(k, i)
				return w, true, err
			}
		}
		return phaseSpec{workload: name, ops: ops, warmup: mk(salt + 1000), op: mk(salt), wantFound: wantAll}
	}
	switch w {
	case "fillseq":
		return []phaseSpec{{workload: w, ops: n, writes: true, wantFound: noCheck, live: n,
			op: func(i int) (int64, bool, error) { return set(ks.sorted[i], i) }}}, nil
	case "fillrandom":
		return []phaseSpec{{workload: w, ops: n, writes: true, wantFound: noCheck, live: n,
			op: func(i int) (int64, bool, error) { return set(ks.present[i], i) }}}, nil
	case "overwrite":
		rng := newRNG(3)
		return []phaseSpec{{workload: w, ops: n, writes: true, wantFound: noCheck,
			op: func(i int) (int64, bool, error) { return set(ks.present[rng.IntN(n)], n+i) }}}, nil
	case "fillsync8":
		// Durable writes from several goroutines: what group commit makes
		// of one fsync per acknowledged write. Fewer ops, as each waits
		// for the disk.
		nops := min(n, max(ops/5, 1))
		return []phaseSpec{{workload: w, ops: nops, writes: true, wantFound: noCheck, live: nops, goroutines: syncWriters,
			op: func(i int) (int64, bool, error) {
				return kvLen, false, r.eng.syncSet(ks.present[i], valueFor(make([]byte, r.valueSize), i))
			}}}, nil
	case "filllarge":
		// Random keys with 4 KiB values (runWorkload gives it a runner of
		// largeValueSize values), each Set a page of WAL: what a store of
		// documents or blobs writes, where the commit path's per-byte
		// costs (WAL pages, memtable copies) show in the tail.
		if r.valueSize != largeValueSize {
			return nil, fmt.Errorf("filllarge wants %d-byte values, the runner has %d", largeValueSize, r.valueSize)
		}
		nops := largeFillOps(n)
		return []phaseSpec{{workload: w, ops: nops, writes: true, wantFound: noCheck, live: nops,
			op: func(i int) (int64, bool, error) { return set(ks.present[i], i) }}}, nil
	case "readrandom":
		return []phaseSpec{{workload: w, ops: ops, warmup: uniform(11, ks.present, false),
			op: uniform(10, ks.present, false), wantFound: wantAll}}, nil
	case "readrandom-par":
		if !r.eng.concurrentReads() {
			return nil, nil
		}
		var ps []phaseSpec
		for _, g := range []int{2, 4, 8} {
			ps = append(ps, phaseSpec{workload: fmt.Sprintf("readrandom-par%d", g), ops: ops, wantFound: wantAll, readers: g,
				opFor: func(i int) opFunc { return uniform(uint64(100*g+i), ks.present, false) }})
		}
		return ps, nil
	case "readmissing", "readmissing-live":
		// readmissing-live runs before the full compaction: on L0 and
		// the levels the fill left, where each absent Get probes one
		// filter per run.
		return []phaseSpec{{workload: w, ops: ops, warmup: uniform(21, ks.present, true),
			op: uniform(20, ks.present, true), wantFound: wantNone}}, nil
	case "readhot":
		// db_bench's readhot: reads confined to 1% of the keys.
		hot := ks.present[:max(1, n/100)]
		return []phaseSpec{{workload: w, ops: ops, warmup: uniform(31, hot, false),
			op: uniform(30, hot, false), wantFound: wantAll}}, nil
	case "scanrange":
		mk := func(salt uint64) opFunc {
			rng := newRNG(salt)
			return func(int) (int64, bool, error) {
				got, err := r.eng.scan(ks.present[rng.IntN(n)], scanLength)
				return 0, got > 0, err
			}
		}
		return []phaseSpec{{workload: w, ops: max(ops/10, 1), warmup: mk(41), op: mk(40), wantFound: wantAll}}, nil
	case "ycsb-a":
		return []phaseSpec{ycsb(w, 50, 0.5)}, nil
	case "ycsb-b":
		return []phaseSpec{ycsb(w, 60, 0.95)}, nil
	case "ycsb-c":
		return []phaseSpec{ycsb(w, 70, 1.0)}, nil
	case "readwhilewriting", "readmissingwhilewriting":
		absent := w == "readmissingwhilewriting"
		want, salt := wantAll, uint64(110)
		if absent {
			want, salt = wantNone, 120
		}
		rng := newRNG(salt + 1)
		return []phaseSpec{{workload: w, ops: ops, writes: true, wantFound: want, readers: whileWritingReaders,
			opFor:  func(g int) opFunc { return uniform(salt+2+uint64(g), ks.present, absent) },
			writer: func(i int) (int64, bool, error) { return set(ks.present[rng.IntN(n)], 2*n+i) }}}, nil
	case "deleterandom":
		nd := ks.numDeleted()
		deleted, kept := ks.present[:nd], ks.present[nd:]
		del := phaseSpec{workload: w, ops: nd, writes: true, wantFound: noCheck, live: n - nd,
			op: func(i int) (int64, bool, error) {
				return int64(ks.keySize), false, r.eng.del(deleted[i])
			}}
		return []phaseSpec{
			del,
			{workload: w + "-getdeleted", ops: ops, warmup: uniform(81, deleted, false),
				op: uniform(80, deleted, false), wantFound: wantNone},
			{workload: w + "-getkept", ops: ops, warmup: uniform(91, kept, false),
				op: uniform(90, kept, false), wantFound: wantAll},
		}, nil
	}
	return nil, fmt.Errorf("unknown workload %q", w)
}
