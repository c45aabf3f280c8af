package benchreport

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"gonum.org/v1/plot"
)

// Table writes a markdown table of head and rows to b, then a blank line.
func Table(b *strings.Builder, head []string, rows [][]string) {
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

// Rows renders the results keep selects, in order (BR1), as table rows.
func Rows[T any](rs []T, keep func(T) bool, row func(T) []string) [][]string {
	var out [][]string
	for _, r := range rs {
		if keep(r) {
			out = append(out, row(r))
		}
	}
	return out
}

// ChartLinks writes one markdown image per chart, linked relative to the
// markdown file at mdPath (BR3).
func ChartLinks(b *strings.Builder, mdPath string, charts []string) {
	for _, c := range charts {
		rel, err := filepath.Rel(filepath.Dir(mdPath), c)
		if err != nil {
			rel = c
		}
		fmt.Fprintf(b, "![%s](%s)\n\n", strings.TrimSuffix(filepath.Base(c), ".png"), filepath.ToSlash(rel))
	}
}

// Main runs a benchmark program: run gets the command line after the
// program name, and an error it returns is printed under the program's name
// and exits with status 1. run takes its arguments and writers as
// parameters so that the program's tests call it in process. An interrupt
// (SIGINT, SIGTERM) runs the AtInterrupt functions still registered, which
// remove the TempDir directories, and exits with 128 + the signal's
// number, writing no report: the default action would exit at once and
// leave a run's databases (gigabytes at 1M keys) in the temp directory.
func Main(name string, run func(args []string, stdout, stderr io.Writer) error) {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		sig := <-sigs
		fmt.Fprintf(os.Stderr, "%s: %v: stopped; removing its temporary files, no report written\n", name, sig)
		runInterrupted()
		code := 1
		if s, ok := sig.(syscall.Signal); ok {
			code = 128 + int(s)
		}
		os.Exit(code)
	}()
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, name+":", err)
		os.Exit(1)
	}
}

var interrupted struct {
	sync.Mutex
	next int
	fns  map[int]func()
}

// AtInterrupt registers f to run if Main's program is interrupted before
// the returned cancel is called.
func AtInterrupt(f func()) (cancel func()) {
	interrupted.Lock()
	defer interrupted.Unlock()
	if interrupted.fns == nil {
		interrupted.fns = map[int]func(){}
	}
	id := interrupted.next
	interrupted.next++
	interrupted.fns[id] = f
	return func() {
		interrupted.Lock()
		delete(interrupted.fns, id)
		interrupted.Unlock()
	}
}

// runInterrupted runs the registered functions, newest first.
func runInterrupted() {
	interrupted.Lock()
	defer interrupted.Unlock()
	ids := slices.Sorted(maps.Keys(interrupted.fns))
	slices.Reverse(ids)
	for _, id := range ids {
		interrupted.fns[id]()
	}
}

// TempDir makes a directory as os.MkdirTemp("", prefix) does; remove
// removes it, and so does an interrupt of Main's program before then.
func TempDir(prefix string) (dir string, remove func(), err error) {
	if dir, err = os.MkdirTemp("", prefix); err != nil {
		return "", nil, err
	}
	// Engines may still be writing into it when the interrupt comes:
	// RemoveAll fails on a file made while it runs, so it tries again.
	rm := func() {
		for range 5 {
			if os.RemoveAll(dir) == nil {
				return
			}
		}
	}
	cancel := AtInterrupt(rm)
	return dir, func() { cancel(); rm() }, nil
}

// Outputs are the files a benchmark program writes besides its printed
// report, each only when its flag names a path: -json (the results),
// -plot (a directory of PNG charts) and -md (a markdown section for
// docs/benchmarks.md, which the program writes itself).
type Outputs struct {
	JSON, Plot, MD string
}

