package tests

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"strings"
	"testing"

	"github.com/sievekv/sievekv/internal/testutil"
	"github.com/sievekv/sievekv/kv"
	"github.com/sievekv/sievekv/vfs"
)

// The corruption test damages each file of a closed DB (WAL, MANIFEST,
// CURRENT, every table) in many ways: a flipped byte at offsets spread
// over the file, and truncation at many lengths. For every variant:
//   - Open either fails with ErrCorruption naming the damaged file, or
//     succeeds;
//   - after a successful Open every read (Get of every key, a full scan)
//     returns exactly the model's value or fails with ErrCorruption naming
//     the file; never a wrong value, never a panic;
//   - a successful Open that lost writes is allowed only for damage in
//     the WAL's tail, and then recovers a prefix of the logged batches;
//   - kv.Check reports a problem whenever Open or a read did.

// corruptDB is the DB every variant starts from.
type corruptDB struct {
	fs *vfs.MemFS
	// states[k] is the expected content after the first k batches;
	// batches from walFrom on are only in the WAL.
	states  []map[string]string
	walFrom int
	files   []string
}

func corruptKey(i int) string { return fmt.Sprintf("key%04d", i) }

func buildCorruptDB(t *testing.T) *corruptDB {
	t.Helper()
	fs := vfs.NewMem()
	d, err := kv.Open("db", &kv.Options{FS: fs, MemTableSize: 8 << 10, BlockSize: 512})
	if err != nil {
		t.Fatal(err)
	}
	c := &corruptDB{fs: fs, states: []map[string]string{{}}}
	batch := func(i int, sync bool) {
		st := maps.Clone(c.states[len(c.states)-1])
		b := d.NewBatch()
		// Each batch writes three keys, overwriting older ones, so a lost
		// or resurrected batch changes values, not only key counts.
		for j := 0; j < 3; j++ {
			k := corruptKey((i*7 + j*13) % 150)
			if (i+j)%9 == 0 {
				b.Delete([]byte(k))
				delete(st, k)
				continue
			}
			v := fmt.Sprintf("b%d-%d-%s", i, j, strings.Repeat("z", (i*31+j)%120))
			b.Set([]byte(k), []byte(v))
			st[k] = v
		}
		opts := kv.NoSync
		if sync {
			opts = kv.Sync
		}
		if err := d.Apply(b, opts); err != nil {
			t.Fatal(err)
		}
		c.states = append(c.states, st)
	}
	i := 0
	for ; i < 120; i++ {
		batch(i, i%5 == 0)
	}
	if err := d.Compact(nil, nil); err != nil {
		t.Fatal(err)
	}
	for ; i < 200; i++ {
		batch(i, i%5 == 0)
	}
	if err := d.Flush(); err != nil {
		t.Fatal(err)
	}
	c.walFrom = len(c.states) - 1
	for ; i < 230; i++ {
		batch(i, true)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	names, err := fs.List("db")
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		if n != "LOCK" {
			c.files = append(c.files, n)
		}
	}
	return c
}

func memRead(fs vfs.FS, name string) ([]byte, error) {
	f, err := fs.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	b := make([]byte, st.Size())
	if _, err := f.ReadAt(b, 0); err != nil && err != io.EOF {
		return nil, err
	}
	return b, nil
}

func memWrite(fs vfs.FS, name string, b []byte) error {
	f, err := fs.Create(name)
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	return f.Close()
}

// corruptVariant names one damage.
type corruptVariant struct {
	file   string
	flipAt int // -1: truncate instead
	trunc  int
}

func (v corruptVariant) String() string {
	if v.flipAt >= 0 {
		return fmt.Sprintf("%s flip@%d", v.file, v.flipAt)
	}
	return fmt.Sprintf("%s truncate@%d", v.file, v.trunc)
}

func corruptVariants(t *testing.T, c *corruptDB, perFile int) []corruptVariant {
	var out []corruptVariant
	for _, f := range c.files {
		b, err := memRead(c.fs, "db/"+f)
		if err != nil {
			t.Fatal(err)
		}
		n := len(b)
		step := max(1, n/perFile)
		for off := 0; off < n; off += step {
			out = append(out, corruptVariant{file: f, flipAt: off})
		}
		if n > 0 {
			out = append(out, corruptVariant{file: f, flipAt: n - 1})
		}
		tstep := max(1, n/(perFile/4+1))
		for l := 0; l < n; l += tstep {
			out = append(out, corruptVariant{file: f, flipAt: -1, trunc: l})
		}
		out = append(out, corruptVariant{file: f, flipAt: -1, trunc: max(0, n-1)})
	}
	return out
}

func TestCorruptionEveryFile(t *testing.T) {
	runCorruption(t, 48)
}

