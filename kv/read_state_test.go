package kv

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/sievekv/sievekv/internal/testutil"
	"github.com/sievekv/sievekv/vfs"
)

// readPathDB opens a DB on a fresh mem FS with a block cache so small that
// nearly every block read evicts another, and small tables, so flushes and
// compactions happen within a test's few thousand writes.
func readPathDB(t *testing.T) (*DB, vfs.FS) {
	t.Helper()
	fs := vfs.NewMem()
	d, err := Open("db", &Options{FS: fs, DisableWAL: true, BlockCacheSize: 32 << 10,
		MemTableSize: 64 << 10, TargetFileSize: 32 << 10, BlockSize: 1024})
	if err != nil {
		t.Fatal(err)
	}
	return d, fs
}

func readPathValue(i, gen int) []byte {
	return []byte(fmt.Sprintf("value-%06d-gen%03d-%s", i, gen, strings.Repeat("x", i%97)))
}

// TestReadsOutliveCompactions runs Gets and scans from several goroutines
// (-race) while a writer overwrites keys and compacts, with a cache that
// evicts constantly. Every answer must be one of the key's written values
// in order; a scan's values must stay right while compactions replace its
// tables and the cache recycles their blocks (each scan holds a reference
// to the block it reads, sstable's BM1, and pins its read state, K9).
// At the end, with every reader done, the only table files left are the
// live ones: no retired read state kept a version alive, and none dropped
// its version twice (that panics).
func TestReadsOutliveCompactions(t *testing.T) {
	d, fs := readPathDB(t)
	const n = 600
	for i := range n {
		if err := d.Set([]byte(fmt.Sprintf("k%05d", i)), readPathValue(i, 0), NoSync); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.Compact(nil, nil); err != nil {
		t.Fatal(err)
	}
	var readers testutil.Group
	stop := make(chan struct{})
	check := func(i int, v []byte) error {
		if !bytes.HasPrefix(v, []byte(fmt.Sprintf("value-%06d-gen", i))) || !bytes.Equal(v[len("value-000000-gen000-"):], bytes.Repeat([]byte("x"), i%97)) {
			return fmt.Errorf("key %d: value %q is not one written for it", i, v)
		}
		return nil
	}
	readers.GoRandom(3, 3, func(rng *rand.Rand) error {
		for {
			select {
			case <-stop:
				return nil
			default:
			}
			if rng.IntN(4) > 0 {
				i := rng.IntN(n)
				v, err := d.Get([]byte(fmt.Sprintf("k%05d", i)))
				if err == nil {
					err = check(i, v)
				}
				if err != nil {
					return err
				}
				continue
			}
			it := d.NewIter(nil)
			i := rng.IntN(n / 2)
			for ok := it.SeekGE([]byte(fmt.Sprintf("k%05d", i))); ok && i < n; ok = it.Next() {
				if err := check(i, it.Value()); err != nil || string(it.Key()) != fmt.Sprintf("k%05d", i) {
					err = fmt.Errorf("scan at %q: %v", it.Key(), err)
					it.Close()
					return err
				}
				i++
			}
			if err := it.Close(); err != nil {
				return err
			}
		}
	})
	for gen := 1; gen <= 6; gen++ {
		for i := gen; i < n; i += 3 {
			if err := d.Set([]byte(fmt.Sprintf("k%05d", i)), readPathValue(i, gen), NoSync); err != nil {
				t.Fatal(err)
			}
		}
		if err := d.Compact(nil, nil); err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	for _, err := range readers.Wait() {
		t.Fatal(err)
	}
	if err := d.Compact(nil, nil); err != nil {
		t.Fatal(err)
	}
	live := map[string]bool{}
	d.mu.Lock()
	for _, l := range d.current.Levels {
		for _, tm := range l {
			live[fileName(fileKindTable, fileNum(tm.FileNum))] = true
		}
	}
	d.mu.Unlock()
	names := mustList(t, fs, "db")
	for _, name := range names {
		if strings.HasSuffix(name, ".sst") && !live[name] {
			t.Errorf("table %s outlived every version naming it: a read state still holds an old version", name)
		}
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestIteratorOutlivesDBClose closes the DB under an open iterator: the
// iterator then reports ErrClosed, and closing it afterwards releases its
// read state without a second release of the version (which panics).
func TestIteratorOutlivesDBClose(t *testing.T) {
	d, _ := readPathDB(t)
	for i := range 300 {
		if err := d.Set([]byte(fmt.Sprintf("k%05d", i)), readPathValue(i, 0), NoSync); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.Compact(nil, nil); err != nil {
		t.Fatal(err)
	}
	it := d.NewIter(nil)
	if !it.First() {
		t.Fatal(it.Error())
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if it.Next() {
		t.Fatal("iterator moved after the DB closed")
	}
	// The scan stopped short of its range: Close says so, or a loop
	// ending on a false Next would take the keys so far for all of them.
	if err := it.Close(); !errors.Is(err, ErrClosed) {
		t.Fatalf("Close of an iterator the DB's Close stopped = %v, want ErrClosed", err)
	}
	if _, err := d.Get([]byte("k00001")); !errors.Is(err, ErrClosed) {
		t.Fatalf("Get after Close: %v", err)
	}
	if d.readState.Load() != nil {
		t.Fatal("Close left a published read state")
	}
}
