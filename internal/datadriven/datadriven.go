package datadriven

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sievekv/sievekv/internal/testutil/golden"
)

// updating reports whether the run rewrites expected outputs instead of
// comparing them: the repository's one -update flag, which the golden
// package owns.
func updating() bool { return golden.Updating() }

// Arg is one argument of a command line: a bare word (no Vals), key=value or
// key=(v1, v2, ...).
type Arg struct {
	Key  string
	Vals []string
}

// TestData is one case of a file.
type TestData struct {
	Pos      string // file:line of the command, for messages (D2)
	Cmd      string
	Args     []Arg
	Input    string // the input lines, joined by "\n", without a final newline
	Expected string // the expected output, each line ending in "\n"

	// text before the command line (comments, blank lines), kept by -update
	preamble []string
	cmdLine  string
}

// HasArg reports whether the command line has an argument named key.
func (d *TestData) HasArg(key string) bool {
	_, ok := d.arg(key)
	return ok
}

func (d *TestData) arg(key string) (Arg, bool) {
	for _, a := range d.Args {
		if a.Key == key {
			return a, true
		}
	}
	return Arg{}, false
}

// ScanArg returns the single value of argument key, or def if it is absent.
func (d *TestData) ScanArg(t testing.TB, key, def string) string {
	t.Helper()
	a, ok := d.arg(key)
	if !ok {
		return def
	}
	if len(a.Vals) != 1 {
		t.Fatalf("%s: argument %s has %d values, want 1", d.Pos, key, len(a.Vals))
	}
	return a.Vals[0]
}

// Fatalf fails the test at the case's position.
func (d *TestData) Fatalf(t testing.TB, format string, args ...any) {
	t.Helper()
	t.Fatalf("%s: %s", d.Pos, fmt.Sprintf(format, args...))
}

// RunTest runs every case of the file at path through run, comparing each
// output with the expected one, or rewriting the file with -update (D1).
func RunTest(t *testing.T, path string, run func(t *testing.T, d *TestData) string) {
	t.Helper()
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("datadriven: %v", err)
	}
	cases, trailer, err := parse(filepath.Base(path), string(src))
	if err != nil {
		t.Fatalf("datadriven: %v", err)
	}
	var out strings.Builder
	for _, d := range cases {
		got := run(t, d)
		if got != "" && !strings.HasSuffix(got, "\n") {
			got += "\n"
		}
		if strings.Contains(got, "\n\n") || strings.HasPrefix(got, "\n") {
			t.Fatalf("%s: output contains a blank line, which the file syntax cannot hold:\n%s", d.Pos, got)
		}
		if updating() {
			for _, l := range d.preamble {
				out.WriteString(l + "\n")
			}
			out.WriteString(d.cmdLine + "\n")
			if d.Input != "" {
				out.WriteString(d.Input + "\n")
			}
			out.WriteString("----\n" + got)
			continue
		}
		if got != d.Expected {
			t.Errorf("%s: %s\noutput:\n%s\nwant:\n%s", d.Pos, d.cmdLine, got, d.Expected)
		}
	}
	if updating() {
		for _, l := range trailer {
			out.WriteString(l + "\n")
		}
		if err := os.WriteFile(path, []byte(out.String()), 0o644); err != nil {
			t.Fatalf("datadriven: %v", err)
		}
	}
}

// Walk runs RunTest on every file in dir, each as a subtest named after it.
func Walk(t *testing.T, dir string, run func(t *testing.T, d *TestData) string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatalf("datadriven: %v", err)
	}
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		path := filepath.Join(dir, e.Name())
		t.Run(e.Name(), func(t *testing.T) { RunTest(t, path, run) })
	}
}
