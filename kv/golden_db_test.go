package kv

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sievekv/sievekv/internal/testutil"
)

// A DB a user wrote with one release must open with every later one: the
// formats' golden files pin each layer's bytes (sstable, WAL, MANIFEST
// edits, filters), and the fixtures testdata/db-*.tar.gz pin them
// together, as a directory a past sievekv left behind (compressed: the
// WAL is preallocated, megabytes of zeros). Each was written once, by
// writeGoldenDB, and is never rewritten: a format change adds a new
// fixture beside the old ones, and an old one is removed only when that
// format stops being read, saying so in docs/format.md.
//
// To add one: SIEVEKV_WRITE_GOLDEN_DB=testdata/db-<date>.tar.gz go test ./kv -run TestGoldenDBs

// goldenDBExpect is the name of a fixture's model: one "key=value" line
// per live key, in key order, keys and values in Go's %q quoting.
const goldenDBExpect = "expected.txt"

// TestGoldenDBs opens a copy of every fixture with default options, checks
// it with Check, reads every key and a full scan both ways against its
// model, then writes, compacts everything and reopens, and reads again.
func TestGoldenDBs(t *testing.T) {
	if dir := os.Getenv("SIEVEKV_WRITE_GOLDEN_DB"); dir != "" {
		writeGoldenDB(t, dir)
	}
	testutil.EachFixture(t, "db", func(t *testing.T, dir string) {
		want := readGoldenModel(t, filepath.Join(dir, goldenDBExpect))
		report, err := Check(dir, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !report.OK() {
			t.Fatalf("Check of the fixture as found: %v", report)
		}
		db, err := Open(dir, nil)
		if err != nil {
			t.Fatal(err)
		}
		matchGoldenModel(t, db, want)
		// The old DB takes new writes, and its tables compact into
		// tables of the current format.
		for i := range 50 {
			k := fmt.Sprintf("new/%03d", i)
			if err := db.Set([]byte(k), []byte(k), NoSync); err != nil {
				t.Fatal(err)
			}
			want[k] = k
		}
		if err := db.Compact(nil, []byte{0xff}); err != nil {
			t.Fatal(err)
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		db, err = Open(dir, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		matchGoldenModel(t, db, want)
	})
}

// matchGoldenModel requires db's contents to be exactly want.
func matchGoldenModel(t *testing.T, db *DB, want map[string]string) {
	t.Helper()
	keys := make([]string, 0, len(want))
	for k := range want {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		v, err := db.Get([]byte(k))
		if err != nil || string(v) != want[k] {
			t.Fatalf("Get(%q) = %q, %v; want %q", k, v, err, want[k])
		}
	}
	it := db.NewIter(nil)
	var got []string
	for ok := it.First(); ok; ok = it.Next() {
		got = append(got, string(it.Key()))
		if string(it.Value()) != want[string(it.Key())] {
			t.Fatalf("scan: %q = %q, want %q", it.Key(), it.Value(), want[string(it.Key())])
		}
	}
	var back []string
	for ok := it.Last(); ok; ok = it.Prev() {
		back = append(back, string(it.Key()))
	}
	if err := it.Close(); err != nil {
		t.Fatal(err)
	}
	slices.Reverse(back)
	if !slices.Equal(got, keys) || !slices.Equal(back, keys) {
		t.Fatalf("scan found %d keys forward and %d backward, want %d", len(got), len(back), len(keys))
	}
	// Deleted keys stay deleted: every fixture key is "<group>/<n>", and
	// the model lacks the deleted ones.
	for _, k := range []string{"bloom/005", "auto/000", "ribbon/499"} {
		if _, ok := want[k]; ok {
			continue
		}
		if _, err := db.Get([]byte(k)); !errors.Is(err, ErrNotFound) {
			t.Fatalf("Get(%q) of a deleted key: %v", k, err)
		}
	}
}

func readGoldenModel(t *testing.T, path string) map[string]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	model := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var k, v string
		if _, err := fmt.Sscanf(sc.Text(), "%q=%q", &k, &v); err != nil {
			t.Fatalf("%s: %q: %v", path, sc.Text(), err)
		}
		model[k] = v
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(model) == 0 {
		t.Fatalf("%s: empty model", path)
	}
	return model
}

// writeGoldenDB writes a new fixture, archived at path: a table of each filter type
// (FilterAuto and every filter Options.Filter takes, FilterNone
// included), some with range filters, holding sets, point deletes and
// range deletions, some compacted to the bottom level and some left in
// L0, and a WAL holding writes no table has; then its model and a README.
func writeGoldenDB(t *testing.T, path string) {
	if _, err := os.Stat(path); err == nil {
		t.Fatalf("%s exists: fixtures are never rewritten; name a new one", path)
	}
	dir := filepath.Join(t.TempDir(), "golden")
	model := map[string]string{}
	open := func(o *Options) *DB {
		o.DisableAutomaticCompactions = true
		db, err := Open(dir, o)
		if err != nil {
			t.Fatal(err)
		}
		return db
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	for i, f := range FilterTypes() {
		o := &Options{Filter: f}
		if i%2 == 1 {
			o.RangeFilterBitsPerKey = 12
		}
		db := open(o)
		group := strings.ReplaceAll(FilterName(f), "/", "-")
		for j := range 500 {
			k := fmt.Sprintf("%s/%03d", group, j)
			v := fmt.Sprintf("%s-value-%d-%s", group, j, bytes.Repeat([]byte{'a' + byte(j%26)}, j%40))
			must(db.Set([]byte(k), []byte(v), NoSync))
			model[k] = v
		}
		for j := 5; j < 500; j += 7 {
			k := fmt.Sprintf("%s/%03d", group, j)
			must(db.Delete([]byte(k), NoSync))
			delete(model, k)
		}
		lo, hi := fmt.Sprintf("%s/%03d", group, 100), fmt.Sprintf("%s/%03d", group, 150)
		must(db.DeleteRange([]byte(lo), []byte(hi), NoSync))
		for k := range model {
			if k >= lo && k < hi {
				delete(model, k)
			}
		}
		must(db.Flush())
		if i%3 == 0 {
			must(db.Compact([]byte(group+"/"), []byte(group+"0")))
		}
		must(db.Close())
	}
	db := open(&Options{})
	for j := range 20 {
		k := fmt.Sprintf("wal/%03d", j)
		must(db.Set([]byte(k), []byte("only in the WAL"), Sync))
		model[k] = "only in the WAL"
	}
	must(db.Close())
	must(os.Remove(filepath.Join(dir, "LOCK")))

	var buf bytes.Buffer
	keys := make([]string, 0, len(model))
	for k := range model {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		fmt.Fprintf(&buf, "%q=%q\n", k, model[k])
	}
	must(os.WriteFile(filepath.Join(dir, goldenDBExpect), buf.Bytes(), 0o644))
	readme := fmt.Sprintf("A DB as sievekv wrote it: kv.writeGoldenDB (kv/golden_db_test.go), run once.\n"+
		"Filters: %s, one table each (odd ones with range filters), every third compacted to the bottom;\n"+
		"20 synced writes only in the WAL. expected.txt is its content. Never rewrite it.\n", strings.Join(FilterTypeNames(), ", "))
	must(os.WriteFile(filepath.Join(dir, "README"), []byte(readme), 0o644))
	testutil.TarDir(t, dir, path)
}
