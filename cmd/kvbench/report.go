package main

import (
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// find returns the result of engine on workload (nil if it did not run).
func find(rs []result, workload, engine string) *result {
	for i := range rs {
		if rs[i].Workload == workload && rs[i].Engine == engine {
			return &rs[i]
		}
	}
	return nil
}

// workloadsOf lists the workloads in rs in first-seen order.
func workloadsOf(rs []result) []string {
	var ws []string
	for _, r := range rs {
		if !slices.Contains(ws, r.Workload) {
			ws = append(ws, r.Workload)
		}
	}
	return ws
}

func fmtOpt(v float64, format string) string {
	if v < 0 {
		return "n/a"
	}
	return fmt.Sprintf(format, v)
}

func ratioStr(a, b float64) string {
	switch {
	case a < 0 || b < 0:
		return "n/a"
	case b == 0 && a == 0:
		return "both 0"
	case b == 0:
		return "inf"
	}
	return fmt.Sprintf("%.2fx", a/b)
}

var columns = []string{"engine", "filter", "ops/s", "p50 us", "p99 us", "p999 us", "reads/op", "bytes/op", "write amp", "space amp", "filter B/key", "peak RSS MB", "alloc B/op"}

func row(r result) []string {
	wa := "-"
	if r.WriteAmp > 0 {
		wa = fmt.Sprintf("%.2f", r.WriteAmp)
	}
	return []string{r.Engine, r.Filter, fmt.Sprintf("%.0f", r.OpsPerSec), fmt.Sprintf("%.1f", r.P50us), fmt.Sprintf("%.1f", r.P99us),
		fmt.Sprintf("%.1f", r.P999us), fmt.Sprintf("%.4f", r.DataBlockReadsPerOp), fmt.Sprintf("%.0f", r.BytesReadPerOp), wa,
		fmt.Sprintf("%.2f", r.SpaceAmp), fmtOpt(r.FilterBytesPerKey, "%.3f"), fmt.Sprintf("%.0f", r.PeakRSSMB),
		fmt.Sprintf("%.0f", r.AllocBytesPerOp)}
}

// ratioLines are sievekv's ratios to each other engine on a workload.
func ratioLines(rs []result, w string) []string {
	s := find(rs, w, "sievekv")
	if s == nil {
		return nil
	}
	var out []string
	if w == "deletelarge" {
		for _, o := range rs {
			if o.Workload == w {
				out = append(out, fmt.Sprintf("%s: table bytes %.2fx of the pre-delete size after %.0f s idle", o.Engine, o.TableBytesRatio, o.Samples[len(o.Samples)-1].Sec))
			}
		}
		if len(s.EngineShadowedByLevel) > 0 {
			var per []string
			for l, n := range s.EngineShadowedByLevel {
				per = append(per, fmt.Sprintf("L%d %d", l, n))
			}
			out = append(out, "sievekv: bytes its tombstones still shadow (estimate), per level: "+strings.Join(per, ", "))
		}
		return out
	}
	if s.EngineWriteStalls+s.EngineWriteSlowdowns > 0 {
		out = append(out, fmt.Sprintf("sievekv write stalls %d, 1 ms slowdowns %d", s.EngineWriteStalls, s.EngineWriteSlowdowns))
	}
	for _, o := range rs {
		if o.Workload != w || o.Engine == "sievekv" {
			continue
		}
		line := fmt.Sprintf("sievekv/%s: ops/s %s, p99 %s, reads/op %s", o.Engine, ratioStr(s.OpsPerSec, o.OpsPerSec),
			ratioStr(s.P99us, o.P99us), ratioStr(s.DataBlockReadsPerOp, o.DataBlockReadsPerOp))
		if s.WriteAmp > 0 && o.WriteAmp > 0 {
			line += ", write amp " + ratioStr(s.WriteAmp, o.WriteAmp)
		}
		line += ", space amp " + ratioStr(s.SpaceAmp, o.SpaceAmp) + ", filter B/key " + ratioStr(s.FilterBytesPerKey, o.FilterBytesPerKey) +
			fmt.Sprintf(", Go heap alloc/op %.0f vs %.0f B", s.AllocBytesPerOp, o.AllocBytesPerOp)
		out = append(out, line)
	}
	return out
}

func printResults(w io.Writer, rs []result) {
	for _, wl := range workloadsOf(rs) {
		fmt.Fprintf(w, "== %s\n", wl)
		fmt.Fprintf(w, "%-17s %-16s %10s %8s %8s %9s %9s %8s %9s %9s %12s %11s %10s\n", strAny(columns)...)
		for _, r := range rs {
			if r.Workload == wl {
				fmt.Fprintf(w, "%-17s %-16s %10s %8s %8s %9s %9s %8s %9s %9s %12s %11s %10s\n", strAny(row(r))...)
			}
		}
		for _, l := range ratioLines(rs, wl) {
			fmt.Fprintln(w, "  "+l)
		}
		fmt.Fprintln(w)
	}
}

func strAny(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

// goal is one performance target, with the issue that set it (Issue) and
// what this run measured.
type goal struct {
	Issue, Goal, Measured string
	// Met is meaningful only when Known (both engines ran the workload).
	Met, Known bool
}

var (
	bothPebbles = []string{"pebble", "pebble-l6filters"}
	plainPebble = []string{"pebble"}
)

// goals checks the run's results against the issues' targets; valueSize
// is the run's value size (-valuesize), what a Get's copy costs.
func goals(rs []result, valueSize int) []goal {
	var gs []goal
	for _, peb := range []string{"pebble", "pebble-l6filters"} {
		if s, p := find(rs, "readmissing", "sievekv"), find(rs, "readmissing", peb); s != nil && p != nil {
			fpk := s.FilterBytesPerKey <= p.FilterBytesPerKey
			gs = append(gs, goal{"7, 10", "readmissing: reads per Get <= 0.5x " + peb + " at <= its filter bytes/key",
				fmt.Sprintf("reads %.4f vs %.4f = %s; filter B/key %.3f vs %.3f = %s", s.DataBlockReadsPerOp, p.DataBlockReadsPerOp,
					ratioStr(s.DataBlockReadsPerOp, p.DataBlockReadsPerOp), s.FilterBytesPerKey, p.FilterBytesPerKey, ratioStr(s.FilterBytesPerKey, p.FilterBytesPerKey)),
				s.DataBlockReadsPerOp <= 0.5*p.DataBlockReadsPerOp && fpk, true})
			gs = append(gs, goal{"10", "readmissing: ops/s >= 1.0x " + peb,
				fmt.Sprintf("%.0f vs %.0f = %s", s.OpsPerSec, p.OpsPerSec, ratioStr(s.OpsPerSec, p.OpsPerSec)), s.OpsPerSec >= p.OpsPerSec, true})
		}
		if s, p := find(rs, "readrandom", "sievekv"), find(rs, "readrandom", peb); s != nil && p != nil {
			gs = append(gs, goal{"10", "readrandom: ops/s >= 1.0x " + peb,
				fmt.Sprintf("%.0f vs %.0f = %s", s.OpsPerSec, p.OpsPerSec, ratioStr(s.OpsPerSec, p.OpsPerSec)), s.OpsPerSec >= p.OpsPerSec, true})
		}
		if s, p := find(rs, "deleterandom-getdeleted", "sievekv"), find(rs, "deleterandom-getdeleted", peb); s != nil && p != nil {
			gs = append(gs, goal{"7", "deleterandom: Gets of deleted keys read no more than " + peb,
				fmt.Sprintf("reads/Get %.4f vs %.4f = %s", s.DataBlockReadsPerOp, p.DataBlockReadsPerOp, ratioStr(s.DataBlockReadsPerOp, p.DataBlockReadsPerOp)),
				s.DataBlockReadsPerOp <= p.DataBlockReadsPerOp, true})
		}
	}
	if s := find(rs, "deletelarge", "sievekv"); s != nil {
		gs = append(gs, goal{"19", "deletelarge: table bytes <= 0.6x the pre-delete size after idling",
			fmt.Sprintf("%.2fx after %.0f s", s.TableBytesRatio, s.Samples[len(s.Samples)-1].Sec), s.TableBytesRatio <= 0.6, true})
	}
	// Issue 17's present-key read targets: the point-read workloads
	// against plain Pebble and the L6-filter variant, scans and the
	// parallel readers against plain Pebble (the variant emulates Get
	// only).
	for _, t := range []struct {
		w       string
		min     float64
		engines []string
	}{
		{"readrandom", 1.1, bothPebbles}, {"readhot", 1.1, bothPebbles}, {"ycsb-b", 1.1, bothPebbles}, {"ycsb-c", 1.1, bothPebbles},
		{"scanrange", 1.0, plainPebble},
		{"readrandom-par2", 1.0, plainPebble}, {"readrandom-par4", 1.0, plainPebble}, {"readrandom-par8", 1.0, plainPebble},
	} {
		for _, peb := range t.engines {
			if s, p := find(rs, t.w, "sievekv"), find(rs, t.w, peb); s != nil && p != nil {
				gs = append(gs, goal{"17", fmt.Sprintf("%s: ops/s >= %.1fx %s", t.w, t.min, peb),
					fmt.Sprintf("%.0f vs %.0f = %s", s.OpsPerSec, p.OpsPerSec, ratioStr(s.OpsPerSec, p.OpsPerSec)), s.OpsPerSec >= t.min*p.OpsPerSec, true})
			}
		}
	}
	// Go heap per present-key Get: the value's copy and at most 64 bytes
	// more (every Get of these workloads finds its key).
	for _, w := range []string{"readrandom", "readhot", "ycsb-c"} {
		if s := find(rs, w, "sievekv"); s != nil {
			limit := float64(valueSize + 64)
			gs = append(gs, goal{"17", fmt.Sprintf("%s: Go heap allocated per Get <= value size + 64 B", w),
				fmt.Sprintf("%.0f B per Get, limit %.0f B (%d-byte values)", s.AllocBytesPerOp, limit, valueSize), s.AllocBytesPerOp <= limit, true})
		}
	}
	if s, p := find(rs, "fillrandom", "sievekv"), find(rs, "fillrandom", "pebble"); s != nil && p != nil {
		gs = append(gs, goal{"10", "fillrandom: ops/s >= 0.8x pebble",
			fmt.Sprintf("%.0f vs %.0f = %s", s.OpsPerSec, p.OpsPerSec, ratioStr(s.OpsPerSec, p.OpsPerSec)), s.OpsPerSec >= 0.8*p.OpsPerSec, true})
		gs = append(gs, goal{"7, 10", "fillrandom: write amplification <= pebble's",
			fmt.Sprintf("%.2f vs %.2f = %s", s.WriteAmp, p.WriteAmp, ratioStr(s.WriteAmp, p.WriteAmp)), s.WriteAmp <= p.WriteAmp, true})
	}
	return append(gs, rangeFilterGoals(rs)...)
}

// rangeFilterGoals are the bounded-scan goals: range filters make empty
// scans nearly free and cost non-empty ones nothing.
func rangeFilterGoals(rs []result) []goal {
	var gs []goal
	if rf := find(rs, "scanempty", "sievekv-rf"); rf != nil {
		gs = append(gs, goal{"22", "scanempty: table reads per empty scan <= 0.05 with range filters",
			fmt.Sprintf("%.4f (without range filters %s)", rf.DataBlockReadsPerOp, readsOf(find(rs, "scanempty", "sievekv"))),
			rf.DataBlockReadsPerOp <= 0.05, true})
		if p := find(rs, "scanempty", "pebble"); p != nil {
			gs = append(gs, goal{"22", "scanempty: reads per scan <= 0.1x pebble",
				fmt.Sprintf("%.4f vs %.4f = %s", rf.DataBlockReadsPerOp, p.DataBlockReadsPerOp, ratioStr(rf.DataBlockReadsPerOp, p.DataBlockReadsPerOp)),
				rf.DataBlockReadsPerOp <= 0.1*p.DataBlockReadsPerOp, true})
		}
	}
	if rf, s := find(rs, "scanshort", "sievekv-rf"), find(rs, "scanshort", "sievekv"); rf != nil && s != nil {
		gs = append(gs, goal{"22", "scanshort: ops/s with range filters >= 0.95x without",
			fmt.Sprintf("%.0f vs %.0f = %s", rf.OpsPerSec, s.OpsPerSec, ratioStr(rf.OpsPerSec, s.OpsPerSec)), rf.OpsPerSec >= 0.95*s.OpsPerSec, true})
	}
	return gs
}

func readsOf(r *result) string {
	if r == nil {
		return "not measured"
	}
	return fmt.Sprintf("%.4f", r.DataBlockReadsPerOp)
}

func verdict(g goal) string {
	switch {
	case !g.Known:
		return "not measured"
	case g.Met:
		return "met"
	}
	return "NOT met"
}

func printGoals(w io.Writer, gs []goal, rs []result) {
	fmt.Fprintln(w, "== goals (issues 7, 10, 17, 19 and 22)")
	for _, g := range gs {
		fmt.Fprintf(w, "  [%s] %s: %s\n", verdict(g), g.Goal, g.Measured)
	}
	for _, l := range tombstoneLines(rs) {
		fmt.Fprintln(w, "  "+l)
	}
}

// tombstoneLines compare sievekv with and without its tombstone index on
// the deleterandom phases.
func tombstoneLines(rs []result) []string {
	var out []string
	for _, w := range []string{"deleterandom", "deleterandom-getdeleted", "deleterandom-getkept"} {
		on, off := find(rs, w, "sievekv"), find(rs, w, "sievekv-notsi")
		if on == nil || off == nil {
			continue
		}
		out = append(out, fmt.Sprintf("tombstone index on/off, %s: ops/s %s, p99 %s, reads/op %.4f vs %.4f (%s)", w,
			ratioStr(on.OpsPerSec, off.OpsPerSec), ratioStr(on.P99us, off.P99us), on.DataBlockReadsPerOp, off.DataBlockReadsPerOp,
			ratioStr(on.DataBlockReadsPerOp, off.DataBlockReadsPerOp)))
	}
	on, off := find(rs, "deleterandom-getdeleted", "sievekv"), find(rs, "deleterandom-getdeleted", "sievekv-notsi")
	if on != nil && off != nil && math.Abs(on.DataBlockReadsPerOp-off.DataBlockReadsPerOp) <= 0.02*max(off.DataBlockReadsPerOp, 0.001) {
		out = append(out, "reading: with the index on, Gets of deleted keys read the same number of blocks (within 2%): "+
			"a Get already stops at the newest version, the tombstone, so the index can only save CPU here, and a single "+
			"run's ops/s ratio on a shared machine does not resolve that.")
	}
	return out
}

func mdTable(b *strings.Builder, head []string, rows [][]string) {
	b.WriteString("| " + strings.Join(head, " | ") + " |\n|")
	for range head {
		b.WriteString("---|")
	}
	b.WriteString("\n")
	for _, r := range rows {
		b.WriteString("| " + strings.Join(r, " | ") + " |\n")
	}
	b.WriteString("\n")
}

// writeMarkdown writes the kvbench section of docs/benchmarks.md.
func writeMarkdown(path string, args []string, hdr string, rs []result, gs []goal, charts []string, took time.Duration) error {
	var b strings.Builder
	b.WriteString("## kvbench: engines side by side\n\n")
	fmt.Fprintf(&b, "Command: `go run ./cmd/kvbench %s` (finished %s, took %s).\n\n", strings.Join(args, " "),
		time.Now().UTC().Format("2006-01-02 15:04 UTC"), took.Round(time.Second))
	b.WriteString("```\n" + hdr + "```\n\n")
	b.WriteString("### Goals (issues 7, 10, 17, 19 and 22), measured side by side in this run\n\n")
	var grows [][]string
	for _, g := range gs {
		grows = append(grows, []string{g.Issue, g.Goal, g.Measured, "**" + verdict(g) + "**"})
	}
	mdTable(&b, []string{"issue", "goal", "measured (sievekv vs other)", "verdict"}, grows)
	if tl := tombstoneLines(rs); len(tl) > 0 {
		b.WriteString("### Tombstone index on and off (sievekv vs sievekv-notsi)\n\n")
		for _, l := range tl {
			b.WriteString("- " + l + "\n")
		}
		b.WriteString("\n")
	}
	b.WriteString("### Results per workload\n\n")
	for _, wl := range workloadsOf(rs) {
		fmt.Fprintf(&b, "#### %s\n\n", wl)
		var rows [][]string
		for _, r := range rs {
			if r.Workload == wl {
				rows = append(rows, row(r))
			}
		}
		mdTable(&b, columns, rows)
		for _, l := range ratioLines(rs, wl) {
			b.WriteString("- " + l + "\n")
		}
		b.WriteString("\n")
	}
	for _, c := range charts {
		rel, err := filepath.Rel(filepath.Dir(path), c)
		if err != nil {
			rel = c
		}
		fmt.Fprintf(&b, "![%s](%s)\n\n", strings.TrimSuffix(filepath.Base(c), ".png"), filepath.ToSlash(rel))
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}
