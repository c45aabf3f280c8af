package kv

import (
	"errors"
	"strings"
	"testing"

	"github.com/sievekv/sievekv/vfs"
)

// TestDisableWALSessionRetiresOldLogs caught a DB closed with writes in
// its WAL, reopened once with DisableWAL, changed and closed: the open
// replayed the log into tables but wrote a manifest with no log number,
// so the log stayed needed, and the next open with the WAL on replayed it
// again, over the writes made since: a deleted key came back and an
// overwritten one read its old value. The replayed logs are now retired
// (and removed) like those of an open with a WAL.
func TestDisableWALSessionRetiresOldLogs(t *testing.T) {
	fs := vfs.NewMem()
	open := func(o Options) *DB {
		t.Helper()
		o.FS = fs
		d, err := Open("db", &o)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	d := open(Options{})
	for _, k := range []string{"gone", "over", "kept"} {
		if err := d.Set([]byte(k), []byte("v1"), Sync); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.Close(); err != nil { // the writes stay in the WAL
		t.Fatal(err)
	}
	d = open(Options{DisableWAL: true})
	if err := d.Delete([]byte("gone"), Sync); err != nil {
		t.Fatal(err)
	}
	if err := d.Set([]byte("over"), []byte("v2"), Sync); err != nil {
		t.Fatal(err)
	}
	if err := d.Compact(nil, nil); err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	names, err := fs.List("db")
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		if strings.HasSuffix(n, ".log") {
			t.Errorf("WAL %s is still in the directory after the DisableWAL session replayed it into tables", n)
		}
	}
	check := func(d *DB, how string) {
		t.Helper()
		if v, err := d.Get([]byte("gone")); !errors.Is(err, ErrNotFound) {
			t.Errorf("%s: deleted key came back: %q, %v", how, v, err)
		}
		if v, err := d.Get([]byte("over")); err != nil || string(v) != "v2" {
			t.Errorf("%s: overwritten key read %q, %v; want v2", how, v, err)
		}
		if v, err := d.Get([]byte("kept")); err != nil || string(v) != "v1" {
			t.Errorf("%s: kept key read %q, %v; want v1", how, v, err)
		}
	}
	r := open(Options{ReadOnly: true})
	check(r, "read-only open")
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	d = open(Options{})
	check(d, "open with the WAL")
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
}
