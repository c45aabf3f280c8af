package datadriven

import (
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

const sample = `# a comment
echo a k=v list=(x, y)
line one
line two
----
a k=[v] list=[x y]
line one|line two

# no input, empty output
noop
----

echo b
----
b
`

func echo(t *testing.T, d *TestData) string {
	if d.Cmd == "noop" {
		return ""
	}
	var parts []string
	for _, a := range d.Args {
		if a.Vals == nil {
			parts = append(parts, a.Key)
			continue
		}
		parts = append(parts, a.Key+"=["+strings.Join(a.Vals, " ")+"]")
	}
	out := strings.Join(parts, " ") + "\n"
	if d.Input != "" {
		out += strings.ReplaceAll(d.Input, "\n", "|") + "\n"
	}
	return out
}

func TestParseCommandArgs(t *testing.T) {
	cmd, args, err := parseCommand("define L0 size=(1, 2) k=v")
	if err != nil {
		t.Fatal(err)
	}
	want := []Arg{{Key: "L0"}, {Key: "size", Vals: []string{"1", "2"}}, {Key: "k", Vals: []string{"v"}}}
	if cmd != "define" || !reflect.DeepEqual(args, want) {
		t.Fatalf("parseCommand: %q %+v", cmd, args)
	}
	for _, bad := range []string{"c k=(1", "c k=1)", "c (a"} {
		if _, _, err := parseCommand(bad); err == nil {
			t.Errorf("parseCommand(%q) accepted unbalanced parentheses", bad)
		}
	}
}

func TestRunTestPassesAndPinsPositions(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sample")
	if err := os.WriteFile(path, []byte(sample), 0o644); err != nil {
		t.Fatal(err)
	}
	RunTest(t, path, echo)
	cases, _, err := parse("sample", sample)
	if err != nil {
		t.Fatal(err)
	}
	if len(cases) != 3 || cases[0].Pos != "sample:2" || cases[2].Pos != "sample:13" {
		t.Fatalf("positions: %d cases, %v %v", len(cases), cases[0].Pos, cases[len(cases)-1].Pos)
	}
}

// TestUpdateRoundTrips keeps D1: a stale file rewritten with -update is
// the file the current outputs describe, comments and inputs kept.
func TestUpdateRoundTrips(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sample")
	stale := strings.Replace(sample, "----\nb\n", "----\nstale\n", 1)
	if err := os.WriteFile(path, []byte(stale), 0o644); err != nil {
		t.Fatal(err)
	}
	f := flagUpdate(t)
	f(true)
	RunTest(t, path, echo)
	f(false)
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != sample {
		t.Fatalf("rewritten file:\n%s\nwant:\n%s", got, sample)
	}
}

func TestParseRejectsMissingSeparator(t *testing.T) {
	if _, _, err := parse("f", "cmd\ninput\n"); err == nil || !strings.Contains(err.Error(), "f:1") {
		t.Fatalf("parse without ----: %v", err)
	}
}

func flagUpdate(t *testing.T) func(bool) {
	set := func(v bool) {
		val := "false"
		if v {
			val = "true"
		}
		if err := flagSet("update", val); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { set(false) })
	return set
}

func flagSet(name, val string) error { return flag.Set(name, val) }
