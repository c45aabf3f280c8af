// Command kvbench loads the same keys into sievekv, Pebble v2 and goleveldb,
// configured alike, and measures them side by side on the same operation
// sequences: ops/s, latency percentiles, table-file reads per op counted the
// same way for every engine (a file-system wrapper counting ReadAt calls on
// table files), write and space amplification, filter memory and peak RSS.
//
//	go run ./cmd/kvbench -quick                 # 100k keys, about a minute
//	go run ./cmd/kvbench -n 1000000 -sweep      # the full comparison + filter sweep
//	go run ./cmd/kvbench -quick -json out.json -plot docs/charts -md part.md
//
// The engines run alternately, workload by workload, so that machine drift
// hits all of them; only ratios measured in one run mean anything on a
// shared machine. Each timed loop starts from the same heap state
// (quiesce.go). The filter sweep (-sweep) repeats readmissing on sievekv
// with each table filter, answering "what does 1% vs 0.1% buy" with real
// reads. The budget sweep (-budgetsweep) loads a fresh DB per filter family
// and budget and runs readmissing-live on it: reads per absent Get on the
// shape the fill left (L0 and several levels) against filter bits per key,
// for Bloom, binary fuse 8, the auto filter under uniform and Monkey
// allocation, and Pebble. See docs/benchmarks.md and docs/design.md
// ("Filter budget") for results.
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/pprof"
	"slices"
	"strings"
	"time"

	"github.com/sievekv/sievekv/internal/benchreport"
	"github.com/sievekv/sievekv/kv"
)

func main() { benchreport.Main("kvbench", run) }

// allWorkloads is the default order: loads first (readmissing-live reads
// a DB of its own per engine, loaded uncompacted: live_load.go), the reads
// beside a writer on the tree the loads left (while_writing.go), then reads
// of the loaded (fully compacted) data, the mixes, and the deletes last
// since they change the key set.
var allWorkloads = []string{"fillseq", "fillrandom", "readmissing-live", "overwrite", "readwhilewriting", "readmissingwhilewriting", "readrandom", "readmissing", "readhot",
	"readrandom-par", "scanrange", "scanempty", "scanshort", "ycsb-c", "ycsb-b", "ycsb-a", "deleterandom", "fillsync8", "filllarge", "deletelarge", "deleterangelarge", "deletechurn"}

// mainDBWriters are the workloads that write to an engine's main DB, the
// one fillrandom loads and deleterandom deletes from: the loads, the YCSB
// updates, and the while-writing workloads' writer. sievekv-notsi and
// sievekv-control run every one of them, reads included where they come
// with the writes, so that the delete pair's DBs reach deleterandom alike
// (delete_pair.go): a while-writing workload's writer overwrites the main
// DB for a set time, so without it sievekv alone reached the deletes with
// that history (its tables, compactions and garbage), and the A/A control
// compared two DBs that differed by more than the index.
var mainDBWriters = []string{"fillrandom", "overwrite", "readwhilewriting", "readmissingwhilewriting", "ycsb-b", "ycsb-a", "deleterandom"}

// allEngines is what -engines all means. sievekv-notsi is sievekv with
// DisableTombstoneIndex, run on the workloads that write only, so that the
// tombstone index's cost shows on and off (deleterandom).
// sievekv-rf is sievekv with range filters (-range-filter-bits), run on
// the bounded-scan workloads only.
var allEngines = []string{"sievekv", "pebble", "pebble-l6filters", "goleveldb", "sievekv-notsi", "sievekv-rf"}

// controlEngines run only when -engines names them: sievekv-control is
// sievekv again (the tombstone index on) on sievekv-notsi's workloads, the
// A/A control measured with the delete pair (delete_pair.go).
var controlEngines = []string{"sievekv-control"}

