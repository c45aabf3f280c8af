// Command clusterbench measures sievekv's replication side, the part of
// docs/benchmarks.md that kvbench does not cover:
//
//   - raftstore beside raft-boltdb v2 under raft's own store benchmarks
//     (github.com/hashicorp/raft/bench), the stores alternating round by
//     round on fresh directories;
//
//   - a three-node kvserver cluster on loopback: writes per second through
//     it, and the longest a client's write waits (retrying the other
//     members) while the leader is stopped with SIGTERM (it hands its
//     leadership over: kvserver's S14) and, side by side, killed with
//     SIGKILL (the others wait out an election timeout).
//
// Run from the module's directory:
//
//	go run ./cmd/clusterbench -quick
//	go run ./cmd/clusterbench -quick -json out.json -md part.md
//
// The cluster runs the kvserver binary -kvserver names, or one it builds
// with the go command on PATH.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/sievekv/sievekv/internal/benchreport"
)

func main() { benchreport.Main("clusterbench", run) }

// report is everything a run measured (the -json output).
type report struct {
	Command  string         `json:"command"`
	Finished time.Time      `json:"finished"`
	Took     string         `json:"took"`
	BenchOps int            `json:"bench_ops"`
	Stores   []storeResult  `json:"stores,omitempty"`
	Writes   *writeResult   `json:"writes,omitempty"`
	Outages  []outageResult `json:"outages,omitempty"`
}

func run(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("clusterbench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	quick := fs.Bool("quick", false, "smaller run: 3 store rounds of 500 ops, 5000 writes, 2 outage rounds per signal")
	rounds := fs.Int("rounds", 5, "rounds of the store benchmarks")
	benchOps := fs.Int("benchops", 1000, "operations per store benchmark and round (go test's -benchtime Nx)")
	writes := fs.Int("writes", 20000, "writes through the cluster")
	clients := fs.Int("clients", 16, "concurrent clients of the write load")
	outageRounds := fs.Int("outages", 3, "leader stops per signal (SIGTERM and SIGKILL alternate)")
	parts := fs.String("parts", "stores,cluster", "what to measure, comma-separated: stores, cluster")
	kvserver := fs.String("kvserver", "", "kvserver binary (default: built with go build)")
	var out benchreport.Outputs
	out.RegisterNoCharts(fs) // no -plot: clusterbench draws no charts
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q: clusterbench takes flags only, and reads none after it", fs.Arg(0))
	}
	if *quick {
		set := benchreport.SetOnCommandLine(fs)
		for name, v := range map[string]string{"rounds": "3", "benchops": "500", "writes": "5000", "outages": "2"} {
			if !set[name] {
				fs.Set(name, v)
			}
		}
	}
	if err := out.Check(); err != nil {
		return err
	}
	if *rounds < 1 || *benchOps < 1 || *writes < 1 || *clients < 1 || *outageRounds < 1 {
		return fmt.Errorf("-rounds, -benchops, -writes, -clients and -outages must be positive")
	}
	if *clients > *writes {
		// Each client takes the next write: the others would idle, and
		// the report would state a concurrency that never ran.
		return fmt.Errorf("-clients %d is more than the %d -writes", *clients, *writes)
	}
	want := map[string]bool{}
	for _, p := range strings.Split(*parts, ",") {
		if p != "stores" && p != "cluster" {
			return fmt.Errorf("-parts: %q is neither stores nor cluster", p)
		}
		want[p] = true
	}
	log := func(format string, a ...any) { fmt.Fprintf(stderr, "clusterbench: "+format+"\n", a...) }
	start := time.Now()
	rep := report{Command: "go run ./cmd/clusterbench " + strings.Join(args, " "), BenchOps: *benchOps}
	if want["stores"] {
		var err error
		if rep.Stores, err = runStores(*rounds, *benchOps, log); err != nil {
			return err
		}
	}
	if want["cluster"] {
		if err := runCluster(&rep, *kvserver, *writes, *clients, *outageRounds, log); err != nil {
			return err
		}
	}
	rep.Finished, rep.Took = time.Now().UTC(), time.Since(start).Round(time.Second).String()
	md := markdown(rep)
	fmt.Fprint(stdout, md)
	if _, err := out.Write(rep, nil); err != nil {
		return err
	}
	if out.MD != "" {
		return os.WriteFile(out.MD, []byte(md), 0o644)
	}
	return nil
}

// runCluster starts the three-node cluster and measures the write load and
// the leader outages, SIGTERM and SIGKILL alternating.
func runCluster(rep *report, bin string, writes, clients, outageRounds int, log func(string, ...any)) error {
	root, remove, err := benchreport.TempDir("clusterbench-")
	if err != nil {
		return err
	}
	defer remove()
	if bin == "" {
		bin = filepath.Join(root, "kvserver")
		log("building kvserver")
		if b, err := exec.Command("go", "build", "-o", bin, "github.com/sievekv/sievekv/cmd/kvserver").CombinedOutput(); err != nil {
			return fmt.Errorf("build kvserver: %v: %s", err, b)
		}
	}
	c, err := startCluster(bin, filepath.Join(root, "data"), log)
	if err != nil {
		return err
	}
	defer c.stopAll()
	log("%d writes from %d clients", writes, clients)
	w, err := c.writeLoad(writes, clients, 100)
	if err != nil {
		return err
	}
	rep.Writes = &w
	term, kill := outageResult{Signal: "SIGTERM"}, outageResult{Signal: "SIGKILL"}
	for round := 0; round < outageRounds; round++ {
		for k := 0; k < 2; k++ {
			o, sig := &term, syscall.SIGTERM
			if (k+round)%2 == 1 {
				o, sig = &kill, syscall.SIGKILL
			}
			// Long enough for an election after a kill (raft's default
			// 1 s heartbeat timeout, randomized up to twice that) and
			// the writes it held up.
			longest, exit, err := c.leaderOutage(sig, 4, 4*time.Second)
			if err != nil {
				return fmt.Errorf("%s the leader: %w", o.Signal, err)
			}
			log("round %d: %s the leader: longest write %v, exit after %v", round+1, o.Signal, longest, exit)
			o.LongestWaitMs = append(o.LongestWaitMs, ms(longest))
			o.ExitMs = append(o.ExitMs, ms(exit))
		}
	}
	rep.Outages = []outageResult{term, kill}
	return nil
}

