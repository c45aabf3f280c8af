package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"runtime"
	"strings"
	"testing"

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
