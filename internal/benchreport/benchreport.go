package benchreport

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

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

// Outputs writes a run's files: the charts draw makes into plotDir and the
// results as indented JSON into jsonOut, each only when its path is set. It
// returns the chart paths, for ChartLinks (BR2).
func Outputs(plotDir, jsonOut string, results any, draw func(dir string) ([]string, error)) ([]string, error) {
	var charts []string
	if plotDir != "" {
		var err error
		if charts, err = draw(plotDir); err != nil {
			return nil, fmt.Errorf("charts: %w", err)
		}
	}
	if jsonOut != "" {
		data, err := json.MarshalIndent(results, "", "  ")
		if err != nil {
			return nil, err
		}
		if err := os.WriteFile(jsonOut, data, 0o644); err != nil {
			return nil, err
		}
	}
	return charts, nil
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
