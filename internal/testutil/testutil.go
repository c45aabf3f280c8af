// Package testutil holds the small checks several packages' tests share,
// and the kill harness (Child) of their crash tests. Only tests import it;
// golden/ beside it is the golden-file mechanism.
package testutil

import (
	"encoding/json"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// SkipUnlessSoak skips t unless SIEVEKV_SOAK is set: long soak runs stay
// out of `make test` and run under `make soak`.
func SkipUnlessSoak(t testing.TB) {
	t.Helper()
	if !Soak() {
		t.Skip("set SIEVEKV_SOAK=1 (make soak)")
	}
}

// Soak reports whether SIEVEKV_SOAK is set (make soak): a test with a
// short form in `make test` runs its long form.
func Soak() bool { return os.Getenv("SIEVEKV_SOAK") != "" }

// CheckCharts fails t unless each named file in dir is a PNG image of at
// least 200x200 pixels (a chart a tool wrote, not an empty placeholder).
func CheckCharts(t testing.TB, dir string, names ...string) {
	t.Helper()
	for _, name := range names {
		f, err := os.Open(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(f)
		f.Close()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if b := img.Bounds(); b.Dx() < 200 || b.Dy() < 200 {
			t.Errorf("%s: %v is too small to be a chart", name, b)
		}
	}
}

// CheckFileContains fails t unless the file at path contains every want.
func CheckFileContains(t testing.TB, path string, wants ...string) {
	t.Helper()
	text, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range wants {
		if !strings.Contains(string(text), want) {
			t.Errorf("%s lacks %q", path, want)
		}
	}
}

// ReadJSON decodes the JSON file at path into a T, failing the test if it
// cannot be read or decoded: the benchmark tools' tests read back what a
// run wrote with it.
func ReadJSON[T any](t testing.TB, path string) T {
	t.Helper()
	var v T
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return v
}
