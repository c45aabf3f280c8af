package benchreport

import (
	"encoding/json"
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestTableAndRows pins the markdown both benchmark programs write into
// docs/benchmarks.md: a header row, a separator per column, one row per
// selected result in order, and a blank line after.
func TestTableAndRows(t *testing.T) {
	type res struct {
		name string
		n    int
	}
	rs := []res{{"a", 1}, {"b", 2}, {"c", 1}}
	rows := Rows(rs, func(r res) bool { return r.n == 1 }, func(r res) []string { return []string{r.name, "x"} })
	var b strings.Builder
	Table(&b, []string{"name", "col"}, rows)
	want := "| name | col |\n|---|---|\n| a | x |\n| c | x |\n\n"
	if b.String() != want {
		t.Fatalf("table:\n%q\nwant\n%q", b.String(), want)
	}
	if got := Distinct(rs, func(r res) int { return r.n }); !slices.Equal(got, []int{1, 2}) {
		t.Fatalf("Distinct = %v, want [1 2] (first-seen order)", got)
	}
	if got := Args([]string{"p", "q"}); len(got) != 2 || got[0] != "p" || got[1] != "q" {
		t.Fatalf("Args = %v", got)
	}
}

// TestChartLinksAreRelative: a chart beside docs/ is linked from the
// markdown's own directory, so the page renders wherever docs/ is served.
func TestChartLinksAreRelative(t *testing.T) {
	var b strings.Builder
	ChartLinks(&b, filepath.Join("docs", "benchmarks.md"), []string{filepath.Join("docs", "img", "kv_reads.png")})
	if want := "![kv_reads](img/kv_reads.png)\n\n"; b.String() != want {
		t.Fatalf("got %q, want %q", b.String(), want)
	}
}

// TestOutputs writes only what a path is set for, wraps a chart failure,
// and writes the results as indented JSON.
func TestOutputs(t *testing.T) {
	dir := t.TempDir()
	drawn := false
	draw := func(d string) ([]string, error) { drawn = true; return []string{filepath.Join(d, "c.png")}, nil }
	charts, err := Outputs{}.Write([]int{1}, draw)
	if err != nil || charts != nil || drawn {
		t.Fatalf("no paths set: charts %v, err %v, drawn %v", charts, err, drawn)
	}
	jsonOut := filepath.Join(dir, "out.json")
	charts, err = Outputs{Plot: dir, JSON: jsonOut}.Write(map[string]int{"n": 3}, draw)
	if err != nil || len(charts) != 1 || !drawn {
		t.Fatalf("charts %v, err %v, drawn %v", charts, err, drawn)
	}
	data, err := os.ReadFile(jsonOut)
	if err != nil {
		t.Fatal(err)
	}
	var back map[string]int
	if err := json.Unmarshal(data, &back); err != nil || back["n"] != 3 || !strings.Contains(string(data), "\n  ") {
		t.Fatalf("JSON %q: %v", data, err)
	}
	boom := errors.New("boom")
	if _, err := (Outputs{Plot: dir}).Write(nil, func(string) ([]string, error) { return nil, boom }); !errors.Is(err, boom) || !strings.HasPrefix(err.Error(), "charts: ") {
		t.Fatalf("chart failure: %v", err)
	}
}

// TestOutputFlags: Register adds -json, -plot and -md, each filling its
// field, and SetOnCommandLine names exactly the flags the command line
// gave, defaulted or not, so a preset leaves them alone.
func TestOutputFlags(t *testing.T) {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var o Outputs
	o.Register(fs)
	rounds := fs.Int("rounds", 5, "")
	fs.Bool("quick", false, "")
	if err := fs.Parse([]string{"-json", "r.json", "-md", "p.md", "-rounds", "5"}); err != nil {
		t.Fatal(err)
	}
	if o != (Outputs{JSON: "r.json", MD: "p.md"}) || *rounds != 5 {
		t.Fatalf("parsed %+v, rounds %d", o, *rounds)
	}
	set := SetOnCommandLine(fs)
	if !set["json"] || !set["md"] || !set["rounds"] || set["plot"] || set["quick"] || len(set) != 3 {
		t.Fatalf("set = %v, want json, md and rounds", set)
	}
}

// TestDecadesLabelsPowersOfTen: one tick per power of ten covering the
// range, labelled without float noise.
func TestDecadesLabelsPowersOfTen(t *testing.T) {
	var labels []string
	for _, tk := range (Decades{}).Ticks(0.002, 0.5) {
		labels = append(labels, tk.Label)
	}
	if want := []string{"0.001", "0.01", "0.1", "1"}; !slices.Equal(labels, want) {
		t.Fatalf("labels %v, want %v", labels, want)
	}
}

// TestOutputsCheck: output paths that would fail or clobber each other at
// the end of a run are refused before it; good ones pass.
func TestOutputsCheck(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	good := Outputs{JSON: filepath.Join(dir, "r.json"), MD: file, Plot: filepath.Join(dir, "charts")}
	if err := good.Check(filepath.Join(dir, "cpu.prof")); err != nil {
		t.Fatalf("good outputs: %v", err)
	}
	for _, tc := range []struct {
		o     Outputs
		extra []string
	}{
		{Outputs{JSON: dir}, nil},
		{Outputs{MD: filepath.Join(dir, "no", "such", "part.md")}, nil},
		{Outputs{JSON: file, MD: file}, nil},
		{Outputs{JSON: file, MD: dir + "/./f"}, nil},
		{Outputs{JSON: filepath.Join(dir, "r.json")}, []string{filepath.Join(dir, "r.json")}},
		{Outputs{Plot: file}, nil},
	} {
		if err := tc.o.Check(tc.extra...); err == nil {
			t.Errorf("%+v %v: no error", tc.o, tc.extra)
		}
	}
}
