package wal

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/sievekv/sievekv/vfs"
	"github.com/sievekv/sievekv/vfs/errorfs"
)

// mappedLog writes recs through a Writer over a mapped vfs.Appender with
// small segments, syncing after the records whose index is in syncAt, and
// returns the file's bytes (preallocated zero tail included), each
// record's end offset and the offset through which the log was synced.
func mappedLog(t *testing.T, fs vfs.FS, recs [][]byte, syncAt map[int]bool) (data []byte, ends []int64, synced int64) {
	t.Helper()
	name := filepath.Join(t.TempDir(), "000007.log")
	f, err := fs.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	a := vfs.NewAppender(f, 64<<10)
	w := NewWriter(a, a, 7)
	for i, r := range recs {
		if _, err := w.WriteRecord(r); err != nil {
			t.Fatal(err)
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		ends = append(ends, w.Size())
		if syncAt[i] {
			if err := w.Sync(); err != nil {
				t.Fatal(err)
			}
			synced = w.Size()
		}
	}
	if !a.Mapped() {
		t.Skip("the OS file system cannot map files here")
	}
	// Read while still mapped: what a process crash leaves is exactly the
	// file as the kernel has it now.
	data, err = os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	return data, ends, synced
}

// TestMappedLogCrashImages checks the mapped WAL path against crash
// images: a process crash leaves the file as written (all records, then
// the zero tail: a clean end, W6); a power loss can leave any prefix of
// the unsynced bytes followed by zeros (the preallocated extents), which
// must read as a prefix of the records through every synced one and a
// clean end or torn tail, never corruption.
func TestMappedLogCrashImages(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	var recs [][]byte
	syncAt := map[int]bool{}
	for i := range 400 {
		n := rng.IntN(300)
		if i%97 == 5 {
			n = 3*BlockSize + rng.IntN(BlockSize) // fragmented records
		}
		recs = append(recs, randRecord(rng, n))
		if rng.IntN(10) == 0 {
			syncAt[i] = true
		}
	}
	data, ends, synced := mappedLog(t, vfs.Default, recs, syncAt)
	if int64(len(data)) <= ends[len(ends)-1] || len(data)%(64<<10) != 0 {
		t.Fatalf("file of %d bytes for a log of %d: not a preallocated segment multiple", len(data), ends[len(ends)-1])
	}

	got, err := readAll(data, 7)
	if err != io.EOF || len(got) != len(recs) {
		t.Fatalf("process-crash image: %d of %d records, %v (want all, io.EOF)", len(got), len(recs), err)
	}
	checkPrefix(t, got, recs, "process crash")

	logEnd := ends[len(ends)-1]
	for range 300 {
		cut := synced + rng.Int64N(logEnd-synced+1)
		img := append([]byte(nil), data...)
		clear(img[cut:])
		got, err := readAll(img, 7)
		if err != io.EOF && !errors.Is(err, ErrTornTail) {
			t.Fatalf("power-loss image cut at %d (synced %d): %v", cut, synced, err)
		}
		checkPrefix(t, got, recs, "power loss")
		want := 0
		for want < len(ends) && ends[want] <= cut {
			want++
		}
		if len(got) != want {
			t.Fatalf("cut at %d: %d records, want the %d that end before it", cut, len(got), want)
		}
	}
}

// TestMappedLogFaults injects failures into the mapped path through
// errorfs: a failed preallocation (what ENOSPC looks like) and a failed
// Sync are returned, sticky, and what was written before stays readable.
func TestMappedLogFaults(t *testing.T) {
	for _, c := range []struct {
		name string
		op   errorfs.Op
	}{{"map", errorfs.OpWrite}, {"sync", errorfs.OpSync}} {
		t.Run(c.name, func(t *testing.T) {
			efs := errorfs.Wrap(vfs.Default, c.op)
			efs.FailAt(3, true) // the third segment, or the third Sync
			name := filepath.Join(t.TempDir(), "000007.log")
			f, err := efs.Create(name)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			a := vfs.NewAppender(f, 64<<10)
			defer a.Close()
			w := NewWriter(a, a, 7)
			rec := make([]byte, 1000)
			var okEnd int64
			var failed error
			for i := 0; i < 1000 && failed == nil; i++ {
				if _, err := w.WriteRecord(rec); err != nil {
					failed = err
					break
				}
				if err := w.Sync(); err != nil {
					failed = err
					break
				}
				okEnd = w.Size()
			}
			if !a.Mapped() {
				t.Skip("the OS file system cannot map files here")
			}
			if !errors.Is(failed, errorfs.ErrInjected) {
				t.Fatalf("got %v, want the injected failure", failed)
			}
			if _, err := w.WriteRecord(rec); !errors.Is(err, errorfs.ErrInjected) {
				t.Fatalf("after the failure: %v, want it again (sticky)", err)
			}
			data, err := os.ReadFile(name)
			if err != nil {
				t.Fatal(err)
			}
			r := NewReader(bytes.NewReader(data), 7)
			for {
				if _, err := r.Next(); err != nil {
					if err != io.EOF && !errors.Is(err, ErrTornTail) {
						t.Fatalf("reading back: %v", err)
					}
					break
				}
			}
			if r.LastRecordEnd() < okEnd {
				t.Fatalf("records through %d were acknowledged, only %d read back", okEnd, r.LastRecordEnd())
			}
		})
	}
}

// TestAppenderFallsBackToWrite checks that a file without the mapping
// capability (MemFS) gets the same log through Write, with no zero tail.
func TestAppenderFallsBackToWrite(t *testing.T) {
	fs := vfs.NewMem()
	f, err := fs.Create("000007.log")
	if err != nil {
		t.Fatal(err)
	}
	a := vfs.NewAppender(f, 0)
	if a.Mapped() {
		t.Fatal("MemFS file claims to be mapped")
	}
	w := NewWriter(a, a, 7)
	for range 10 {
		if _, err := w.WriteRecord([]byte("hello")); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Sync(); err != nil {
		t.Fatal(err)
	}
	st, _ := f.Stat()
	if st.Size() != w.Size() {
		t.Fatalf("file is %d bytes, log %d", st.Size(), w.Size())
	}
}
