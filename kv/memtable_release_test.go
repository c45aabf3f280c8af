package kv

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sievekv/sievekv/internal/testutil"
)

// TestFlushedMemTableReleasedAfterLastReader checks K12: a flushed
// memtable that an open iterator's read state lists keeps its arena (the
// iterator reads it correctly while later memtables fill), and is released
// when the iterator closes; one nobody reads is released by its flush.
func TestFlushedMemTableReleasedAfterLastReader(t *testing.T) {
	d, err := Open(t.TempDir(), &Options{MemTableSize: 32 << 10, DisableWAL: true})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	val := func(i int) []byte { return bytes.Repeat([]byte{byte(i)}, 100) }
	for i := range 100 {
		if err := d.Set([]byte(fmt.Sprintf("a%05d", i)), val(i), NoSync); err != nil {
			t.Fatal(err)
		}
	}
	d.mu.Lock()
	pinned := d.mem
	d.mu.Unlock()
	it := d.NewIter(nil)
	if err := d.Flush(); err != nil {
		t.Fatal(err)
	}
	// Many more memtables: each would take the pinned one's chunks if it
	// had been released.
	for i := range 3000 {
		if err := d.Set([]byte(fmt.Sprintf("b%05d", i)), val(i), NoSync); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.Flush(); err != nil {
		t.Fatal(err)
	}
	if n := pinned.refs.Load(); n <= 0 {
		t.Fatalf("flushed memtable under an open iterator has %d holders, want > 0", n)
	}
	i := 0
	for ok := it.First(); ok; ok = it.Next() {
		if want := fmt.Sprintf("a%05d", i); string(it.Key()) != want || !bytes.Equal(it.Value(), val(i)) {
			t.Fatalf("entry %d: %q = %x, want %q", i, it.Key(), it.Value()[:4], want)
		}
		i++
	}
	if i != 100 {
		t.Fatalf("iterator saw %d entries, want 100", i)
	}
	if err := it.Close(); err != nil {
		t.Fatal(err)
	}
	if n := pinned.refs.Load(); n != 0 {
		t.Fatalf("flushed memtable has %d holders after its last reader closed, want 0", n)
	}

	d.mu.Lock()
	unread := d.mem
	d.mu.Unlock()
	for i := range 400 {
		if err := d.Set([]byte(fmt.Sprintf("c%05d", i)), val(i), NoSync); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.Flush(); err != nil {
		t.Fatal(err)
	}
	if n := unread.refs.Load(); n != 0 {
		t.Fatalf("flushed memtable nobody reads has %d holders, want 0", n)
	}
}

// TestMemTableReuseUnderConcurrentReads checks K12 under load: one writer
// fills many small memtables (each flush hands an arena back for the next
// ones) while readers Get keys already written and scan with iterators
// kept open across flushes. Every value names its key, so a read of an
// arena handed back too early shows as a wrong value (or, under -race, a
// race with the writer storing into the reused chunk).
func TestMemTableReuseUnderConcurrentReads(t *testing.T) {
	d, err := Open(t.TempDir(), &Options{MemTableSize: 16 << 10, DisableWAL: true})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	key := func(i uint64) []byte { return binary.BigEndian.AppendUint64([]byte("k"), i) }
	value := func(k []byte) []byte { return bytes.Repeat(k, 8) }
	const writes = 6000
	var written atomic.Uint64
	var stop atomic.Bool
	var g testutil.Group
	g.Go(func() error { // writer
		defer stop.Store(true)
		for i := uint64(1); i <= writes; i++ {
			k := key(i)
			if err := d.Set(k, value(k), NoSync); err != nil {
				return err
			}
			written.Store(i)
		}
		return nil
	})
	g.Go(func() error { // point reads of written keys
		rng := rand.New(rand.NewPCG(1, 2))
		for !stop.Load() {
			n := written.Load()
			if n == 0 {
				runtime.Gosched()
				continue
			}
			k := key(1 + rng.Uint64N(n))
			v, err := d.Get(k)
			if err != nil || !bytes.Equal(v, value(k)) {
				return fmt.Errorf("Get(%x) = %x, %v", k, v, errors.Join(err))
			}
		}
		return nil
	})
	g.Go(func() error { // scans whose iterators outlive several flushes
		for !stop.Load() {
			it := d.NewIter(nil)
			n := 0
			for ok := it.First(); ok && n < 200; ok = it.Next() {
				if !bytes.Equal(it.Value(), value(it.Key())) {
					err := fmt.Errorf("iterator: %x = %x", it.Key(), it.Value())
					it.Close()
					return err
				}
				n++
				if n%20 == 0 {
					time.Sleep(100 * time.Microsecond) // let memtables rotate under it
				}
			}
			if err := it.Close(); err != nil {
				return err
			}
		}
		return nil
	})
	for _, err := range g.Wait() {
		t.Fatal(err)
	}
	if m := d.Metrics(); m.Flushes < 10 {
		t.Fatalf("only %d flushes: the test did not cycle arenas", m.Flushes)
	}
}

// TestNewMemTableFilterSizedFromLast checks newMemTableStruct's sizing: a
// memtable's key filter (the memtable package's MT11) is sized for a
// quarter more entries than the mutable memtable it replaces took, so a
// steady fill does not rebuild it under the write lock. An empty
// memtable's ApproximateSize is its filter's bytes, at 12 bits per key.
func TestNewMemTableFilterSizedFromLast(t *testing.T) {
	d, err := Open(t.TempDir(), &Options{MemTableSize: 4 << 20, DisableWAL: true})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	const n = 20000 // five times the filter's default size
	for i := range n {
		if err := d.Set([]byte(fmt.Sprintf("k%06d", i)), nil, NoSync); err != nil {
			t.Fatal(err)
		}
	}
	d.mu.Lock()
	last := d.mem.Len()
	d.mu.Unlock()
	if err := d.Flush(); err != nil {
		t.Fatal(err)
	}
	d.mu.Lock()
	got := d.mem.ApproximateSize()
	d.mu.Unlock()
	if want := int64(last+last/4) * 12 / 8; last != n || got < want {
		t.Fatalf("after a memtable of %d entries the next one's filter takes %d B, want >= %d", last, got, want)
	}
}

// TestFlushReleasesOddSizedArenaChunk caught a flush killing the process:
// a memtable whose first entry was a 20 KiB value had an arena chunk of
// that size, which no chunk pool holds, and releasing the flushed
// memtable indexed the pools with -1 on the flush goroutine.
func TestFlushReleasesOddSizedArenaChunk(t *testing.T) {
	d, err := Open(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	v := bytes.Repeat([]byte{7}, 20<<10)
	if err := d.Set([]byte("k"), v, NoSync); err != nil {
		t.Fatal(err)
	}
	if err := d.Flush(); err != nil {
		t.Fatal(err)
	}
	if got, err := d.Get([]byte("k")); err != nil || !bytes.Equal(got, v) {
		t.Fatalf("Get after the flush: %d bytes, %v", len(got), err)
	}
}
