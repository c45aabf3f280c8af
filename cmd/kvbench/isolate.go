package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Isolated mode (-isolate) runs each engine in a process of its own, as
// users run an engine: no other engine's heap, goroutines or page cache
// pressure in the same process, and no garbage collector shared between
// them. That matters most for writes, where the collector and the
// background goroutines of every open engine compete. The parent re-runs
// this binary once per engine group and round, and keeps, for every
// workload and engine, the round with the median ops/s, so one noisy round
// on a shared machine does not decide a ratio.

// kvbenchChildEnv marks a child run; kvbench itself ignores it (its tests
// read it, since there the binary re-run is the test binary).
const kvbenchChildEnv = "KVBENCH_CHILD"

// engineGroups splits engines into what one child process runs: each
// owner, with the views that read its DB (pebble-l6filters reads
// pebble's).
func engineGroups(engines []string) [][]string {
	var groups [][]string
	for _, e := range engines {
		switch {
		case e == "pebble-l6filters" && slices.Contains(engines, "pebble"):
			// Runs beside its owner.
		case e == "pebble" && slices.Contains(engines, "pebble-l6filters"):
			groups = append(groups, []string{"pebble", "pebble-l6filters"})
		default:
			groups = append(groups, []string{e})
		}
	}
	return groups
}

// childArgs are the flags of one child run: everything the parent was
// given, spelled out (so -quick's defaults carry over exactly), with the
// child's engines, its own directory and JSON file, and no charts,
// markdown, sweep or progress bars.
func childArgs(fl *flags, engines []string, dir, jsonOut string) []string {
	return []string{
		"-n", strconv.Itoa(fl.n), "-ops", strconv.Itoa(fl.ops),
		"-keysize", strconv.Itoa(fl.keySize), "-valuesize", strconv.Itoa(fl.valueSize),
		"-memtable", strconv.Itoa(fl.memTable), "-blocksize", strconv.Itoa(fl.blockSize),
		"-cache", strconv.FormatInt(fl.cache, 10), "-filter", fl.filter,
		"-filterbits", strconv.FormatFloat(fl.filterBits, 'g', -1, 64), "-allocation", fl.allocation,
		"-engines", strings.Join(engines, ","), "-workloads", fl.workloads,
		"-seed", strconv.FormatUint(fl.seed, 10), "-wal=" + strconv.FormatBool(fl.wal),
		"-idle", fl.idle.String(), "-whilewriting", fl.whileWriting.String(), "-range-filter-bits", strconv.FormatFloat(fl.rangeFilterBits, 'g', -1, 64),
		"-dir", dir, "-json", jsonOut, "-progress=false",
	}
}

// runIsolated runs every engine group in its own process, fl.rounds times
// (the group order rotated each round), and returns each workload's and
// engine's median-ops/s result.
func runIsolated(fl *flags, engines []string, root string, progress io.Writer) ([]result, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("isolate: find this binary: %w", err)
	}
	groups := engineGroups(engines)
	var rounds [][]result
	for round := range fl.rounds {
		var got []result
		for i := range groups {
			g := groups[(i+round)%len(groups)]
			dir := filepath.Join(root, fmt.Sprintf("isolated-%d-%s", round, strings.Join(g, "+")))
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return nil, err
			}
			jsonOut := filepath.Join(dir, "results.json")
			fmt.Fprintf(progress, "kvbench: round %d/%d: %s in its own process\n", round+1, fl.rounds, strings.Join(g, "+"))
			cmd := exec.Command(self, childArgs(fl, g, dir, jsonOut)...)
			cmd.Env = append(os.Environ(), kvbenchChildEnv+"=1")
			var errOut bytes.Buffer
			cmd.Stdout = io.Discard
			cmd.Stderr = &errOut
			if err := cmd.Run(); err != nil {
				return nil, fmt.Errorf("isolate: %s: %w: %s", strings.Join(g, "+"), err, strings.TrimSpace(errOut.String()))
			}
			data, err := os.ReadFile(jsonOut)
			if err != nil {
				return nil, fmt.Errorf("isolate: %s: %w", strings.Join(g, "+"), err)
			}
			var rs []result
			if err := json.Unmarshal(data, &rs); err != nil {
				return nil, fmt.Errorf("isolate: %s: %s: %w", strings.Join(g, "+"), jsonOut, err)
			}
			got = append(got, rs...)
			os.RemoveAll(dir)
		}
		rounds = append(rounds, got)
	}
	return medianRounds(rounds, engines), nil
}

// medianRounds keeps, for each workload and engine, the result of the
// round whose ops/s is the median (the lower middle of an even count), in
// the first round's workload order with the engines in the order given.
func medianRounds(rounds [][]result, engines []string) []result {
	if len(rounds) == 0 {
		return nil
	}
	var out []result
	for _, w := range workloadsOf(rounds[0]) {
		for _, e := range engines {
			var all []result
			for _, rs := range rounds {
				if r := find(rs, w, e); r != nil {
					all = append(all, *r)
				}
			}
			if len(all) == 0 {
				continue
			}
			var ops, wa []float64
			for _, r := range all {
				ops, wa = append(ops, r.OpsPerSec), append(wa, r.WriteAmp)
			}
			slices.SortStableFunc(all, func(a, b result) int {
				switch {
				case a.OpsPerSec < b.OpsPerSec:
					return -1
				case a.OpsPerSec > b.OpsPerSec:
					return 1
				}
				return 0
			})
			med := all[(len(all)-1)/2]
			med.RoundOpsPerSec, med.RoundWriteAmp = ops, wa
			out = append(out, med)
		}
	}
	return out
}
