package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/sievekv/sievekv/kv"
)

// The tests in this file run the built kvshell binary, as a user would:
// separate processes for reopen and lock checks, real exit statuses.

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
	buildDir  string
)

func TestMain(m *testing.M) {
	code := m.Run()
	if buildDir != "" {
		os.RemoveAll(buildDir)
	}
	os.Exit(code)
}

// kvshellBinary builds the command once per test run.
func kvshellBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		buildDir, buildErr = os.MkdirTemp("", "kvshell-bin-")
		if buildErr != nil {
			return
		}
		binPath = filepath.Join(buildDir, "kvshell")
		out, err := exec.Command("go", "build", "-o", binPath, ".").CombinedOutput()
		if err != nil {
			buildErr = errors.New("go build: " + err.Error() + "\n" + string(out))
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

type result struct {
	stdout, stderr string
	code           int
}

// runShell runs kvshell with args and stdin (not a terminal), with history
// pointed into the test's directory so a user's own is never touched.
func runShell(t *testing.T, stdin string, args ...string) result {
	t.Helper()
	cmd := exec.Command(kvshellBinary(t), args...)
	cmd.Stdin = strings.NewReader(stdin)
	cmd.Env = append(os.Environ(), historyEnv+"="+filepath.Join(t.TempDir(), "history"))
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	r := result{stdout: out.String(), stderr: errb.String()}
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		r.code = ee.ExitCode()
	case err != nil:
		t.Fatalf("run kvshell: %v", err)
	}
	return r
}

func TestReopenAcrossProcesses(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "db")
	if r := runShell(t, "", "-dir", dir, "-c", `put a 1; put "b c" "\x00"`); r.code != 0 || r.stdout != "OK\nOK\n" {
		t.Fatalf("first process: %+v", r)
	}
	r := runShell(t, "", "-dir", dir, "-c", `get a; get "b c"; count`)
	if r.code != 0 || r.stdout != "1\n\"\\x00\"\n2\n" || r.stderr != "" {
		t.Fatalf("second process: %+v", r)
	}
}

func TestScriptFromStdin(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "db")
	script := "# set up\nput a 1\n\nput b 2 # trailing comment\r\nscan\nget a; get b\n"
	r := runShell(t, script, "-dir", dir)
	want := "OK\nOK\na 1\nb 2\n(2 keys)\n1\n2\n"
	if r.code != 0 || r.stdout != want || r.stderr != "" {
		t.Fatalf("got %+v, want stdout %q", r, want)
	}
	// The last line need not end in a newline.
	if r := runShell(t, "get a", "-dir", dir); r.code != 0 || r.stdout != "1\n" {
		t.Fatalf("unterminated last line: %+v", r)
	}
}

func TestScriptStopsAtFirstFailure(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "db")
	r := runShell(t, "put a 1\nget a b\nput never 1\n", "-dir", dir)
	if r.code != exitFailed || r.stdout != "OK\n" {
		t.Fatalf("got %+v", r)
	}
	if want := "kvshell: stdin line 2: get: wrong number of arguments (usage: get KEY)\n"; r.stderr != want {
		t.Fatalf("stderr %q, want %q", r.stderr, want)
	}
	if r := runShell(t, "", "-dir", dir, "-c", "get never; put x 1; nosuch; put y 2"); r.code != exitFailed ||
		r.stdout != "(not found)\nOK\n" || !strings.Contains(r.stderr, `unknown command nosuch`) {
		t.Fatalf("-c: %+v", r)
	}
	if r := runShell(t, "", "-dir", dir, "-c", "get y"); r.stdout != "(not found)\n" {
		t.Fatalf("a command after the failure ran: %+v", r)
	}
	// quit ends a script successfully, skipping the rest.
	if r := runShell(t, "get x\nquit\nnosuch\n", "-dir", dir); r.code != 0 || r.stdout != "1\n" {
		t.Fatalf("quit: %+v", r)
	}
}

func TestJSONFlag(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "db")
	r := runShell(t, "", "-dir", dir, "-json", "-c", "put a 1; get a; load 5 3; count; stats")
	if r.code != 0 {
		t.Fatalf("%+v", r)
	}
	lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
	var cmds []string
	for _, l := range lines {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("line %q is not JSON: %v", l, err)
		}
		cmds = append(cmds, m["cmd"].(string))
		if m["cmd"] == "count" && m["count"] != 6.0 {
			t.Errorf("count: %v", m)
		}
	}
	if got := strings.Join(cmds, ","); got != "put,get,load,count,stats" {
		t.Fatalf("records %s", got)
	}
}

func TestLockedAtStartup(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "db")
	db, err := kv.Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	r := runShell(t, "", "-dir", dir, "-c", "get a")
	if r.code != exitFailed || r.stdout != "" || strings.Count(r.stderr, "\n") != 1 ||
		!strings.Contains(r.stderr, "is in use by another process") {
		t.Fatalf("got %+v", r)
	}
}

