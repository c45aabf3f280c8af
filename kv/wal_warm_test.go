package kv

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sievekv/sievekv/vfs"
)

// warmWatchFS is the OS file system with every WAL's mappings recording
// the pages prefaulted in them (and any prefault asked for after the
// mapping was unmapped, which is refused rather than reaching the
// kernel); delay, if set, slows every prefault down.
type warmWatchFS struct {
	vfs.FS
	delay time.Duration
	mu    sync.Mutex
	logs  map[string][]*watchedMapping // by base name, in mapping order
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
	wm := &watchedMapping{Mapping: m, delay: f.fs.delay}
	f.fs.mu.Lock()
	f.fs.logs[f.name] = append(f.fs.logs[f.name], wm)
	f.fs.mu.Unlock()
	return wm, nil
}

type watchedMapping struct {
	vfs.Mapping
	delay    time.Duration
	mu       sync.Mutex
	faulted  int // prefaulted bytes from the segment's start, in order
	unmapped bool
	late     int
}

func (m *watchedMapping) Prefault(off, n int) error {
	time.Sleep(m.delay)
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

func openWarmWatched(t *testing.T, delay time.Duration, memTable int) (*DB, *warmWatchFS) {
	t.Helper()
	fs := &warmWatchFS{FS: vfs.Default, delay: delay, logs: map[string][]*watchedMapping{}}
	d, err := Open(t.TempDir(), &Options{FS: fs, MemTableSize: memTable})
	if err != nil {
		t.Fatal(err)
	}
	d.mu.Lock()
	prepared := d.nextLog != nil
	d.mu.Unlock()
	if !prepared {
		d.Close()
		t.Skip("no WAL prepared ahead")
	}
	return d, fs
}

// waitWarmed waits until the WAL prepared ahead has finished warming.
func waitWarmed(t *testing.T, d *DB) fileNum {
	t.Helper()
	d.mu.Lock()
	lp := d.nextLog
	d.mu.Unlock()
	if lp == nil {
		t.Fatal("no WAL prepared ahead")
	}
	<-lp.warmed
	return lp.num
}

// TestPreparedWALIsWarmed: the WAL created ahead has its first segment
// mapped and its pages prefaulted before the memtable that writes it
// exists, so the writes into it, up to what was warmed, ask for no
// prefault of their own; and none of it reaches an unmapped segment, the
// warmed log's own or the last one's after Close.
func TestPreparedWALIsWarmed(t *testing.T) {
	const memTable = 1 << 20
	d, fs := openWarmWatched(t, 0, memTable)
	num := waitWarmed(t, d)
	name := fileName(fileKindLog, num)
	fs.mu.Lock()
	segs := fs.logs[name]
	fs.mu.Unlock()
	if len(segs) == 0 {
		d.Close()
		t.Skip("OS files are not mapped here")
	}
	warmed, _ := segs[0].state()
	want := int(min(d.walSegmentSize(), maxWarmWALBytes))
	if warmed < want {
		t.Fatalf("WAL %s warmed to %d bytes, want %d (its whole first segment)", name, warmed, want)
	}
	// Rotate into the warmed log, then write less than it warmed.
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
	if got, _ := segs[0].state(); got != warmed {
		t.Errorf("writes inside the warmed pages prefaulted again: %d bytes, warmed %d", got, warmed)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
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

// TestRotationAndCloseStopWarming: a rotation that needs the WAL still
// being warmed takes it after the chunk in flight, not after the whole
// warming (with every 64 KiB prefault slowed to 20 ms, warming a 2 MiB
// segment takes 640 ms), the writes then go on correctly into it, and
// Close does not wait for the next log's warming either.
func TestRotationAndCloseStopWarming(t *testing.T) {
	const delay = 20 * time.Millisecond
	d, _ := openWarmWatched(t, delay, 1<<20)
	full := time.Duration(d.walSegmentSize()/(64<<10)) * delay
	put := func(from, to int) {
		for i := from; i < to; i++ {
			if err := d.Set([]byte(fmt.Sprintf("key%06d", i)), make([]byte, 100), NoSync); err != nil {
				t.Fatal(err)
			}
		}
	}
	put(0, 100)
	start := time.Now()
	if err := d.Flush(); err != nil { // rotates into the log being warmed
		t.Fatal(err)
	}
	if took := time.Since(start); took >= full/2 {
		t.Fatalf("the rotation took %v: it waited for the warming (%v in all)", took, full)
	}
	put(100, 3000)
	for i := range 3000 {
		if _, err := d.Get([]byte(fmt.Sprintf("key%06d", i))); err != nil {
			t.Fatalf("key %d: %v", i, err)
		}
	}
	start = time.Now()
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took >= full/2 {
		t.Fatalf("Close took %v: it waited for the next log's warming (%v in all)", took, full)
	}
}