// Register adds -json, -plot and -md to fs.
func (o *Outputs) Register(fs *flag.FlagSet) {
	fs.StringVar(&o.JSON, "json", "", "write the results as JSON to this file")
	fs.StringVar(&o.Plot, "plot", "", "write PNG charts to this directory")
	fs.StringVar(&o.MD, "md", "", "write a markdown section (tables, goals, charts) to this file")
}

// RegisterNoCharts adds -json and -md to fs, for a program that draws no
// charts: its help then offers no -plot it would refuse.
func (o *Outputs) RegisterNoCharts(fs *flag.FlagSet) {
	fs.StringVar(&o.JSON, "json", "", "write the results as JSON to this file")
	fs.StringVar(&o.MD, "md", "", "write a markdown section (tables, goals) to this file")
}

// Check refuses, before a run, output paths that would fail or clobber
// each other only once it is over: a -json or -md path (or one of extra,
// a program's other output files) that is a directory or whose directory
// does not exist, a -plot that is a file, and two outputs naming one file
// (the last written replaced the other, and the run still exited 0).
func (o Outputs) Check(extra ...string) error {
	files := map[string]string{}
	for _, p := range append([]string{o.JSON, o.MD}, extra...) {
		if p == "" {
			continue
		}
		abs, err := filepath.Abs(p)
		if err != nil {
			return err
		}
		if other, ok := files[abs]; ok {
			return fmt.Errorf("output %s named twice (%s): one would overwrite the other", p, other)
		}
		files[abs] = p
		if fi, err := os.Stat(p); err == nil && fi.IsDir() {
			return fmt.Errorf("output %s is a directory", p)
		}
		if fi, err := os.Stat(filepath.Dir(abs)); err != nil || !fi.IsDir() {
			return fmt.Errorf("output %s: its directory %s does not exist", p, filepath.Dir(p))
		}
	}
	if o.Plot != "" {
		if fi, err := os.Stat(o.Plot); err == nil && !fi.IsDir() {
			return fmt.Errorf("-plot %s is a file, not a directory", o.Plot)
		}
	}
	return nil
}

// Write writes the charts draw makes into o.Plot and the results as
// indented JSON into o.JSON, each only when its path is set. It returns the
// chart paths, for ChartLinks (BR2).
func (o Outputs) Write(results any, draw func(dir string) ([]string, error)) ([]string, error) {
	var charts []string
	if o.Plot != "" {
		var err error
		if charts, err = draw(o.Plot); err != nil {
			return nil, fmt.Errorf("charts: %w", err)
		}
	}
	if o.JSON != "" {
		data, err := json.MarshalIndent(results, "", "  ")
		if err != nil {
			return nil, err
		}
		if err := os.WriteFile(o.JSON, data, 0o644); err != nil {
			return nil, err
		}
	}
	return charts, nil
}

// SetOnCommandLine returns the names of the flags fs's command line set, so
// that a preset such as -quick changes only the defaults the user left.
func SetOnCommandLine(fs *flag.FlagSet) map[string]bool {
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	return set
}

// Args converts cells to fmt arguments, for printing a row with one format.
func Args(cells []string) []any {
	out := make([]any, len(cells))
	for i, s := range cells {
		out[i] = s
	}
	return out
}

// Distinct lists key(x) for every x in xs, each once, in first-seen order (BR1):
// the sizes, filter names or workloads a run measured.
func Distinct[T any, K comparable](xs []T, key func(T) K) []K {
	var out []K
	for _, x := range xs {
		if k := key(x); !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	return out
}

// Decades labels a log axis at the powers of ten only ("1e-05", "0.001"),
// which plot.LogTicks renders with float noise.
type Decades struct{}

// Ticks implements plot.Ticker.
func (Decades) Ticks(lo, hi float64) []plot.Tick {
	var ts []plot.Tick
	for e := math.Floor(math.Log10(lo)); e <= math.Ceil(math.Log10(hi)); e++ {
		ts = append(ts, plot.Tick{Value: math.Pow(10, e), Label: strconv.FormatFloat(math.Pow(10, e), 'g', 1, 64)})
	}
	return ts
}