// markdown is the run's section of docs/benchmarks.md.
func markdown(rep report) string {
	var b strings.Builder
	b.WriteString("## raftstore and kvserver: the replication side\n\n")
	fmt.Fprintf(&b, "Command: `%s` (finished %s, took %s).\n\n", rep.Command, rep.Finished.Format("2006-01-02 15:04 UTC"), rep.Took)
	if len(rep.Stores) > 0 {
		fmt.Fprintf(&b, "### raftstore beside raft-boltdb v2 (raft's store benchmarks)\n\n")
		fmt.Fprintf(&b, "raft's own store benchmark functions (`github.com/hashicorp/raft/bench`), %d operations each, on `raftstore.Store` and on raft-boltdb v2; ns/op, median and range of %d rounds in which the stores alternate, each on a fresh directory. The writes (StoreLog, StoreLogs, DeleteRange, Set, SetUint64) are one fsync each on both stores, so their rows vary most from run to run. Goal: sievekv/boltdb <= 1.0x on every row.\n\n", rep.BenchOps, len(rep.Stores[0].NsPerOp))
		var rows [][]string
		for i := 0; i+1 < len(rep.Stores); i += 2 {
			ours, bolt := rep.Stores[i], rep.Stores[i+1]
			ratio := ours.median() / bolt.median()
			verdict := "**met**"
			if ratio > 1.0 {
				verdict = "**NOT met**"
			}
			rows = append(rows, []string{ours.Bench, nsRange(ours), nsRange(bolt), fmt.Sprintf("%.2fx", ratio),
				fmt.Sprintf("%d, %d vs %d, %d", ours.BytesPerOp, ours.AllocsPerOp, bolt.BytesPerOp, bolt.AllocsPerOp), verdict})
		}
		benchreport.Table(&b, []string{"benchmark", "sievekv ns/op (range)", "boltdb ns/op (range)", "sievekv/boltdb", "B/op, allocs/op sievekv vs boltdb", "verdict"}, rows)
	}
	if rep.Writes != nil {
		w := rep.Writes
		b.WriteString("### kvserver: writes through a three-node cluster\n\n")
		fmt.Fprintf(&b, "Three kvserver processes on loopback (default settings: 1 s heartbeat timeout, WAL synced per raft append), %d writes of 100-byte values from %d concurrent clients spread over the members (followers redirect to the leader); a failed attempt is retried on the next member.\n\n", w.Writes, w.Clients)
		benchreport.Table(&b, []string{"writes/s", "p50", "p99", "max", "failed attempts"}, [][]string{{
			fmt.Sprintf("%.0f", w.OpsPerSec), fmt.Sprintf("%.2f ms", w.P50Ms), fmt.Sprintf("%.2f ms", w.P99Ms), fmt.Sprintf("%.1f ms", w.MaxMs), fmt.Sprint(w.FailedTries)}})
	}
	if len(rep.Outages) == 2 {
		term, kill := rep.Outages[0], rep.Outages[1]
		b.WriteString("### kvserver: a client's longest write while the leader stops\n\n")
		fmt.Fprintf(&b, "Four clients write without pause through the members in turn, retrying each write on the next member until one acknowledges it; a second in, the leader is sent the signal, and the clients write on for 4 s. The figure is the longest any write took from its first attempt, per round (%d rounds per signal, the signals alternating); the stopped node is restarted from its directory and the cluster settled before the next round. SIGTERM: the leader hands its leadership to a follower before it exits (kvserver's S14). SIGKILL: the followers elect a leader once a heartbeat timeout has passed without one.\n\n", len(term.LongestWaitMs))
		rows := [][]string{}
		for _, o := range []outageResult{term, kill} {
			rows = append(rows, []string{o.Signal, msRange(o.LongestWaitMs), msRange(o.ExitMs)})
		}
		benchreport.Table(&b, []string{"leader stopped by", "longest write, ms (range)", "leader's exit after the signal, ms (range)"}, rows)
		fmt.Fprintf(&b, "SIGTERM/SIGKILL, longest write: %.2fx.\n\n", median(term.LongestWaitMs)/median(kill.LongestWaitMs))
	}
	return b.String()
}

// medianRange is "median (min-max)" of xs, each figure formatted by f.
func medianRange(xs []float64, f func(float64) string) string {
	return fmt.Sprintf("%s (%s-%s)", f(median(xs)), f(slices.Min(xs)), f(slices.Max(xs)))
}

func nsRange(r storeResult) string { return medianRange(r.NsPerOp, commas) }

func msRange(xs []float64) string {
	return medianRange(xs, func(x float64) string { return fmt.Sprintf("%.0f", x) })
}

// commas formats a non-negative count with thousands separators.
func commas(x float64) string {
	s := fmt.Sprintf("%.0f", x)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
