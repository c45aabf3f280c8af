package kv

import (
	"bytes"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/sievekv/sievekv/internal/manifest"
	"github.com/sievekv/sievekv/vfs"
)

func openMem(t *testing.T, fs vfs.FS, o *Options) *DB {
	t.Helper()
	if o == nil {
		o = &Options{}
	}
	o.FS = fs
	d, err := Open("db", o)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// refCurrent returns d's current version, referenced: the caller unrefs it.
func refCurrent(d *DB) *manifest.Version {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.current.Ref()
	return d.current
}

// mustList returns the names in dir, failing t if fs cannot list it.
func mustList(t testing.TB, fs vfs.FS, dir string) []string {
	t.Helper()
	names, err := fs.List(dir)
	if err != nil {
		t.Fatal(err)
	}
	return names
}

// reopen closes d and opens the DB in dir again with o, as a restart of the
// process would, failing t if either step fails.
func reopen(t *testing.T, d *DB, dir string, o *Options) *DB {
	t.Helper()
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	d, err := Open(dir, o)
	if err != nil {
		t.Fatalf("reopen %s: %v", dir, err)
	}
	return d
}

// returnsWithin runs fn in a goroutine and fails t with its error, or with
// stuck if it has not returned within timeout: how a test shows that work
// does not wait for something held elsewhere.
func returnsWithin(t *testing.T, timeout time.Duration, stuck string, fn func() error) {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- fn() }()
	returnedWithin(t, done, timeout, stuck)
}

// returnedWithin fails t with the error done yields, or with stuck if done
// yields nothing within timeout: returnsWithin for work already started,
// whose result arrives on done.
func returnedWithin(t *testing.T, done <-chan error, timeout time.Duration, stuck string) {
	t.Helper()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(timeout):
		t.Fatal(stuck)
	}
}

func TestSetGetDeleteAcrossFlushAndReopen(t *testing.T) {
	fs := vfs.NewMem()
	d := openMem(t, fs, &Options{MemTableSize: 4 << 10})
	for i := 0; i < 2000; i++ {
		if err := d.Set([]byte(fmt.Sprintf("k%05d", i)), []byte(fmt.Sprintf("v%d", i)), NoSync); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 2000; i += 3 {
		if err := d.Delete([]byte(fmt.Sprintf("k%05d", i)), NoSync); err != nil {
			t.Fatal(err)
		}
	}
	check := func(d *DB) {
		t.Helper()
		for i := 0; i < 2000; i++ {
			v, err := d.Get([]byte(fmt.Sprintf("k%05d", i)))
			if i%3 == 0 {
				if !errors.Is(err, ErrNotFound) {
					t.Fatalf("k%05d: got %q, %v; want ErrNotFound", i, v, err)
				}
				continue
			}
			if err != nil || string(v) != fmt.Sprintf("v%d", i) {
				t.Fatalf("k%05d: got %q, %v", i, v, err)
			}
		}
	}
	check(d)
	if err := d.Flush(); err != nil {
		t.Fatal(err)
	}
	check(d)
	m := d.Metrics()
	tables := 0
	for _, l := range m.Levels {
		tables += l.Tables
	}
	if tables == 0 || m.Flushes == 0 || m.MemTable.Entries != 0 {
		t.Fatalf("nothing flushed to tables:\n%s", m)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	d = openMem(t, fs, nil)
	check(d)
	if err := d.Compact(nil, nil); err != nil {
		t.Fatal(err)
	}
	check(d)
	m = d.Metrics()
	if m.Levels[0].Tables != 0 || m.Levels[6].Tables == 0 {
		t.Fatalf("after full compaction:\n%s", m)
	}
	// Iterate everything forward and backward.
	it := d.NewIter(nil)
	var fwd [][]byte
	for ok := it.First(); ok; ok = it.Next() {
		fwd = append(fwd, bytes.Clone(it.Key()))
	}
	var back [][]byte
	for ok := it.Last(); ok; ok = it.Prev() {
		back = append(back, bytes.Clone(it.Key()))
	}
	if err := it.Close(); err != nil {
		t.Fatal(err)
	}
	want := 2000 - 667
	if len(fwd) != want || len(back) != want {
		t.Fatalf("iterated %d forward, %d backward, want %d", len(fwd), len(back), want)
	}
	for i := range fwd {
		if !bytes.Equal(fwd[i], back[len(back)-1-i]) {
			t.Fatalf("forward and backward disagree at %d", i)
		}
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
}
