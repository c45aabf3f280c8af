package vfs

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
)

// TestAppenderPrefaultsAhead checks that a mapped Appender prefaults the
// pages its stores land in before it stores (on Linux, where OS files map)
// and that prefaulting changes no byte: what was written reads back
// exactly, across prefault chunks and segments, and the tail past Size
// still reads as zeros (V4).
func TestAppenderPrefaultsAhead(t *testing.T) {
	const segSize = 256 << 10
	a, path := newFileAppender(t, segSize)
	if !a.Mapped() {
		t.Skip("OS files are not mapped on this system")
	}
	rng := rand.New(rand.NewPCG(3, 4))
	var want []byte
	for len(want) < 3*segSize+segSize/3 {
		rec := make([]byte, 1+rng.IntN(9000))
		for i := range rec {
			rec[i] = byte(rng.Uint32() | 1) // never zero: a lost store shows
		}
		if _, err := a.Write(rec); err != nil {
			t.Fatal(err)
		}
		want = append(want, rec...)
		if _, ok := a.seg.(Prefaulter); ok && !a.noPrefault {
			at := int(a.off - a.segOff)
			// Records are shorter than a chunk: each store landed in pages
			// prefaulted before it.
			if a.faulted < at {
				t.Fatalf("at segment offset %d only %d bytes prefaulted", at, a.faulted)
			}
		}
	}
	if a.noPrefault {
		t.Log("the kernel cannot prefault (MADV_POPULATE_WRITE); checked the bytes only")
	}
	syncCloseHolds(t, a, path, want)
}

// newFileAppender returns an Appender of segSize-byte segments on a new
// OS file, closed when the test ends, and the file's path.
func newFileAppender(t *testing.T, segSize int64) (*Appender, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "log")
	f, err := Default.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return NewAppender(f, segSize), path
}

// syncCloseHolds syncs and closes a, then checks that the file at path
// holds want and nothing but zeros after it (V4).
func syncCloseHolds(t *testing.T, a *Appender, path string, want []byte) {
	t.Helper()
	if err := a.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) < len(want) || !bytes.Equal(got[:len(want)], want) {
		t.Fatalf("file holds %d bytes, not the %d written", len(got), len(want))
	}
	if tail := got[len(want):]; len(bytes.Trim(tail, "\x00")) != 0 {
		t.Fatal("the tail past Size is not all zeros")
	}
}

// TestAppenderWarm: Warm maps the first segment and prefaults up to what
// it was asked (the whole of it here), the writes after it read back
// exactly with zeros past Size, and a Warm told to stop first prefaults
// nothing; a Warm after a write leaves the Appender alone.
func TestAppenderWarm(t *testing.T) {
	for _, stopFirst := range []bool{false, true} {
		const segSize = 512 << 10
		a, path := newFileAppender(t, segSize)
		var stop atomic.Bool
		stop.Store(stopFirst)
		if err := a.Warm(segSize, &stop); err != nil {
			t.Fatal(err)
		}
		if !a.Mapped() {
			t.Skip("OS files are not mapped on this system")
		}
		if a.seg == nil {
			t.Fatal("Warm did not map the first segment")
		}
		switch {
		case a.noPrefault:
			t.Log("the kernel cannot prefault; checked the bytes only")
		case stopFirst && a.faulted != 0:
			t.Fatalf("a stopped Warm prefaulted %d bytes", a.faulted)
		case !stopFirst && a.faulted != segSize:
			t.Fatalf("Warm prefaulted %d bytes, want %d", a.faulted, segSize)
		}
		want := bytes.Repeat([]byte("warm"), 50_000) // past the segment
		if _, err := a.Write(want); err != nil {
			t.Fatal(err)
		}
		seg := a.seg
		if err := a.Warm(segSize, &stop); err != nil || a.seg != seg {
			t.Fatalf("a Warm after a write changed the Appender (%v)", err)
		}
		syncCloseHolds(t, a, path, want)
	}
}
