// Command filterbench measures every filter in sievekv's filters/ package
// side by side with the anchor libraries (FastFilter/xorfilter,
// bits-and-blooms/bloom/v3, seiflotfy/cuckoofilter): bits per key, the
// false-positive rate on at least a million absent keys, ns per build key,
// ns per query of present and absent keys, and ns per delete where the
// filter supports it.
//
//	go run ./cmd/filterbench -quick                      # about a minute
//	go run ./cmd/filterbench -n 10000,100000,1000000 -json out.json -plot docs/charts
//
// Every configuration runs once per round, the rounds interleave all
// filters (so machine drift hits all of them), and the timings reported are
// each configuration's fastest round: noise on a shared machine only adds
// time, so the fastest round is the best estimate of a filter's own cost
// (every round is in the JSON). Only ratios measured in one
// run mean anything on a shared machine.
package main

import (
	"encoding/binary"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/schollz/progressbar/v3"

	"github.com/sievekv/sievekv/filters"
	"github.com/sievekv/sievekv/internal/benchreport"
)

func main() { benchreport.Main("filterbench", run) }

type flags struct {
	sizes             []int
	absent, rounds    int
	keySize           int
	only              string
	out               benchreport.Outputs
	seed              uint64
	quick, progress   bool
	rangeQueries      int
	minQueriesPresent int
}

// maxKeys and maxKeySize bound -n, -absent and -keysize: the key sets are
// held in memory (with a map to dedupe them), and far past these a run
// only dies allocating.
const (
	maxKeys    = 100_000_000
	maxKeySize = 4096
)

func parseFlags(args []string, stderr io.Writer) (*flags, error) {
	fl := &flags{}
	fs := flag.NewFlagSet("filterbench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	sizes := fs.String("n", "10000,100000,1000000", "comma-separated key counts")
	fs.IntVar(&fl.absent, "absent", 1_000_000, "absent keys queried per configuration (FP rate and absent-query time)")
	fs.IntVar(&fl.rounds, "rounds", 5, "interleaved rounds; timings are the fastest round")
	fs.IntVar(&fl.keySize, "keysize", 16, "key size in bytes")
	fs.StringVar(&fl.only, "only", "", "only configurations whose name contains this (\"range\": the range filter section alone)")
	fl.out.Register(fs)
	fs.Uint64Var(&fl.seed, "seed", 1, "key generator seed")
	fs.BoolVar(&fl.quick, "quick", false, "quick mode: n = 10k and 1M, 3 rounds (about a minute)")
	fs.BoolVar(&fl.progress, "progress", true, "progress bar on stderr")
	fs.IntVar(&fl.rangeQueries, "range-queries", 20000, "empty ranges queried per width in the range filter section (0: skip the section)")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q: filterbench takes flags only, and reads none after it", fs.Arg(0))
	}
	set := benchreport.SetOnCommandLine(fs)
	if fl.quick {
		if !set["n"] {
			*sizes = "10000,1000000"
		}
		if !set["rounds"] {
			fl.rounds = 3
		}
	}
	for _, s := range strings.Split(*sizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 100 || n > maxKeys {
			return nil, fmt.Errorf("-n: %q is not a key count from 100 to %d", s, maxKeys)
		}
		fl.sizes = append(fl.sizes, n)
	}
	if fl.absent < 1000 || fl.absent > maxKeys || fl.rounds < 1 || fl.keySize < 9 || fl.keySize > maxKeySize || fl.rangeQueries < 0 {
		return nil, fmt.Errorf("need -absent from 1000 to %d, -rounds >= 1, -keysize from 9 to %d, -range-queries >= 0", maxKeys, maxKeySize)
	}
	if fl.only == "range" && fl.rangeQueries == 0 {
		return nil, fmt.Errorf("-only range with -range-queries 0 measures nothing")
	}
	if err := fl.out.Check(); err != nil {
		return nil, err
	}
	// Present-key queries loop over the keys until at least this many,
	// so a 10k-key filter is timed over as many queries as a 1M one.
	fl.minQueriesPresent = min(fl.absent, 1_000_000)
	return fl, nil
}