// sweepFilters is the filter sweep's list: name, filter, Bloom bits per
// key, and for the auto filter its allocation (at -filterbits).
var sweepFilters = []struct {
	name  string
	f     kv.FilterType
	bits  int
	alloc kv.FilterAllocation
}{
	{"none", kv.FilterNone, 0, 0},
	{"bloom-6", kv.FilterBloom, 6, 0},
	{"bloom-10", kv.FilterBloom, 10, 0},
	{"bloom-14", kv.FilterBloom, 14, 0},
	{"blocked-bloom-10", kv.FilterBlockedBloom, 10, 0},
	{"xor-8", kv.FilterXor8, 0, 0},
	{"binary-fuse-8", kv.FilterBinaryFuse8, 0, 0},
	{"binary-fuse-16", kv.FilterBinaryFuse16, 0, 0},
	{"ribbon-7", kv.FilterRibbon, 0, 0},
	{"auto-uniform", kv.FilterAuto, 0, kv.FilterAllocationUniform},
	{"auto-monkey", kv.FilterAuto, 0, kv.FilterAllocationMonkey},
}

// maxValueSize bounds -valuesize (16 MiB, 4096 times filllarge's values):
// far past it a run only dies allocating.
const maxValueSize = 1 << 24

type flags struct {
	n, ops, keySize, valueSize int
	memTable, blockSize        int
	cache                      int64
	filter                     string
	filterBits                 float64
	allocation                 string
	engines, workloads         string
	dir                        string
	out                        benchreport.Outputs
	replot                     string
	seed                       uint64
	quick, sweep, progress     bool
	wal, isolate               bool
	rounds, rotate             int
	budgetSweep                bool
	budgetBits, budgetRuns     string
	budgetMemTable, budgetN    int
	cpuProfile, memProfile     string
	idle, whileWriting         time.Duration
	rangeFilterBits            float64
}