// TestCorruptionSoak flips every byte of every file.
func TestCorruptionSoak(t *testing.T) {
	testutil.SkipUnlessSoak(t)
	runCorruption(t, 1<<30)
}

func runCorruption(t *testing.T, perFile int) {
	c := buildCorruptDB(t)
	all := strings.Join(c.files, " ")
	if !strings.Contains(all, ".log") || !strings.Contains(all, ".sst") {
		t.Fatalf("the base DB lacks a WAL or a table: %v", all)
	}
	variants := corruptVariants(t, c, perFile)
	var openFailed, readFailed, prefixRecovered, unaffected int
	for _, v := range variants {
		fs := c.fs.CrashClone() // the closed DB is fully synced: a copy
		b, err := memRead(fs, "db/"+v.file)
		if err != nil {
			t.Fatal(err)
		}
		if v.flipAt >= 0 {
			b[v.flipAt] ^= 0x5a
		} else {
			b = b[:v.trunc]
		}
		if err := memWrite(fs, "db/"+v.file, b); err != nil {
			t.Fatal(err)
		}
		rep, err := kv.Check("db", &kv.Options{FS: fs})
		checkFound := err == nil && !rep.OK()
		if err != nil && !strings.HasSuffix(v.file, "CURRENT") {
			t.Fatalf("%v: Check could not run: %v", v, err)
		}
		outcome := judgeCorruptOpen(t, c, fs, v)
		switch outcome {
		case "open-failed":
			openFailed++
		case "read-failed":
			readFailed++
		case "prefix":
			prefixRecovered++
		default:
			unaffected++
		}
		if (outcome == "open-failed" || outcome == "read-failed") && !checkFound {
			t.Fatalf("%v: the engine reported corruption but Check found nothing:\n%v", v, rep)
		}
	}
	t.Logf("%d corrupt variants over %d files: %d refused by Open, %d reported by a read, %d recovered a WAL prefix, %d unaffected",
		len(variants), len(c.files), openFailed, readFailed, prefixRecovered, unaffected)
}

// judgeCorruptOpen opens the damaged DB and classifies what happened,
// failing t on any broken promise.
func judgeCorruptOpen(t *testing.T, c *corruptDB, fs vfs.FS, v corruptVariant) string {
	t.Helper()
	names := func(err error) bool { return strings.Contains(err.Error(), v.file) }
	d, err := kv.Open("db", &kv.Options{FS: fs})
	if err != nil {
		if !errors.Is(err, kv.ErrCorruption) || !names(err) {
			t.Fatalf("%v: Open = %v; want ErrCorruption naming %s", v, err, v.file)
		}
		return "open-failed"
	}
	defer d.Close()
	full := c.states[len(c.states)-1]
	got := map[string]string{}
	readErr := false
	for i := 0; i < 150; i++ {
		k := corruptKey(i)
		val, err := d.Get([]byte(k))
		switch {
		case err == nil:
			got[k] = string(val)
		case errors.Is(err, kv.ErrNotFound):
		case errors.Is(err, kv.ErrCorruption) && names(err):
			readErr = true
			got[k] = "<error>"
		default:
			t.Fatalf("%v: Get(%s) = %v; want a value, ErrNotFound or ErrCorruption naming %s", v, k, err, v.file)
		}
	}
	it := d.NewIter(nil)
	scanned := map[string]string{}
	for ok := it.First(); ok; ok = it.Next() {
		scanned[string(it.Key())] = string(it.Value())
	}
	if err := it.Close(); err != nil {
		if !errors.Is(err, kv.ErrCorruption) || !names(err) {
			t.Fatalf("%v: scan: %v; want ErrCorruption naming %s", v, err, v.file)
		}
		readErr = true
	}
	if readErr {
		// Every answer that was not an error must be the right one.
		for k, val := range got {
			if val != "<error>" && val != full[k] {
				t.Fatalf("%v: Get(%s) = %.30q beside a reported corruption; model %.30q", v, k, val, full[k])
			}
		}
		for k, val := range scanned {
			if val != full[k] {
				t.Fatalf("%v: scan %s = %.30q beside a reported corruption; model %.30q", v, k, val, full[k])
			}
		}
		return "read-failed"
	}
	if !maps.Equal(got, scanned) {
		t.Fatalf("%v: Gets and the scan disagree", v)
	}
	if maps.Equal(got, full) {
		return "unaffected"
	}
	// Only a damaged WAL tail may cost writes, and only as a suffix of the
	// logged batches.
	if strings.HasSuffix(v.file, ".log") {
		for k := c.walFrom; k < len(c.states); k++ {
			if maps.Equal(got, c.states[k]) {
				return "prefix"
			}
		}
	}
	t.Fatalf("%v: Open succeeded but the DB holds wrong data:\n%s", v, diffStates(full, got))
	return ""
}
