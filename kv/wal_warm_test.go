package kv

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sievekv/sievekv/vfs"
)

// warmWatchFS is the OS file system with every WAL's mappings recording
// the pages prefaulted in them (and any prefault asked for after the
// mapping was unmapped, which is refused rather than reaching the
// kernel); gate, if set, holds every warming's prefault (one longer than
// a writer's own) until it closes.
type warmWatchFS struct {
	vfs.FS
	gate chan struct{}
	mu   sync.Mutex
	logs map[string][]*watchedMapping // by base name, in mapping order
}

func (fs *warmWatchFS) Create(name string) (vfs.File, error) {
	f, err := fs.FS.Create(name)
	if err != nil || !strings.HasSuffix(name, ".log") {
		return f, err
	}
	if _, ok := f.(vfs.Mapper); !ok {
		return f, nil
	}
	return &watchedFile{File: f, fs: fs, name: name[strings.LastIndexAny(name, `/\`)+1:]}, nil
}

type watchedFile struct {
	vfs.File
	fs   *warmWatchFS
	name string
}

func (f *watchedFile) Map(off, n int64) (vfs.Mapping, error) {
	m, err := f.File.(vfs.Mapper).Map(off, n)
	if err != nil {
		return nil, err
	}
	wm := &watchedMapping{Mapping: m, gate: f.fs.gate}
	f.fs.mu.Lock()
	f.fs.logs[f.name] = append(f.fs.logs[f.name], wm)
	f.fs.mu.Unlock()
	return wm, nil
}

type watchedMapping struct {
	vfs.Mapping
	gate     chan struct{}
	mu       sync.Mutex
	faulted  int // prefaulted bytes from the segment's start, in order
	unmapped bool
	late     int
}

// writerPrefaultMax bounds a writer's own prefault (two of vfs's 64 KiB
// chunks); a warming asks for more at a time.
const writerPrefaultMax = 128 << 10

func (m *watchedMapping) Prefault(off, n int) error {
	if m.gate != nil && n > writerPrefaultMax {
		<-m.gate
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.unmapped {
		m.late++
		return errors.New("prefault of an unmapped segment")
	}
	if off <= m.faulted {
		m.faulted = max(m.faulted, off+n)
	}
	return m.Mapping.(vfs.Prefaulter).Prefault(off, n)
}

func (m *watchedMapping) Unmap() error {
	m.mu.Lock()
	m.unmapped = true
	m.mu.Unlock()
	return m.Mapping.Unmap()
}

func (m *watchedMapping) state() (faulted, late int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.faulted, m.late
}

// checkNoLatePrefaults fails the test if any prefault was asked for after
// its mapping was unmapped.
func (fs *warmWatchFS) checkNoLatePrefaults(t *testing.T) {
	t.Helper()
	fs.mu.Lock()
	defer fs.mu.Unlock()
	for log, ms := range fs.logs {
		for i, m := range ms {
			if _, late := m.state(); late != 0 {
				t.Errorf("WAL %s segment %d: %d prefaults after its unmap", log, i, late)
			}
		}
	}
}

func openWarmWatched(t *testing.T, gate chan struct{}, memTable int) (*DB, *warmWatchFS) {
	t.Helper()
	fs := &warmWatchFS{FS: vfs.Default, gate: gate, logs: map[string][]*watchedMapping{}}
	d, err := Open(t.TempDir(), &Options{FS: fs, MemTableSize: memTable})
	if err != nil {
		t.Fatal(err)
	}
	d.mu.Lock()
	prepared := len(d.nextLogs) > 0
	d.mu.Unlock()
	if !prepared {
		d.Close()
		t.Skip("no WAL prepared ahead")
	}
	return d, fs
}

// nextPreparedLog waits until the WAL prepared ahead that the next
// rotation takes is created, and returns its number.
func nextPreparedLog(t *testing.T, d *DB) fileNum {
	t.Helper()
	d.mu.Lock()
	var lp *logPrep
	if len(d.nextLogs) > 0 {
		lp = d.nextLogs[0]
	}
	d.mu.Unlock()
	if lp == nil {
		t.Fatal("no WAL prepared ahead")
	}
	<-lp.done
	return lp.num
}

// waitWarmedTo waits until the first segment of WAL name has been
// prefaulted through want bytes, and returns its mapping.
func waitWarmedTo(t *testing.T, fs *warmWatchFS, name string, want int) *watchedMapping {
	t.Helper()
	for range 5000 {
		fs.mu.Lock()
		segs := fs.logs[name]
		fs.mu.Unlock()
		if len(segs) > 0 {
			if got, _ := segs[0].state(); got >= want {
				return segs[0]
			}
		}
		time.Sleep(2 * time.Millisecond)
	}
	t.Fatalf("WAL %s not warmed through %d bytes after 10 s", name, want)
	return nil
}

// TestPreparedWALIsWarmed: the WAL created ahead has its first segment
// mapped and the pages a memtable's log fills prefaulted (MemTableSize
// plus an eighth, not the segment's 2 MiB floor) before the memtable that
// writes it exists, so the writes into it, up to what was warmed, ask for
// no prefault of their own; and none of it reaches an unmapped segment,
// the warmed log's own or the last one's after Close.
func TestPreparedWALIsWarmed(t *testing.T) {
	const memTable = 1 << 20
	d, fs := openWarmWatched(t, nil, memTable)
	num := nextPreparedLog(t, d)
	name := fileName(fileKindLog, num)
	fs.mu.Lock()
	mapped := len(fs.logs[name]) > 0
	fs.mu.Unlock()
	if !mapped {
		d.Close()
		t.Skip("OS files are not mapped here")
	}
	want := (memTable*9/8 + os.Getpagesize() - 1) / os.Getpagesize() * os.Getpagesize()
	if int64(want) >= d.walSegmentSize() {
		t.Fatalf("the test wants a segment larger than a memtable's log: %d >= %d", want, d.walSegmentSize())
	}
	seg := waitWarmedTo(t, fs, name, want)
	time.Sleep(20 * time.Millisecond) // time for a warming that overshoots to show it
	warmed, _ := seg.state()
	if warmed != want {
		t.Fatalf("WAL %s warmed %d bytes, want %d: a memtable's log, not its whole %d-byte segment", name, warmed, want, d.walSegmentSize())
	}
	// Rotate into the warmed log (a Flush of an empty memtable would
	// not), then write less than it warmed.
	if err := d.Set([]byte("first"), nil, NoSync); err != nil {
		t.Fatal(err)
	}
	if err := d.Flush(); err != nil {
		t.Fatal(err)
	}
	val := make([]byte, 1000)
	for i := range want / 2 / len(val) {
		if err := d.Set([]byte(fmt.Sprintf("key%06d", i)), val, NoSync); err != nil {
			t.Fatal(err)
		}
	}
	if d.mem.logNum != num {
		t.Fatalf("the memtable writes WAL %06d, not the warmed %06d", d.mem.logNum, num)
	}
	if got, _ := seg.state(); got != warmed {
		t.Errorf("writes inside the warmed pages prefaulted again: %d bytes, warmed %d", got, warmed)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	fs.checkNoLatePrefaults(t)
}

// TestRotationDoesNotWaitForWarming: a rotation takes the WAL prepared
// ahead while its warming is stuck (every warming prefault held), and the
// writes then go on correctly into it, prefaulting for themselves; Close,
// which unmaps every log, waits for the warmings' chunks in flight, so no
// prefault reaches an unmapped segment. The rotation used to stop the
// warming and wait for it under the commit queue, up to 2.5 ms on the busy
// test machine when the warming goroutine waited for a P.
func TestRotationDoesNotWaitForWarming(t *testing.T) {
	gate := make(chan struct{})
	d, fs := openWarmWatched(t, gate, 1<<20)
	defer func() {
		select {
		case <-gate:
		default:
			close(gate) // a failure before the release below
		}
	}()
	next := nextPreparedLog(t, d)
	put := func(from, to int) {
		for i := from; i < to; i++ {
			if err := d.Set([]byte(fmt.Sprintf("key%06d", i)), make([]byte, 100), NoSync); err != nil {
				t.Error(err)
				return
			}
		}
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		put(0, 100)
		if err := d.Flush(); err != nil { // rotates into the log being warmed
			t.Error(err)
			return
		}
		put(100, 3000)
	}()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("the rotation or the writes after it waited for the warming")
	}
	if d.mem.logNum != next {
		t.Fatalf("the memtable writes WAL %06d, not the prepared %06d", d.mem.logNum, next)
	}
	for i := range 3000 {
		if _, err := d.Get([]byte(fmt.Sprintf("key%06d", i))); err != nil {
			t.Fatalf("key %d: %v", i, err)
		}
	}
	closed := make(chan error, 1)
	go func() { closed <- d.Close() }()
	time.Sleep(50 * time.Millisecond) // time for a Close that does not wait to unmap
	close(gate)
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond) // time for a warming that outlived Close to prefault
	fs.checkNoLatePrefaults(t)
}