func parseFlags(args []string, stderr io.Writer) (*flags, error) {
	fl := &flags{}
	fs := flag.NewFlagSet("kvbench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.IntVar(&fl.n, "n", 1_000_000, "keys to load")
	fs.IntVar(&fl.ops, "ops", 200_000, "timed operations per read workload and engine (scanrange: ops/10 scans)")
	fs.IntVar(&fl.keySize, "keysize", 16, "key size in bytes")
	fs.IntVar(&fl.valueSize, "valuesize", 100, "value size in bytes")
	fs.IntVar(&fl.memTable, "memtable", 4<<20, "memtable size in bytes (every engine)")
	fs.IntVar(&fl.blockSize, "blocksize", 4096, "data block size in bytes (every engine)")
	fs.Int64Var(&fl.cache, "cache", 8<<20, "block cache size in bytes (every engine; Pebble gets + 2 x memtable, see output)")
	fs.StringVar(&fl.filter, "filter", kv.FilterName(kv.FilterAuto),
		"sievekv table filter: "+strings.Join(kv.FilterTypeNames(), ", "))
	fs.Float64Var(&fl.filterBits, "filterbits", 10, "filter memory budget in bits per key: sievekv's FilterBitsPerKey (auto filter) and Pebble's Bloom bits")
	fs.StringVar(&fl.allocation, "allocation", kv.FilterAllocationMonkey.String(), "sievekv's FilterAllocation for the auto filter: monkey or uniform")
	fs.StringVar(&fl.engines, "engines", "all", "comma-separated engines, or all: "+strings.Join(allEngines, ",")+" (and, named only, "+strings.Join(controlEngines, ",")+")")
	fs.StringVar(&fl.workloads, "workloads", "all", "comma-separated workloads, or all: "+strings.Join(allWorkloads, ","))
	fs.StringVar(&fl.dir, "dir", "", "directory for the databases, new or empty: kvbench removes the workloads' DBs it makes there and keeps the main ones (default: a temp dir, removed after)")
	fl.out.Register(fs)
	fs.StringVar(&fl.replot, "replot", "", "run nothing: draw the charts (-plot DIR) from this earlier -json FILE")
	fs.Uint64Var(&fl.seed, "seed", 1, "key and operation generator seed")
	fs.BoolVar(&fl.quick, "quick", false, "quick mode: 100k keys, 50k ops, 1 MiB memtable, 1 MiB cache (about a minute)")
	fs.BoolVar(&fl.sweep, "sweep", false, "also run the filter sweep: readmissing on sievekv with each filter")
	fs.BoolVar(&fl.progress, "progress", true, "progress bars on stderr")
	fs.BoolVar(&fl.budgetSweep, "budgetsweep", false, "also run the filter budget sweep: readmissing-live against bits per key for Bloom, binary fuse 8, auto-uniform, auto-Monkey and Pebble")
	fs.StringVar(&fl.budgetBits, "budgetbits", "6,8,10,12,14", "the budget sweep's filter budgets in bits per key, comma-separated")
	fs.StringVar(&fl.budgetRuns, "budgetruns", "", "the budget sweep: write each sievekv configuration's runs (keys, widths, predicted and measured FP, cache misses) beside the best allocations of the same memory to this file")
	fs.IntVar(&fl.budgetN, "budgetn", 0, "the budget sweep's keys (default -n)")
	fs.IntVar(&fl.budgetMemTable, "budgetmemtable", 0, "the budget sweep's memtable size in bytes (default -memtable): smaller makes its tree deeper")
	fs.BoolVar(&fl.wal, "wal", false, "keep every engine's write-ahead log on (writes stay NoSync; fillsync8 always has it on)")
	fs.BoolVar(&fl.isolate, "isolate", false, "run each engine in a process of its own (pebble-l6filters beside pebble), as users run one engine per process")
	fs.IntVar(&fl.rotate, "rotate", 0, "shared-process runs: shift every workload's engine order by this many places (a series of runs with 0 .. engines-1 starts each workload once with every engine)")
	fs.IntVar(&fl.rounds, "rounds", 1, "-isolate: rounds of every engine; each workload and engine reports its median-ops/s round")
	fs.StringVar(&fl.cpuProfile, "cpuprofile", "", "write a CPU profile of the whole run (every engine) to this file; go tool pprof separates the engines by package, and the paired phases' chunks and the background work of the sievekv engines by the labels engine and phase (-tagfocus engine=^sievekv-notsi$)")
	fs.StringVar(&fl.memProfile, "memprofile", "", "write a heap profile (allocations of the whole run, every engine) to this file at the end")
	fs.DurationVar(&fl.idle, "idle", 30*time.Second, "deletelarge, deleterangelarge: how long the DB idles after the deletes (quick: 10s)")
	fs.DurationVar(&fl.whileWriting, "whilewriting", 5*time.Second, "readwhilewriting, readmissingwhilewriting: how long each engine's readers read beside the writer (quick: 2s)")
	fs.Float64Var(&fl.rangeFilterBits, "range-filter-bits", 16, "sievekv-rf's RangeFilterBitsPerKey (3 to 48)")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q: kvbench takes flags only, and reads none after it", fs.Arg(0))
	}
	if fl.quick {
		// The same data-to-memtable and data-to-cache ratios as the
		// 1M-key defaults, at a tenth of the size.
		set := benchreport.SetOnCommandLine(fs)
		if !set["n"] {
			fl.n = 100_000
		}
		if !set["ops"] {
			fl.ops = 50_000
		}
		if !set["memtable"] {
			fl.memTable = 1 << 20
		}
		if !set["cache"] {
			fl.cache = 1 << 20
		}
		if !set["idle"] {
			fl.idle = 10 * time.Second
		}
		if !set["whilewriting"] {
			fl.whileWriting = 2 * time.Second
		}
	}
	if fl.n < 100 || fl.ops <= 0 || fl.keySize < 8 || fl.valueSize < 8 || fl.whileWriting <= 0 {
		return nil, fmt.Errorf("need -n >= 100, -ops > 0, -keysize >= 8, -valuesize >= 8, -whilewriting > 0")
	}
	// Each engine takes 0 for its own default (4 MiB memtables, 4 KiB
	// blocks, an 8 MiB cache) and a negative cache for none, so such
	// values would run a configuration other than the one the header
	// states; sizes past these bounds only fail allocating.
	if fl.memTable < 1<<10 || fl.memTable > 1<<30 || fl.blockSize < 256 || fl.blockSize > 1<<20 || fl.cache <= 0 ||
		fl.keySize > kv.MaxKeySize || fl.valueSize > maxValueSize || fl.idle < 0 {
		return nil, fmt.Errorf("need -memtable from 1 KiB to 1 GiB, -blocksize from 256 B to 1 MiB, -cache > 0, -keysize <= %d, -valuesize <= %d, -idle >= 0", kv.MaxKeySize, maxValueSize)
	}
	if fl.budgetN < 0 || (fl.budgetN > 0 && fl.budgetN < 100) || fl.budgetMemTable < 0 {
		return nil, fmt.Errorf("need -budgetn 0 (as -n) or >= 100, -budgetmemtable >= 0")
	}
	if fl.rounds < 1 || (fl.rounds > 1 && !fl.isolate) {
		return nil, fmt.Errorf("need -rounds >= 1, and -isolate for more than one round")
	}
	if err := fl.out.Check(fl.budgetRuns, fl.cpuProfile, fl.memProfile); err != nil {
		return nil, err
	}
	// Outputs the run would not write: exiting 0 without them would read
	// as a run that wrote them.
	if fl.budgetRuns != "" && !fl.budgetSweep {
		return nil, fmt.Errorf("-budgetruns is written by the budget sweep: add -budgetsweep")
	}
	if fl.replot != "" && (fl.out.JSON != "" || fl.out.MD != "") {
		return nil, fmt.Errorf("-replot draws the charts (-plot) only: it writes no -json or -md")
	}
	return fl, nil
}

