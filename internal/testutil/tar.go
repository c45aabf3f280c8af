package testutil

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Fixtures of whole directories (a DB as a past build wrote it) are kept
// as gzipped tar archives: a preallocated WAL is megabytes of zeros.

// Untar extracts the gzipped tar archive at path into dir: plain files
// only, named without a directory.
func Untar(t testing.TB, path, dir string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Typeflag != tar.TypeReg || filepath.Base(h.Name) != h.Name {
			t.Fatalf("%s: unexpected entry %q", path, h.Name)
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, h.Name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TarDir writes dir's files into a gzipped tar archive at path.
func TarDir(t testing.TB, dir, path string) {
	t.Helper()
	var buf bytes.Buffer
	gz, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	tw := tar.NewWriter(gz)
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := tw.WriteHeader(&tar.Header{Name: e.Name(), Mode: 0o644, Size: int64(len(b)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(b); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// EachFixture runs fn as a subtest, named after the archive, for each
// testdata/<prefix>-*.tar.gz of the package under test, on a fresh copy
// extracted into dir (a directory of that name under the subtest's
// temporary directory). It fails if there is none: a fixture set that
// vanished must not pass as checked.
func EachFixture(t *testing.T, prefix string, fn func(t *testing.T, dir string)) {
	t.Helper()
	fixtures, err := filepath.Glob(filepath.Join("testdata", prefix+"-*.tar.gz"))
	if err != nil {
		t.Fatal(err)
	}
	if len(fixtures) == 0 {
		t.Fatalf("no testdata/%s-*.tar.gz fixtures", prefix)
	}
	for _, fixture := range fixtures {
		t.Run(strings.TrimSuffix(filepath.Base(fixture), ".tar.gz"), func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), prefix)
			Untar(t, fixture, dir)
			fn(t, dir)
		})
	}
}
