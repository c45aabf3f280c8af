package main

import (
	"fmt"
	"io"
	"math"
	"os"
	"strings"
	"time"

	"github.com/sievekv/sievekv/internal/benchreport"
)

// find returns the result of engine on workload (nil if it did not run).
func find(rs []result, workload, engine string) *result {
	return findWhere(rs, func(r *result) bool { return r.Workload == workload && r.Engine == engine })
}

// findWhere returns the first result that match accepts (nil if none).
func findWhere(rs []result, match func(*result) bool) *result {
	for i := range rs {
		if match(&rs[i]) {
			return &rs[i]
		}
	}
	return nil
}

// workloadsOf lists the workloads in rs in first-seen order.
func workloadsOf(rs []result) []string {
	return benchreport.Distinct(rs, func(r result) string { return r.Workload })
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
	if isDeleteLarge(w) {
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
	if line := levelWritesLine(rs, w); line != "" {
		out = append(out, line)
	}
	if line := churnDropLine(rs, w); line != "" {
		out = append(out, line)
	}
	if line := writerLine(rs, w); line != "" {
		out = append(out, line)
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
		if s.GCCycles+o.GCCycles > 0 {
			line += fmt.Sprintf(", GC cycles in the loop %d vs %d", s.GCCycles, o.GCCycles)
		}
		out = append(out, line)
	}
	return out
}

func printResults(w io.Writer, rs []result) {
	for _, wl := range workloadsOf(rs) {
		fmt.Fprintf(w, "== %s\n", wl)
		fmt.Fprintf(w, "%-17s %-16s %10s %8s %8s %9s %9s %8s %9s %9s %12s %11s %10s\n", benchreport.Args(columns)...)
		for _, r := range rs {
			if r.Workload == wl {
				fmt.Fprintf(w, "%-17s %-16s %10s %8s %8s %9s %9s %8s %9s %9s %12s %11s %10s\n", benchreport.Args(row(r))...)
			}
		}
		for _, l := range ratioLines(rs, wl) {
			fmt.Fprintln(w, "  "+l)
		}
		for _, r := range rs {
			if r.Workload == wl && r.EngineShape != "" {
				fmt.Fprintf(w, "  %s %s shape: %s\n", r.Engine, r.Filter, r.EngineShape)
			}
		}
		for _, l := range scanTrees.lines(wl) {
			fmt.Fprintln(w, "  "+l)
		}
		fmt.Fprintln(w)
	}
}

// goal is one performance target, with the issue that set it (Issue) and
// what this run measured.
type goal struct {
	Issue, Goal, Measured string
	// Met is meaningful only when Known (both engines ran the workload).
	Met, Known bool
}

// goals are the targets the issues set, each judged on this run's
// side-by-side figures: sievekv against Pebble (plain Get and the
// L6-filter variant) unless a goal names another engine.
func goals(rs []result) []goal {
	var gs []goal
	// ratioGoal: sievekv's metric on workload w against engine peer's is
	// at least (atLeast) or at most (!atLeast) limit times it.
	ratioGoal := func(issue, w, peer, what string, metric func(*result) float64, atLeast bool, limit float64) {
		s, p := find(rs, w, "sievekv"), find(rs, w, peer)
		if s == nil || p == nil {
			return
		}
		a, b := metric(s), metric(p)
		// An isolated run's rounds: the medians, and their spread
		// (round_spread.go).
		sr, pr := roundFigures(s, what), roundFigures(p, what)
		spread := roundSpread(sr, pr)
		if spread != nil {
			a, b = lowerMedian(sr), lowerMedian(pr)
		}
		cmp, met := "<=", a <= limit*b
		if atLeast {
			cmp, met = ">=", a >= limit*b
		}
		measured := fmt.Sprintf("%s vs %s = %s", fmtFigure(a), fmtFigure(b), ratioStr(a, b))
		if spread != nil {
			measured += " (medians)" + spreadNote(spread, limit)
		}
		// Both 0 (no table reads, no table writes in the phase): the
		// ratio the goal sets was not exercised, whatever "0 <= 0" says.
		known := a != 0 || b != 0
		gs = append(gs, goal{issue, fmt.Sprintf("%s: %s %s %.1fx %s", w, what, cmp, limit, peer), measured, met, known})
	}
	opsPerSec := func(r *result) float64 { return r.OpsPerSec }
	p99 := func(r *result) float64 { return r.P99us }
	writeAmp := func(r *result) float64 { return r.WriteAmp }
	reads := func(r *result) float64 { return r.DataBlockReadsPerOp }

	// Issue 16: the write path.
	for _, w := range []string{"fillseq", "fillrandom", "overwrite"} {
		ratioGoal("16", w, "pebble", "ops/s", opsPerSec, true, 1.0)
		ratioGoal("16", w, "pebble", "write amp", writeAmp, false, 1.0)
		ratioGoal("16", w, "pebble", "p99", p99, false, 2.0)
	}
	ratioGoal("16", "fillsync8", "pebble", "ops/s", opsPerSec, true, 1.0)

	// Issue 17: present-key reads and scans, against both Pebble variants.
	for _, peb := range []string{"pebble", "pebble-l6filters"} {
		for _, w := range []string{"readrandom", "readhot", "ycsb-b", "ycsb-c"} {
			ratioGoal("17", w, peb, "ops/s", opsPerSec, true, 1.1)
		}
	}
	// Scans and parallel readers against plain Pebble: the L6-filter
	// variant emulates Get only, its scans are plain Pebble's.
	for _, w := range []string{"scanrange", "readrandom-par2", "readrandom-par4", "readrandom-par8"} {
		ratioGoal("17", w, "pebble", "ops/s", opsPerSec, true, 1.0)
	}
	for _, w := range []string{"readrandom", "readhot", "ycsb-c"} {
		if s := find(rs, w, "sievekv"); s != nil {
			limit := float64(s.ValueSize) + 64
			gs = append(gs, goal{"17", fmt.Sprintf("%s: Go heap per present-key Get <= value size + 64 B", w),
				fmt.Sprintf("%.0f B vs %.0f B", s.AllocBytesPerOp, limit), s.AllocBytesPerOp <= limit, true})
		}
	}

	gs = append(gs, whileWritingGoals(rs)...)

	// Issues 7, 10 and 20: absent keys.
	for _, peb := range []string{"pebble", "pebble-l6filters"} {
		if s, p := find(rs, "readmissing", "sievekv"), find(rs, "readmissing", peb); s != nil && p != nil {
			gs = append(gs, goal{"20", "readmissing: reads per Get <= 0.2x " + peb + " at <= its filter bytes/key",
				fmt.Sprintf("reads %.4f vs %.4f = %s; filter B/key %.3f vs %.3f = %s", s.DataBlockReadsPerOp, p.DataBlockReadsPerOp,
					ratioStr(s.DataBlockReadsPerOp, p.DataBlockReadsPerOp), s.FilterBytesPerKey, p.FilterBytesPerKey, ratioStr(s.FilterBytesPerKey, p.FilterBytesPerKey)),
				s.DataBlockReadsPerOp <= 0.2*p.DataBlockReadsPerOp && s.FilterBytesPerKey <= p.FilterBytesPerKey,
				s.DataBlockReadsPerOp != 0 || p.DataBlockReadsPerOp != 0})
		}
		ratioGoal("10", "readmissing", peb, "ops/s", opsPerSec, true, 1.0)
	}

	// Issue 19: deletes.
	ratioGoal("19", "deleterandom", "pebble", "space amp", func(r *result) float64 { return r.SpaceAmp }, false, 1.0)
	ratioGoal("19", "deleterandom-getdeleted", "pebble", "reads per Get", reads, false, 1.0)
	if g, ok := deleteSpeedGoal(rs); ok {
		gs = append(gs, g)
	}
	if g, ok := churnWriteGoal(rs); ok {
		gs = append(gs, g)
	}
	if s := find(rs, "deletelarge", "sievekv"); s != nil {
		gs = append(gs, goal{"19", "deletelarge: table bytes <= 0.6x the pre-delete size after idling",
			fmt.Sprintf("%.2fx after %.0f s", s.TableBytesRatio, s.Samples[len(s.Samples)-1].Sec), s.TableBytesRatio <= 0.6, true})
	}
	if s := find(rs, "deleterangelarge", "sievekv"); s != nil {
		// A quarter of the data stays: 0.4x leaves room for the tables'
		// index and filter and a compaction still settling.
		gs = append(gs, goal{"24", "deleterangelarge: a DeleteRange of 3/4 of the keys leaves table bytes <= 0.4x after idling",
			fmt.Sprintf("%.2fx after %.0f s", s.TableBytesRatio, s.Samples[len(s.Samples)-1].Sec), s.TableBytesRatio <= 0.4, true})
	}
	gs = append(gs, rangeFilterGoals(rs)...)
	return append(gs, filterBudgetGoals(rs)...)
}

// howMeasured says, for a goal comparing a with b, whether the two were
// measured as a pair (pair.go) or one after the other.
func howMeasured(a, b *result) string {
	if a.PairedWith == b.Engine && b.PairedWith == a.Engine {
		return ", paired: alternating chunks"
	}
	return ", one after the other"
}

// fmtFigure prints a measured figure: whole numbers from 1000 up, three
// significant digits below.
func fmtFigure(v float64) string {
	if math.Abs(v) >= 1000 {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.3g", v)
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
	fmt.Fprintln(w, "== goals (the issues' targets, judged on this run)")
	for _, g := range gs {
		fmt.Fprintf(w, "  [%s] %s: %s\n", verdict(g), g.Goal, g.Measured)
	}
	for _, l := range tombstoneLines(rs) {
		fmt.Fprintln(w, "  "+l)
	}
}

// tombstoneLines compare sievekv with and without its tombstone index on
// the deleterandom phases and on deletechurn.
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
	if on := find(rs, "deleterandom", "sievekv"); on != nil && on.EngineTombstoneIndexPeak > 0 {
		out = append(out, fmt.Sprintf("tombstone index memory: %.2f B per tombstone at its fullest (%d tombstones)",
			on.EngineTombstoneIndexPeakBytesPerTombstone, on.EngineTombstoneIndexPeak))
		out = append(out, fmt.Sprintf("tombstone index cost in deleterandom: %d growths reading the tables (%.1f ms), adds and removes %.1f ms",
			on.EngineTombstoneIndexRebuilds, on.EngineTombstoneIndexRebuildMs, on.EngineTombstoneIndexUpdateMs))
	}
	on, off := find(rs, "deleterandom-getdeleted", "sievekv"), find(rs, "deleterandom-getdeleted", "sievekv-notsi")
	if on != nil && off != nil && math.Abs(on.DataBlockReadsPerOp-off.DataBlockReadsPerOp) <= 0.02*max(off.DataBlockReadsPerOp, 0.001) {
		out = append(out, "reading: with the index on, Gets of deleted keys read the same number of blocks (within 2%): "+
			"a Get already stops at the newest version, the tombstone, and does not consult the index, so its ops/s ratio "+
			"shows how alike the two DBs and their measurement were.")
	}
	return append(out, churnLines(rs)...)
}

// writeMarkdown writes the kvbench section of docs/benchmarks.md.
func writeMarkdown(path, title string, args []string, hdr string, rs []result, gs []goal, charts []string, took time.Duration) error {
	var b strings.Builder
	b.WriteString("## kvbench: " + title + "\n\n")
	fmt.Fprintf(&b, "Command: `go run ./cmd/kvbench %s` (finished %s, took %s).\n\n", strings.Join(args, " "),
		time.Now().UTC().Format("2006-01-02 15:04 UTC"), took.Round(time.Second))
	b.WriteString("```\n" + hdr + "```\n\n")
	b.WriteString("### Goals, measured side by side in this run\n\n")
	var grows [][]string
	for _, g := range gs {
		grows = append(grows, []string{g.Issue, g.Goal, g.Measured, "**" + verdict(g) + "**"})
	}
	benchreport.Table(&b, []string{"issue", "goal", "measured (sievekv vs other)", "verdict"}, grows)
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
		benchreport.Table(&b, columns, benchreport.Rows(rs, func(r result) bool { return r.Workload == wl }, row))
		for _, l := range ratioLines(rs, wl) {
			b.WriteString("- " + l + "\n")
		}
		for _, l := range scanTrees.lines(wl) {
			b.WriteString("- " + l + "\n")
		}
		b.WriteString("\n")
	}
	benchreport.ChartLinks(&b, path, charts)
	return os.WriteFile(path, []byte(b.String()), 0o644)
}