// runner is one engine as the workloads see it.
type runner struct {
	name, filter string
	eng          engine
	io           *ioCounters
	dir          string
	// owner: this runner's DB is its own and it does the writes; a view
	// (pebble-l6filters) reads its owner's DB and skips write phases.
	owner bool
	// only, if set, restricts the runner to these workloads.
	only               map[string]bool
	live               int
	keySize, valueSize int
	// open opens a fresh DB of this engine in dir (fillseq uses one);
	// openWAL the same with the WAL on whatever -wal says (fillsync8).
	open, openWAL func(dir string, io *ioCounters) (engine, error)
	// openMemTable opens a fresh DB as open does but with a memtable of
	// memTable bytes, levels and tables sized from it (deletechurn's).
	openMemTable func(dir string, io *ioCounters, memTable int) (engine, error)
}

func (r *runner) runs(w string) bool {
	if r.only != nil && !r.only[w] {
		return false
	}
	// Views skip the pure write workloads; in deleterandom they run
	// the Gets after their owner's deletes. The while-writing workloads
	// are not writes(w): a view runs them with a writer of its own on its
	// owner's DB.
	return r.owner || !writes(w) || w == "deleterandom"
}

// writes reports whether workload w writes.
func writes(w string) bool {
	return w == "fillseq" || w == "fillrandom" || w == "overwrite" || w == "deleterandom" || w == "fillsync8" || w == "filllarge" || isDeleteLarge(w) || isDeleteChurn(w)
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func run(args []string, stdout, stderr io.Writer) error {
	fl, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	scanTrees = treeLog{} // this run's scan DBs only (tests call run repeatedly)
	if fl.replot != "" {
		return replot(fl)
	}
	filter, err := kv.ParseFilterType(fl.filter)
	if err != nil {
		return err
	}
	alloc, err := kv.ParseFilterAllocation(fl.allocation)
	if err != nil {
		return err
	}
	if _, err := parseBudgetBits(fl.budgetBits); err != nil {
		return err
	}
	engines, err := pickEngines(fl.engines)
	if err != nil {
		return fmt.Errorf("-engines: %w", err)
	}
	workloads, err := pickList(fl.workloads, allWorkloads)
	if err != nil {
		return fmt.Errorf("-workloads: %w", err)
	}
	if !slices.Contains(workloads, "fillrandom") && slices.ContainsFunc(workloads, func(w string) bool { return !isDeleteLarge(w) && !isScanWorkload(w) && !isDeleteChurn(w) }) {
		return fmt.Errorf("-workloads must include fillrandom (it loads the data the others read; the delete-large, delete-churn and scan workloads load their own)")
	}
	root := fl.dir
	if root != "" {
		if err := newOrEmptyDir(root); err != nil {
			return err
		}
	} else {
		var remove func()
		if root, remove, err = benchreport.TempDir("kvbench-"); err != nil {
			return err
		}
		defer remove()
	}
	progress := stderr
	if !fl.progress {
		progress = io.Discard
	}
	if fl.cpuProfile != "" {
		f, err := os.Create(fl.cpuProfile)
		if err != nil {
			return fmt.Errorf("-cpuprofile: %w", err)
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return fmt.Errorf("-cpuprofile: %w", err)
		}
		defer pprof.StopCPUProfile()
	}
	if fl.memProfile != "" {
		defer func() {
			if err := writeHeapProfile(fl.memProfile); err != nil {
				fmt.Fprintln(stderr, "kvbench: -memprofile:", err)
			}
		}()
	}
	began := time.Now()
	ks := newKeySet(fl.seed, fl.n, fl.keySize)
	cfg := config{memTableSize: fl.memTable, blockSize: fl.blockSize, cacheSize: fl.cache, filter: filter, wal: fl.wal,
		filterBits: fl.filterBits, allocation: alloc}
	hdr := header(fl, cfg)
	fmt.Fprint(stdout, hdr)

	var results []result
	if fl.isolate {
		results, err = runIsolated(fl, engines, root, progress)
	} else {
		results, err = runTogether(engines, workloads, ks, cfg, root, fl, progress)
	}
	if err != nil {
		return err
	}
	if fl.sweep {
		sw, err := runSweep(ks, cfg, fl, root, progress)
		if err != nil {
			return fmt.Errorf("sweep: %w", err)
		}
		results = append(results, sw...)
	}
	if fl.budgetSweep {
		bs, err := runBudgetSweep(ks, cfg, fl, root, progress)
		if err != nil {
			return fmt.Errorf("budget sweep: %w", err)
		}
		results = append(results, bs...)
	}
	took := time.Since(began)
	printResults(stdout, results)
	gs := goals(results)
	printGoals(stdout, gs, results)
	fmt.Fprintf(stdout, "\nkvbench took %s\n", took.Round(time.Second))

	charts, err := fl.out.Write(results, func(dir string) ([]string, error) { return writeCharts(dir, results) })
	if err != nil {
		return err
	}
	if fl.out.MD != "" {
		title := "engines side by side"
		if fl.isolate {
			title = "one engine per process"
			if fl.wal {
				title += ", WAL on"
			}
		}
		if err := writeMarkdown(fl.out.MD, title, args, hdr, results, gs, charts, took); err != nil {
			return err
		}
	}
	return nil
}

// runTogether runs every engine in this process, alternating them workload
// by workload so that drift on a shared machine hits them all.
func runTogether(engines, workloads []string, ks *keySet, cfg config, root string, fl *flags, progress io.Writer) ([]result, error) {
	runners, err := openRunners(engines, cfg, root, fl)
	if err != nil {
		return nil, err
	}
	defer func() {
		for _, r := range runners {
			if r.owner {
				r.eng.close()
			}
		}
	}()

	var results []result
	compacted := false
	for _, w := range workloads {
		if !compacted && !liveShape(w) {
			// Reads run on one fully compacted sorted run in every
			// engine: the same shape, whatever each compaction policy
			// left behind.
			for _, r := range runners {
				if r.owner {
					if err := r.eng.compactAll(); err != nil {
						return nil, fmt.Errorf("%s: compact: %w", r.name, err)
					}
				}
			}
			compacted = true
		}
		order := engineOrder(runners, w, fl.rotate)
		if writes(w) {
			// A view reads its owner's DB: it must run after the
			// owner's writes.
			slices.SortStableFunc(order, func(a, b *runner) int { return boolInt(!a.owner) - boolInt(!b.owner) })
		}
		if w == "readmissing-live" {
			// Each engine reads a DB of its own, loaded the same stated
			// way (live_load.go), not the tree fillrandom's timing left.
			rs, err := runLiveReads(order, ks, fl, root, progress)
			if err != nil {
				return nil, err
			}
			results = append(results, rs...)
			continue
		}
		ep, pair, paired := pickPair(order, w)
		for _, r := range order {
			if !r.runs(w) {
				continue
			}
			if paired && slices.Contains(pair, r) {
				if r != pair[0] {
					continue // measured with pair[0]
				}
				rs, err := runPair(ep, pair, w, ks, fl, root, progress)
				if err != nil {
					return nil, fmt.Errorf("%s: %w", w, err)
				}
				results = append(results, rs...)
				continue
			}
			rs, err := runWorkload(r, w, ks, fl, root, progress)
			if err != nil {
				return nil, fmt.Errorf("%s: %s: %w", r.name, w, err)
			}
			results = append(results, rs...)
		}
	}
	for _, r := range runners {
		if r.owner {
			if err := r.eng.close(); err != nil {
				return nil, fmt.Errorf("%s: close: %w", r.name, err)
			}
			r.owner = false // closed
		}
	}
	return results, nil
}

// filterLabel names sievekv's filter configuration in results: the filter
// type, or for the auto filter its allocation and budget
// ("auto-monkey-10").
func filterLabel(c config) string {
	if c.filter != kv.FilterAuto {
		return c.filter.String()
	}
	return fmt.Sprintf("auto-%s-%g", c.allocation, c.filterBits)
}

// liveShape reports whether workload w runs on the DB as the loads leave
// it, before the full compaction every later read workload gets.
func liveShape(w string) bool {
	return w == "fillseq" || w == "fillrandom" || w == "readmissing-live" || w == "overwrite" || isWhileWriting(w)
}

// pickList resolves "all" or a comma-separated subset of known names.
// pickEngines is pickList for -engines: all means allEngines, and a list
// may name controlEngines too, beside all ("all,sievekv-control") or
// beside other engines.
func pickEngines(s string) ([]string, error) {
	var out []string
	for _, x := range strings.Split(s, ",") {
		names := allEngines
		if x != "all" {
			var err error
			if names, err = pickList(x, append(slices.Clone(allEngines), controlEngines...)); err != nil {
				return nil, err
			}
		}
		for _, n := range names {
			if !slices.Contains(out, n) {
				out = append(out, n)
			}
		}
	}
	return out, nil
}

func pickList(s string, known []string) ([]string, error) {
	if s == "all" {
		return known, nil
	}
	var out []string
	for _, x := range strings.Split(s, ",") {
		if !slices.Contains(known, x) {
			return nil, fmt.Errorf("unknown name %q (want %s)", x, strings.Join(known, ", "))
		}
		out = append(out, x)
	}
	return out, nil
}

func header(fl *flags, c config) string {
	var b strings.Builder
	fmt.Fprintf(&b, "kvbench: %d keys of %d bytes, %d-byte values; %d timed ops per read workload\n", fl.n, fl.keySize, fl.valueSize, fl.ops)
	walState := "WAL off"
	if c.wal {
		walState = "WAL on"
	}
	fmt.Fprintf(&b, "every engine: memtable %d B, block %d B, block cache %d B, snappy, L0 trigger 4, Lbase %d B x10, tables split at %d B, %s, no fsync (fillsync8: WAL on, fsync per write, %d goroutines; filllarge: %d keys of fillrandom's with %d-byte values, a DB of its own)\n",
		c.memTableSize, c.blockSize, c.cacheSize, c.lbaseBytes(), c.targetFileSize(), walState, syncWriters, largeFillOps(fl.n), largeValueSize)
	fmt.Fprintf(&b, "sievekv: filter %s (sievekv-notsi: the same with DisableTombstoneIndex); L0 waits for 8 tables while merging it would rewrite > 4 base bytes per L0 byte; writes wait at 12 L0 tables, no 1 ms slowdowns; its block cache borrows up to 2 x memtable (%d B) while the memtables leave it unused, so cache and memtables stay within %d B, Pebble's cache size; reads use GetAppend into a buffer each reader keeps (Pebble's Get lends the value from its block until the closer)\n", filterLabel(c), pebbleCacheSize(c)-c.cacheSize, pebbleCacheSize(c))
	fmt.Fprintf(&b, "pebble: v2, FormatNewest, bloom.FilterPolicy(%d) on every level, explicit NewCache(%d) = cache + 2 x memtable, since Pebble charges memtables to its block cache; pebble-l6filters reads the same DB with Get emulated by SeekPrefixGE with UseL6Filters (plain Get skips L6 filters)\n", pebbleBloomBits(c), pebbleCacheSize(c))
	if c.wal {
		fmt.Fprintf(&b, "goleveldb: v1.0.0, filter.NewBloomFilter(10)\n")
	} else {
		fmt.Fprintf(&b, "goleveldb: v1.0.0, filter.NewBloomFilter(10), journal writes discarded (it has no WAL switch)\n")
	}
	if fl.isolate {
		fmt.Fprintf(&b, "isolated: each engine ran in a process of its own (pebble-l6filters beside pebble, whose DB it reads), %d round(s), group order rotated; each figure is its workload's median-ops/s round\n", fl.rounds)
	}
	b.WriteString(scanKeysDescription(fl))
	b.WriteString(churnDescription(fl))
	b.WriteString(whileWritingDescription(fl.whileWriting))
	b.WriteString(orderDescription(fl))
	b.WriteString(pairDescriptions(fl))
	fmt.Fprintf(&b, "every timed loop, of every engine, starts after a full collection (runtime.GC): no engine pays for the garbage of what ran before it\n")
	fmt.Fprintf(&b, "reads/op: ReadAt calls on table files, counted by kvbench's file-system wrapper for every engine; write amp: table bytes written / user bytes written; reads run after a full compaction, but readmissing-live's: it reads, per engine, a DB of its own holding fillrandom's keys, loaded untimed with a flush every %d keys and the engine settled after each, so that every run reads the same tree (its shape is in the goal row)\n\n", liveFlushKeys(fl.memTable, fl.keySize+fl.valueSize))
	return b.String()
}

func openRunners(names []string, cfg config, root string, fl *flags) ([]*runner, error) {
	var out []*runner
	var peb *runner
	mk := func(name string) (*runner, error) {
		r := &runner{name: name, io: &ioCounters{}, owner: true, keySize: fl.keySize, valueSize: fl.valueSize}
		c := cfg
		var openCfg func(c config, io *ioCounters) (engine, error)
		switch name {
		case "sievekv", "sievekv-notsi", "sievekv-rf", "sievekv-control":
			c.noTombIndex = name == "sievekv-notsi"
			if name == "sievekv-rf" {
				c.rangeFilterBits = fl.rangeFilterBits
				r.only = map[string]bool{"scanempty": true, "scanshort": true}
			}
			r.filter = filterLabel(cfg)
			openCfg = func(c config, io *ioCounters) (engine, error) { return openSieve(name, c, io) }
			if c.noTombIndex || name == "sievekv-control" {
				// Every workload that writes to the main DB, so that
				// its DB reaches deleterandom in the same state as
				// sievekv's; and deletechurn, paired on DBs of its own.
				r.only = map[string]bool{"deletechurn": true}
				for _, w := range mainDBWriters {
					r.only[w] = true
				}
			}
		case "pebble":
			r.filter = fmt.Sprintf("bloom-%d", pebbleBloomBits(cfg))
			openCfg = func(c config, io *ioCounters) (engine, error) { return openPebble(c, io) }
		case "goleveldb":
			r.filter = "bloom-10"
			openCfg = func(c config, io *ioCounters) (engine, error) { return openLevel(c, io) }
		default:
			return nil, fmt.Errorf("unknown engine %q", name)
		}
		r.open = func(dir string, io *ioCounters) (engine, error) {
			c := c
			c.dir = dir
			return openCfg(c, io)
		}
		r.openMemTable = func(dir string, io *ioCounters, memTable int) (engine, error) {
			c := c
			c.dir, c.memTableSize = dir, memTable
			return openCfg(c, io)
		}
		r.openWAL = func(dir string, io *ioCounters) (engine, error) {
			c := c
			c.dir, c.wal = dir, true
			return openCfg(c, io)
		}
		r.dir = dirOf(root, name, "main")
		e, err := r.open(r.dir, r.io)
		if err != nil {
			return nil, fmt.Errorf("%s: open: %w", name, err)
		}
		r.eng = e
		return r, nil
	}
	for _, name := range names {
		if name == "pebble-l6filters" {
			continue
		}
		r, err := mk(name)
		if err != nil {
			return nil, err
		}
		if name == "pebble" {
			peb = r
		}
		out = append(out, r)
	}
	if slices.Contains(names, "pebble-l6filters") {
		hidden := peb == nil
		if hidden {
			// The view needs a Pebble DB to read; load one without
			// reporting it.
			r, err := mk("pebble")
			if err != nil {
				return nil, err
			}
			r.name = "pebble (loader)"
			peb = r
			out = append(out, r)
		}
		v := &runner{name: "pebble-l6filters", filter: fmt.Sprintf("bloom-%d", pebbleBloomBits(cfg)), eng: pebbleL6View{peb.eng.(*pebbleEngine)},
			io: peb.io, dir: peb.dir, keySize: fl.keySize, valueSize: fl.valueSize}
		// The view shares the DB's live-key count through its owner.
		out = append(out, v)
	}
	return out, nil
}

func runWorkload(r *runner, w string, ks *keySet, fl *flags, root string, progress io.Writer) ([]result, error) {
	if isScanWorkload(w) {
		return runScanWorkload(r, w, fl, root, progress)
	}
	if isDeleteChurn(w) {
		return runDeleteChurn(r, w, ks, fl, root, progress)
	}
	if isDeleteLarge(w) {
		res, err := runDeleteLarge(r, w, fl, root, progress)
		if errors.Is(err, errNoDeleteRange) {
			return nil, nil
		}
		return []result{res}, err
	}
	if w == "fillseq" || w == "fillsync8" || w == "filllarge" {
		// fillseq, fillsync8 and filllarge load a DB of their own, then
		// throw it away; fillsync8's always has its WAL on.
		fr := *r
		fr.io = &ioCounters{}
		fr.dir = dirOf(root, r.name, w)
		if w == "filllarge" {
			fr.valueSize = largeValueSize
		}
		open := r.open
		if w == "fillsync8" {
			open = r.openWAL
		}
		e, err := open(fr.dir, fr.io)
		if err != nil {
			return nil, err
		}
		fr.eng = e
		ps, err := phases(w, &fr, ks, fl.ops, fl.seed)
		if err != nil {
			e.close()
			return nil, err
		}
		res, err := measure(&fr, ps[0], progress)
		if cerr := e.close(); err == nil {
			err = cerr
		}
		os.RemoveAll(fr.dir)
		return []result{res}, err
	}
	ps, err := phases(w, r, ks, fl.ops, fl.seed)
	if err != nil {
		return nil, err
	}
	if isWhileWriting(w) {
		timeWhileWriting(ps, fl.whileWriting)
	}
	var out []result
	for _, p := range ps {
		if !r.owner && p.writes && p.writer == nil {
			continue
		}
		if !r.owner {
			r.live = liveOf(ks, w, p.workload)
		}
		res, err := measure(r, p, progress)
		if err != nil {
			return out, fmt.Errorf("%s: %w", p.workload, err)
		}
		out = append(out, res)
	}
	return out, nil
}

// liveOf is the live-key count a view's DB holds during workload phase p.
func liveOf(ks *keySet, w, p string) int {
	if strings.HasPrefix(p, "deleterandom") {
		return len(ks.present) - ks.numDeleted()
	}
	return len(ks.present)
}

// replot redraws the charts of an earlier run from its JSON.
func replot(fl *flags) error {
	if fl.out.Plot == "" {
		return fmt.Errorf("-replot needs -plot DIR")
	}
	data, err := os.ReadFile(fl.replot)
	if err != nil {
		return err
	}
	var results []result
	if err := json.Unmarshal(data, &results); err != nil {
		return fmt.Errorf("%s: %w", fl.replot, err)
	}
	_, err = writeCharts(fl.out.Plot, results)
	return err
}

// newOrEmptyDir makes dir, or checks that it is an empty directory:
// kvbench removes the DBs its workloads make under -dir by name, and opens a
// DB it finds there as its own, so a directory holding anything else would
// lose files kvbench never made, or give figures of a DB it did not load.
func newOrEmptyDir(dir string) error {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return os.MkdirAll(dir, 0o755)
	}
	if err != nil {
		return fmt.Errorf("-dir: %w", err)
	}
	if len(ents) > 0 {
		return fmt.Errorf("-dir %s is not empty: name a new or empty directory (kvbench removes the DBs it makes there)", dir)
	}
	return nil
}

// writeHeapProfile writes the allocation profile so far to path.
func writeHeapProfile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
