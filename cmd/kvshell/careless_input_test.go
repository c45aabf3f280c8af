package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/sievekv/sievekv/kv"
	"github.com/sievekv/sievekv/vfs"
)

// openMemInterp is an Interp over a fresh in-memory DB, and a function
// running one line and returning what it printed.
func openMemInterp(t *testing.T) (*Interp, func(string) (string, error)) {
	t.Helper()
	opts := &kv.Options{FS: vfs.NewMem()}
	db, err := kv.Open("db", opts)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	in := NewInterp(db, &out, &out)
	in.check = &checkTarget{dir: "db", opts: *opts}
	t.Cleanup(func() {
		if in.db != nil {
			in.db.Close()
		}
	})
	return in, func(line string) (string, error) {
		out.Reset()
		err := in.Exec(context.Background(), line)
		return out.String(), err
	}
}

// TestExplainScanJSONKeepsBytes caught -json explain scan printing its
// bounds as JSON strings, so a non-UTF-8 bound came out as U+FFFD: every
// other key field is {"hex": ...} then, so no byte is lost.
func TestExplainScanJSONKeepsBytes(t *testing.T) {
	in, exec := openMemInterp(t)
	in.json = true
	got, err := exec(`explain scan "\xff" "\xff\x02"`)
	if err != nil {
		t.Fatal(err)
	}
	var rec map[string]json.RawMessage
	if err := json.Unmarshal([]byte(got), &rec); err != nil {
		t.Fatalf("%v: %s", err, got)
	}
	if string(rec["start"]) != `{"hex":"ff"}` || string(rec["end"]) != `{"hex":"ff02"}` {
		t.Fatalf("start %s, end %s; want {\"hex\":\"ff\"} and {\"hex\":\"ff02\"}:\n%s", rec["start"], rec["end"], got)
	}
}

// TestUnknownLongWordIsCheap caught a value pasted without its put (one
// unknown "command" word of megabytes) costing seconds and gigabytes: the
// typo suggestion built an edit-distance table as long as the word for
// every command name, and the error echoed the whole word. No name can be
// within 2 edits of a word that much longer, and the echo is cut.
func TestUnknownLongWordIsCheap(t *testing.T) {
	_, exec := openMemInterp(t)
	word := strings.Repeat("x", 1<<20)
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	_, err := exec(word)
	runtime.ReadMemStats(&m1)
	if err == nil || !strings.Contains(err.Error(), "unknown command") {
		t.Fatalf("a 1 MiB unknown word: %v", err)
	}
	if n := len(err.Error()); n > 200 {
		t.Errorf("the error repeats %d bytes of the word", n)
	}
	if mb := (m1.TotalAlloc - m0.TotalAlloc) >> 20; mb > 16 {
		t.Fatalf("an unknown 1 MiB word allocated %d MiB", mb)
	}
	// Typos still get their suggestion.
	if _, err := exec("gte a"); err == nil || !strings.Contains(err.Error(), `did you mean "get"`) {
		t.Fatalf("gte: %v", err)
	}
}

type failingWriter struct{ writes int }

func (w *failingWriter) Write([]byte) (int, error) {
	w.writes++
	return 0, errors.New("no space left on device")
}

// TestTextOutputWriteFailureFails caught text results written to a full
// disk or a closed pipe with the write's error dropped: the command, and
// the shell's exit status, said it succeeded (-json reported it). A scan
// also stops at the first failed write rather than read every key for
// nobody.
func TestTextOutputWriteFailureFails(t *testing.T) {
	in, exec := openMemInterp(t)
	if _, err := exec("put a 1; put b 2; put c 3"); err != nil {
		t.Fatal(err)
	}
	w := &failingWriter{}
	in.out = w
	for _, line := range []string{"get a", "scan", "count", "stats"} {
		if err := in.Exec(context.Background(), line); err == nil || !strings.Contains(err.Error(), "no space left") {
			t.Errorf("%s with a failing output: %v; want the write's error", line, err)
		}
	}
	w.writes = 0
	in.Exec(context.Background(), "scan")
	if w.writes != 1 {
		t.Errorf("scan tried %d writes after the first failed; want it to stop", w.writes-1)
	}
	// The next command with a working output succeeds.
	var out bytes.Buffer
	in.out = &out
	if err := in.Exec(context.Background(), "get a"); err != nil || out.String() != "1\n" {
		t.Fatalf("get a afterwards: %q, %v", out.String(), err)
	}
}

