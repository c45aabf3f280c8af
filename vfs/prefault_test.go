package vfs

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"
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
	f, path := newTempFile(t)
	return NewAppender(f, segSize), path
}

// newTempFile creates an OS file, closed when the test ends, and returns
// it and its path.
func newTempFile(t *testing.T) (File, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "log")
	f, err := Default.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f, path
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

// TestAppenderWarm: StartWarm maps the first segment and its goroutine
// prefaults up to what it was asked (the whole of it here); the writes
// after it take no prefault of their own there and read back exactly with
// zeros past Size; a StartWarm after a write leaves the Appender alone.
func TestAppenderWarm(t *testing.T) {
	const segSize = 3 * warmChunk / 2 // two warming chunks, one partial
	f, path := newGatedFile(t, nil)
	a := NewAppender(f, segSize)
	if err := a.StartWarm(segSize); err != nil {
		t.Fatal(err)
	}
	if !a.Mapped() {
		t.Skip("OS files are not mapped on this system")
	}
	if a.seg == nil || a.warm == nil {
		t.Fatal("StartWarm did not map the first segment and start warming")
	}
	<-a.warm.done
	if got := a.faultedTo.Load(); got != segSize && f.prefaults() > 0 {
		t.Fatalf("warming prefaulted %d bytes, want %d", got, segSize)
	}
	before := f.prefaults()
	want := bytes.Repeat([]byte("warm"), segSize/4-1) // inside the segment
	if _, err := a.Write(want); err != nil {
		t.Fatal(err)
	}
	if got := f.prefaults(); got != before {
		t.Fatalf("writes into warmed pages prefaulted %d more times", got-before)
	}
	more := bytes.Repeat([]byte("more"), segSize/4) // into the next segment
	if _, err := a.Write(more); err != nil {
		t.Fatal(err)
	}
	seg := a.seg
	if err := a.StartWarm(segSize); err != nil || a.seg != seg || a.warm != nil {
		t.Fatalf("a StartWarm after a write changed the Appender (%v)", err)
	}
	syncCloseHolds(t, a, path, append(want, more...))
}

// TestAppenderWritesBesideWarming: the writer does not wait for a warming
// stuck in its first chunk (the goroutine waiting for a P, on a busy
// machine): its writes go on, prefaulting for themselves. Close, which
// unmaps, waits for the chunk in flight: no prefault reaches an unmapped
// segment. And the bytes are exact.
func TestAppenderWritesBesideWarming(t *testing.T) {
	const segSize = 4 * warmChunk
	gate := make(chan struct{})
	f, path := newGatedFile(t, gate)
	a := NewAppender(f, segSize)
	if err := a.StartWarm(segSize); err != nil {
		t.Fatal(err)
	}
	if !a.Mapped() || a.warm == nil {
		t.Skip("OS files are not mapped or prefaulted on this system")
	}
	<-f.entered // the warming is stuck in its first chunk
	rng := rand.New(rand.NewPCG(5, 6))
	var want []byte
	wrote := make(chan error, 1)
	go func() {
		for len(want) < segSize/2 {
			rec := make([]byte, 1+rng.IntN(5000))
			for i := range rec {
				rec[i] = byte(rng.Uint32() | 1)
			}
			if _, err := a.Write(rec); err != nil {
				wrote <- err
				return
			}
			want = append(want, rec...)
		}
		wrote <- nil
	}()
	select {
	case err := <-wrote:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		close(gate)
		t.Fatal("the writes waited for the warming")
	}
	warming := a.warm
	closed := make(chan error, 1)
	go func() { closed <- a.Close() }()
	time.Sleep(50 * time.Millisecond) // time for a Close that does not wait to unmap
	close(gate)
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
	<-warming.done
	if late := f.late.Load(); late != 0 {
		t.Fatalf("%d prefaults reached an unmapped segment: Close did not wait for the warming", late)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) < len(want) || !bytes.Equal(got[:len(want)], want) {
		t.Fatalf("file holds %d bytes, not the %d written", len(got), len(want))
	}
}

// gatedFile is an OS file whose mappings count their prefaults, refuse
// (and count as late) any after their Unmap, and, if gate is set, hold
// every prefault longer than a writer's (a warming's) until gate closes,
// saying so once on entered.
type gatedFile struct {
	File
	gate    chan struct{}
	entered chan struct{}
	calls   atomic.Int64
	late    atomic.Int64
}

func newGatedFile(t *testing.T, gate chan struct{}) (*gatedFile, string) {
	t.Helper()
	f, path := newTempFile(t)
	return &gatedFile{File: f, gate: gate, entered: make(chan struct{}, 1)}, path
}

func (f *gatedFile) prefaults() int64 { return f.calls.Load() }

func (f *gatedFile) Map(off, n int64) (Mapping, error) {
	mp, ok := f.File.(Mapper)
	if !ok {
		return nil, ErrMapUnsupported
	}
	m, err := mp.Map(off, n)
	if err != nil {
		return nil, err
	}
	return &gatedMapping{Mapping: m, f: f}, nil
}

type gatedMapping struct {
	Mapping
	f        *gatedFile
	unmapped atomic.Bool
}

func (m *gatedMapping) Prefault(off, n int) error {
	if m.f.gate != nil && n > 2*prefaultChunk {
		select {
		case m.f.entered <- struct{}{}:
		default:
		}
		<-m.f.gate
	}
	if m.unmapped.Load() {
		m.f.late.Add(1)
		return errors.New("prefault of an unmapped segment")
	}
	pf, ok := m.Mapping.(Prefaulter)
	if !ok {
		return errors.New("no prefault here")
	}
	m.f.calls.Add(1)
	return pf.Prefault(off, n)
}

func (m *gatedMapping) Unmap() error {
	m.unmapped.Store(true)
	return m.Mapping.Unmap()
}
