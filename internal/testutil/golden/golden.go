// Package golden is the repository's one golden-file mechanism: a test
// renders what it pins as text and compares it with
// testdata/golden/<name>.hex in its package directory; run with -update
// after a deliberate format change to rewrite the files, and review the
// diff. The files pin on-disk formats so they cannot drift by accident
// (STYLE.md, "Pin the bytes").
//
// Only tests import this package. It owns the -update flag (registered
// unless the test binary already has one); internal/datadriven and the
// transcript tests ask Updating, so every rewrite of recorded expectations
// in a binary answers to one flag; a test must not define its own.
package golden

import (
	"encoding/hex"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

func init() {
	if flag.Lookup("update") == nil {
		flag.Bool("update", false, "rewrite testdata/golden files (and other recorded expectations) from the current code")
	}
}

// Updating reports whether the test binary runs with -update, for tests
// that record expectations in files of their own shape (transcripts). The
// flag is looked up on each call, so it is the one flag whichever package
// registered it.
func Updating() bool {
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}

// Path is the golden file for name, relative to the package under test.
func Path(name string) string { return filepath.Join("testdata", "golden", name+".hex") }

// Check compares text with the golden file for name, or rewrites the file
// under -update.
func Check(t testing.TB, name, text string) {
	t.Helper()
	path := Path(name)
	if Updating() {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("golden: %v (run with -update to create it)", err)
	}
	if string(want) != text {
		t.Fatalf("golden: %s drifted:\n got  %s\n want %s", path, text, want)
	}
}

// Bytes checks b, written as one line of lower-case hex, against the golden
// file for name.
func Bytes(t testing.TB, name string, b []byte) {
	t.Helper()
	Check(t, name, hex.EncodeToString(b)+"\n")
}