// TestExplainGetRangeDeletedKey caught explain get of a key a delrange
// deleted answering a plain "not found" and tracing the memtable that
// holds the range tombstone as one that "does not have the key": a reader
// could not tell which source deleted it, nor that anything did.
func TestExplainGetRangeDeletedKey(t *testing.T) {
	in, exec := openMemInterp(t)
	for _, line := range []string{"put a 1; put b 2; put c 3; flush", "delrange a c"} {
		if _, err := exec(line); err != nil {
			t.Fatal(err)
		}
	}
	for _, step := range []string{"", "flush"} {
		if step != "" {
			if _, err := exec(step); err != nil {
				t.Fatal(err)
			}
		}
		got, err := exec("explain get b")
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(got, "get b: not found (deleted by a range tombstone)\n") || !strings.Contains(got, "a range tombstone here deletes the key") {
			t.Fatalf("explain get b after delrange a c %s:\n%s", step, got)
		}
		in.json = true
		got, err = exec("explain get b")
		in.json = false
		if err != nil || !strings.Contains(got, `"range_deleted":true`) {
			t.Fatalf("-json explain get b %s: %v\n%s", step, err, got)
		}
	}
}

// controlByte reports the first control byte (C0 or DEL) in s, if any.
func controlByte(s string) (byte, bool) {
	for _, c := range []byte(s) {
		if c < 0x20 || c == 0x7f {
			return c, true
		}
	}
	return 0, false
}

// TestErrorsCarryNoControlBytes: an error echoes what was typed (a bad
// escape's characters, a checkpoint's directory name), and used to echo it
// raw: a CR typed after "\x" overwrote the start of the error line, an ESC
// sequence cleared the screen (S2: one line). Every error, from the lexer,
// a command or the engine, now shows such bytes escaped, as the scripts'
// and the session's error lines do.
func TestErrorsCarryNoControlBytes(t *testing.T) {
	_, exec := openMemInterp(t)
	for _, line := range []string{
		"put \"\\x\rzz\" v",
		"put \"\\U\x1b[2J\x1b[H\" v",
		"put \"\\u\v\f\x00\" v",
		"put \"\\x\xc3\" v", // half a UTF-8 character after the escape
		`checkpoint "cp\x1b[31m\x07"`, `checkpoint "cp\x1b[31m\x07"`,
		`checkpoint "\x1b[2J/\x1b"`,
		`delrange "\x1b[2J" "\x1b"`,
	} {
		_, err := exec(line)
		if err == nil {
			continue
		}
		if c, ok := controlByte(err.Error()); ok {
			t.Errorf("%q: error %q carries control byte %#x", line, err, c)
		}
		if !utf8.ValidString(err.Error()) {
			t.Errorf("%q: error %q is not valid UTF-8", line, err)
		}
	}
	in, _ := openMemInterp(t)
	var stderr strings.Builder
	runScript(in, strings.NewReader("put \"\\x\rzz\" v\n"), "-c", &stderr)
	if line := strings.TrimSuffix(stderr.String(), "\n"); !strings.Contains(line, `\x0d`) {
		t.Errorf("script error %q does not show the CR it was given", line)
	} else if c, ok := controlByte(line); ok {
		t.Errorf("script error %q carries control byte %#x", line, c)
	}
}

// TestOneLineKeepsPrintableText: oneLine changes only what a terminal
// would act on.
func TestOneLineKeepsPrintableText(t *testing.T) {
	for in, want := range map[string]string{
		"plain, ünïcode ✓":    "plain, ünïcode ✓",
		"a\nb\r\nc":           "a; b; c",
		"bell\x07 esc\x1b[2J": `bell\x07 esc\x1b[2J`,
		"cut \xc3":            `cut \xc3`,
		"c1 \u0085":           `c1 \u0085`,
		"lone \r":             `lone \x0d`,
	} {
		if got := oneLine(in); got != want {
			t.Errorf("oneLine(%q) = %q, want %q", in, got, want)
		}
	}
}

// cancelAfterChecks is a context whose Err turns to Canceled after n calls:
// a Ctrl-C that lands in the middle of a load.
type cancelAfterChecks struct {
	context.Context
	n int
}

func (c *cancelAfterChecks) Err() error {
	if c.n--; c.n < 0 {
		return context.Canceled
	}
	return nil
}

// TestInterruptedLoadKeepsWhatItReports: load syncs only its last batch,
// and an interrupted load returned before any sync while saying the keys
// so far "are written": a power loss then took every one of them, where
// the shell's put and del are durable when they return. The interrupted
// load now syncs its last batch too.
func TestInterruptedLoadKeepsWhatItReports(t *testing.T) {
	fs := vfs.NewMem()
	db, err := kv.Open("db", &kv.Options{FS: fs})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	in := NewInterp(db, &out, &out)
	lerr := in.Exec(&cancelAfterChecks{Context: context.Background(), n: 5}, "load 10000")
	var written int
	if _, err := fmt.Sscanf(fmt.Sprint(lerr), "load: interrupted after %d of 10000 keys", &written); err != nil || written == 0 {
		t.Fatalf("load = %v, want an interruption after some keys", lerr)
	}
	crashed := fs.CrashClone() // a power loss: only what was synced
	db.Close()
	db, err = kv.Open("db", &kv.Options{FS: crashed})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for i := range written {
		if _, err := db.Get(loadKey(i)); err != nil {
			t.Fatalf("key %d of the %d reported written: %v after a power loss", i, written, err)
		}
	}
}