// result is one configuration at one n.
type result struct {
	Filter         string  `json:"filter"` // name@target
	Name           string  `json:"name"`
	Library        string  `json:"library"`
	Input          string  `json:"input"` // "key" or "hash"
	N              int     `json:"n"`
	TargetFP       float64 `json:"target_fp"` // 0: fixed by design
	BitsPerKey     float64 `json:"bits_per_key"`
	FPRate         float64 `json:"fp_rate"`
	AbsentQueried  int     `json:"absent_queried"`
	BuildNsPerKey  float64 `json:"build_ns_per_key"`
	QueryNsPresent float64 `json:"query_ns_present"`
	QueryNsAbsent  float64 `json:"query_ns_absent"`
	// DeleteNsPerKey is 0 for filters without deletion.
	DeleteNsPerKey float64 `json:"delete_ns_per_key,omitempty"`
	// The per-round timings, for anyone who wants the spread.
	BuildRounds   []float64 `json:"build_ns_rounds"`
	PresentRounds []float64 `json:"query_present_ns_rounds"`
	AbsentRounds  []float64 `json:"query_absent_ns_rounds"`
	DeleteRounds  []float64 `json:"delete_ns_rounds,omitempty"`
}

// keySets are present keys (last byte even) and absent keys (last byte
// odd): disjoint by construction.
func keySets(seed uint64, n, absent, keySize int) (present, missing [][]byte, ph, mh []uint64) {
	rng := rand.New(rand.NewPCG(seed, uint64(n)))
	mk := func(count int, odd byte) ([][]byte, []uint64) {
		seen := make(map[string]bool, count)
		ks := make([][]byte, 0, count)
		for len(ks) < count {
			k := make([]byte, keySize)
			binary.LittleEndian.PutUint64(k, rng.Uint64())
			binary.LittleEndian.PutUint64(k[keySize-8:], rng.Uint64())
			k[keySize-1] = k[keySize-1]&^1 | odd
			if !seen[string(k)] {
				seen[string(k)] = true
				ks = append(ks, k)
			}
		}
		hs := make([]uint64, count)
		for i, k := range ks {
			hs[i] = filters.Hash(k)
		}
		return ks, hs
	}
	present, ph = mk(n, 0)
	missing, mh = mk(absent, 1)
	return
}

func run(args []string, stdout, stderr io.Writer) error {
	fl, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	var ss []spec
	for _, s := range specs() {
		if strings.Contains(s.label(), fl.only) {
			ss = append(ss, s)
		}
	}
	if fl.only == "range" {
		ss = nil // the range filter section alone
	} else if len(ss) == 0 {
		return fmt.Errorf("-only %q matches no filter", fl.only)
	}
	progress := stderr
	if !fl.progress {
		progress = io.Discard
	}
	began := time.Now()
	bar := progressbar.NewOptions(len(fl.sizes)*fl.rounds*len(ss),
		progressbar.OptionSetWriter(progress), progressbar.OptionSetVisibility(progress != io.Discard),
		progressbar.OptionSetDescription("filterbench"), progressbar.OptionShowCount(),
		progressbar.OptionThrottle(200*time.Millisecond), progressbar.OptionClearOnFinish())
	var results []result
	for _, n := range fl.sizes {
		if len(ss) == 0 {
			break
		}
		present, missing, ph, mh := keySets(fl.seed, n, fl.absent, fl.keySize)
		rs := make([]result, len(ss))
		for round := range fl.rounds {
			// Rotate the order each round so no filter always runs
			// first after the key generation or last.
			for j := range ss {
				i := (j + round) % len(ss)
				bar.Describe(fmt.Sprintf("n=%d %-32s", n, ss[i].label()))
				if err := measure(&rs[i], ss[i], round == 0, present, missing, ph, mh, fl.minQueriesPresent); err != nil {
					return fmt.Errorf("%s at n=%d: %w", ss[i].label(), n, err)
				}
				bar.Add(1)
			}
		}
		for i := range rs {
			rs[i].BuildNsPerKey = fastest(rs[i].BuildRounds)
			rs[i].QueryNsAbsent = fastest(rs[i].AbsentRounds)
			rs[i].QueryNsPresent = fastest(rs[i].PresentRounds)
			rs[i].DeleteNsPerKey = fastest(rs[i].DeleteRounds)
		}
		results = append(results, rs...)
	}
	bar.Finish()
	var ranges []rangeResult
	if fl.rangeQueries > 0 {
		if ranges, err = measureRange(fl.seed, fl.sizes, fl.rangeQueries); err != nil {
			return fmt.Errorf("range filter: %w", err)
		}
	}
	took := time.Since(began)
	printResults(stdout, results)
	gs := goals(results)
	printGoals(stdout, gs)
	printRange(stdout, ranges)
	fmt.Fprintf(stdout, "\nfilterbench took %s\n", took.Round(time.Second))
	charts, err := fl.out.Write(results, func(dir string) ([]string, error) { return writeCharts(dir, results) })
	if err != nil {
		return err
	}
	if fl.out.MD != "" {
		if err := writeMarkdown(fl.out.MD, args, results, gs, charts, took); err != nil {
			return err
		}
		if err := appendFile(fl.out.MD, rangeMarkdown(ranges)); err != nil {
			return err
		}
	}
	return nil
}