func TestStartupErrors(t *testing.T) {
	tmp := t.TempDir()
	r := runShell(t, "", "-dir", filepath.Join(tmp, "missing"), "-readonly", "-c", "get a")
	if r.code != exitFailed || !strings.Contains(r.stderr, "no database there to open read-only") {
		t.Fatalf("readonly on a missing dir: %+v", r)
	}
	if _, err := os.Stat(filepath.Join(tmp, "missing")); !os.IsNotExist(err) {
		t.Fatalf("-readonly created the directory: %v", err)
	}
	// -existing on a directory of other files creates nothing there.
	home := filepath.Join(tmp, "home")
	if err := os.MkdirAll(home, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, "notes.txt"), []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	r = runShell(t, "", "-dir", home, "-existing", "-c", "put a 1")
	if r.code != exitFailed || !strings.Contains(r.stderr, "no database there, and -existing forbids creating one") {
		t.Fatalf("-existing on a directory without a DB: %+v", r)
	}
	if es, err := os.ReadDir(home); err != nil || len(es) != 1 {
		t.Fatalf("-existing wrote into the directory: %v, %v", es, err)
	}
	if r := runShell(t, "", "-dir", filepath.Join(tmp, "db2"), "-c", "put a 1"); r.code != 0 {
		t.Fatal(r)
	}
	if r := runShell(t, "", "-dir", filepath.Join(tmp, "db2"), "-existing", "-c", "get a"); r.code != 0 || !strings.Contains(r.stdout, "1") {
		t.Fatalf("-existing on a DB: %+v", r)
	}
	r = runShell(t, "", "-dir", filepath.Join(tmp, "db"), "-filter", "cuckoo")
	if r.code != exitUsage || !strings.Contains(r.stderr, "want one of auto, binary-fuse-8") {
		t.Fatalf("bad -filter: %+v", r)
	}
	r = runShell(t, "", "-dir", filepath.Join(tmp, "db"), "stray")
	if r.code != exitUsage || !strings.Contains(r.stderr, `unexpected argument "stray"`) {
		t.Fatalf("stray argument: %+v", r)
	}
	// A damaged MANIFEST is reported at startup as damage, on one line.
	db := filepath.Join(tmp, "bad")
	if r := runShell(t, "", "-dir", db, "-c", "put a 1"); r.code != 0 {
		t.Fatal(r)
	}
	names, _ := filepath.Glob(filepath.Join(db, "MANIFEST-*"))
	if len(names) != 1 {
		t.Fatalf("manifests: %v", names)
	}
	data, err := os.ReadFile(names[0])
	if err != nil || len(data) < 20 {
		t.Fatalf("read manifest: %v (%d bytes)", err, len(data))
	}
	data[10] ^= 0xff
	if err := os.WriteFile(names[0], data, 0o644); err != nil {
		t.Fatal(err)
	}
	r = runShell(t, "", "-dir", db, "-c", "get a")
	if r.code != exitFailed || strings.Count(r.stderr, "\n") != 1 || !strings.Contains(r.stderr, "the database is damaged") {
		t.Fatalf("damaged manifest: %+v", r)
	}
}

func TestHelpFlag(t *testing.T) {
	r := runShell(t, "", "-h")
	if r.code != 0 {
		t.Fatalf("%+v", r)
	}
	for _, f := range []string{"-dir", "-c ", "-json", "-filter", "-readonly", "./sievekv-data", "binary-fuse-8", "Exit status"} {
		if !strings.Contains(r.stderr, f) {
			t.Errorf("-h output lacks %q:\n%s", f, r.stderr)
		}
	}
}

// TestEmptyScriptFlag caught an empty -c taken as no -c at all: a script passing
// an empty variable (kvshell -c "$CMDS") then ran whatever stdin held, or
// waited at a prompt. An empty -c runs nothing and exits 0.
func TestEmptyScriptFlag(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "db")
	if r := runShell(t, "put x 1\n", "-dir", dir, "-c", ""); r.code != 0 || r.stdout != "" || r.stderr != "" {
		t.Fatalf("-c '' with a script on stdin: %+v; want nothing run", r)
	}
	if r := runShell(t, "", "-dir", dir, "-c", "get x"); r.stdout != "(not found)\n" {
		t.Fatalf("stdin's put ran under -c '': %+v", r)
	}
}

// TestBadRangeFilterBitsIsAFlagError caught an out-of-range
// -range-filter-bits reported as a failure to open the database (exit 1,
// "invalid options"), not as the bad flag it is (exit 2, naming it).
func TestBadRangeFilterBitsIsAFlagError(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "db")
	for _, bad := range []string{"2", "49", "-1", "NaN", "+Inf"} {
		r := runShell(t, "", "-dir", dir, "-range-filter-bits", bad, "-c", "count")
		if r.code != exitUsage || !strings.Contains(r.stderr, "-range-filter-bits") {
			t.Errorf("-range-filter-bits %s: %+v; want exit %d naming the flag", bad, r, exitUsage)
		}
	}
	if r := runShell(t, "", "-dir", dir, "-range-filter-bits", "16", "-c", "put a 1; count"); r.code != 0 || r.stdout != "OK\n1\n" {
		t.Fatalf("-range-filter-bits 16: %+v", r)
	}
}
