package main

import (
	"encoding/json"
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sievekv/sievekv/internal/storebench"
)

// runInProcess runs clusterbench with args and returns its JSON report and
// markdown section.
func runInProcess(t *testing.T, args ...string) (report, string) {
	t.Helper()
	dir := t.TempDir()
	jsonPath, mdPath := filepath.Join(dir, "out.json"), filepath.Join(dir, "out.md")
	var stdout strings.Builder
	if err := run(append(args, "-json", jsonPath, "-md", mdPath), &stdout, io.Discard); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(jsonPath)
	if err != nil {
		t.Fatal(err)
	}
	var rep report
	if err := json.Unmarshal(data, &rep); err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(mdPath)
	if err != nil {
		t.Fatal(err)
	}
	if string(md) != stdout.String() {
		t.Fatalf("-md file and printed report differ")
	}
	return rep, string(md)
}

// TestStoresEveryBenchOnBothStores: each of raft's store benchmarks runs
// on both stores in every round, and the report has a row for each.
func TestStoresEveryBenchOnBothStores(t *testing.T) {
	rep, md := runInProcess(t, "-parts", "stores", "-rounds", "2", "-benchops", "20")
	if len(rep.Stores) != 2*len(storebench.Benches) {
		t.Fatalf("%d results; want %d", len(rep.Stores), 2*len(storebench.Benches))
	}
	for i, r := range rep.Stores {
		if want := storebench.Stores[i%2].Name; r.Store != want || r.Bench != storebench.Benches[i/2].Name {
			t.Fatalf("result %d is %s on %s; want %s on %s", i, r.Bench, r.Store, storebench.Benches[i/2].Name, want)
		}
		if len(r.NsPerOp) != 2 || r.NsPerOp[0] <= 0 || r.NsPerOp[1] <= 0 {
			t.Fatalf("%s on %s: ns/op %v; want two positive rounds", r.Bench, r.Store, r.NsPerOp)
		}
	}
	for _, b := range storebench.Benches {
		if !strings.Contains(md, "| "+b.Name+" | ") {
			t.Errorf("the markdown has no row for %s:\n%s", b.Name, md)
		}
	}
}

// TestClusterWritesAndOutages runs the cluster part once: three kvserver
// processes, a write load, and the leader stopped by each signal.
func TestClusterWritesAndOutages(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a three-node cluster and stops its leader twice")
	}
	rep, md := runInProcess(t, "-parts", "cluster", "-writes", "200", "-clients", "4", "-outages", "1")
	if rep.Writes == nil || rep.Writes.Writes != 200 || rep.Writes.OpsPerSec <= 0 {
		t.Fatalf("write load: %+v", rep.Writes)
	}
	if len(rep.Outages) != 2 || rep.Outages[0].Signal != "SIGTERM" || rep.Outages[1].Signal != "SIGKILL" {
		t.Fatalf("outages: %+v; want SIGTERM then SIGKILL", rep.Outages)
	}
	for _, o := range rep.Outages {
		if len(o.LongestWaitMs) != 1 || o.LongestWaitMs[0] <= 0 {
			t.Fatalf("%s: longest writes %v; want one round", o.Signal, o.LongestWaitMs)
		}
	}
	if !strings.Contains(md, "| SIGTERM | ") || !strings.Contains(md, "| SIGKILL | ") {
		t.Fatalf("the markdown lacks the outage rows:\n%s", md)
	}
}

// TestMoreClientsThanWrites: -clients above -writes is refused before
// anything starts; it started every client although each takes the next
// write (-clients 1000000000 hung allocating goroutines) and the report
// stated that many concurrent clients.
func TestMoreClientsThanWrites(t *testing.T) {
	err := run([]string{"-parts", "cluster", "-writes", "10", "-clients", "1000000000", "-kvserver", filepath.Join(t.TempDir(), "none")}, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "-clients") {
		t.Fatalf("err %v, want a -clients error", err)
	}
}

// TestHelpOffersOnlyWhatItDoes caught -h listing -plot ("write PNG charts
// to this directory") and -md's "charts", when clusterbench draws none and
// refused -plot once the flags were parsed.
func TestHelpOffersOnlyWhatItDoes(t *testing.T) {
	var help strings.Builder
	if err := run([]string{"-h"}, io.Discard, &help); !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("-h: %v", err)
	}
	if strings.Contains(help.String(), "-plot") || strings.Contains(help.String(), "chart") {
		t.Errorf("help offers charts:\n%s", help.String())
	}
}

func TestBadArguments(t *testing.T) {
	for _, args := range [][]string{{"-rounds", "0"}, {"-writes", "-1"}, {"-plot", "dir"}, {"-parts", "stores,clusters"},
		// Flag parsing stops at a word: this ran the whole quick benchmark,
		// stores and cluster, ignoring -parts.
		{"-quick", "stores", "-parts", "bogus"}} {
		if err := run(args, io.Discard, io.Discard); err == nil {
			t.Errorf("clusterbench %v: no error", args)
		}
	}
}