// measure builds s over present and times it, appending this round's
// timings to r (the first round also records sizes and the FP rate, which
// do not change between rounds).
func measure(r *result, s spec, first bool, present, missing [][]byte, ph, mh []uint64, minPresent int) error {
	n := len(present)
	// Builders may reorder or dedupe their input (xorfilter does): give
	// each a fresh copy, made before the clock starts.
	hs := slices.Clone(ph)
	// Collect the previous configuration's garbage first, and again after
	// the build: queries allocate nothing, so no GC cycle then runs during
	// the timed query loops (a concurrent mark phase on this 2-core
	// machine otherwise lands on whichever filter follows a big build).
	runtime.GC()
	t0 := time.Now()
	q, err := s.build(present, hs)
	build := time.Since(t0)
	if err != nil {
		return err
	}
	runtime.GC()
	// No false negatives (F1), for every filter, anchors included.
	if got := q.hits(present, ph); got != n {
		return fmt.Errorf("%d false negatives among %d present keys", n-got, n)
	}
	passes := max(1, minPresent/n)
	t0 = time.Now()
	hits := 0
	for range passes {
		hits += q.hits(present, ph)
	}
	presentNs := float64(time.Since(t0).Nanoseconds()) / float64(passes*n)
	if hits != passes*n {
		return fmt.Errorf("false negatives while timing")
	}
	t0 = time.Now()
	fp := q.hits(missing, mh)
	absentNs := float64(time.Since(t0).Nanoseconds()) / float64(len(missing))
	var deleteNs float64
	if q.remove != nil {
		t0 = time.Now()
		for i, k := range present {
			if !q.remove(k) {
				return fmt.Errorf("remove of present key %d failed", i)
			}
		}
		deleteNs = float64(time.Since(t0).Nanoseconds()) / float64(n)
	}
	if first {
		*r = result{Filter: s.label(), Name: s.name, Library: s.lib, Input: s.input, N: n, TargetFP: s.target,
			BitsPerKey: 8 * float64(q.bytes()) / float64(n), FPRate: float64(fp) / float64(len(missing)),
			AbsentQueried: len(missing)}
	}
	r.BuildRounds = append(r.BuildRounds, float64(build.Nanoseconds())/float64(n))
	r.PresentRounds = append(r.PresentRounds, presentNs)
	r.AbsentRounds = append(r.AbsentRounds, absentNs)
	if deleteNs > 0 {
		r.DeleteRounds = append(r.DeleteRounds, deleteNs)
	}
	return nil
}

func appendFile(path, text string) error {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(text); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// fastest is the smallest of xs (0 for none).
func fastest(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	return slices.Min(xs)
}
