package kv

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sievekv/sievekv/vfs"
)

// gateFS holds the next table Create, or the next MANIFEST Sync, until
// released: a seam to stop a compaction or a flush at one point of its
// work.
type gateFS struct {
	vfs.FS
	mu       sync.Mutex
	create   *gate // the next table Create waits on it
	manifest *gate // the next MANIFEST Sync waits on it
}

// gate is one held call: reached is closed when the call arrives, and the
// call goes on once release is closed.
type gate struct{ reached, release chan struct{} }

func newGate() *gate { return &gate{make(chan struct{}), make(chan struct{})} }

func (g *gate) wait() {
	close(g.reached)
	<-g.release
}

func (f *gateFS) Create(name string) (vfs.File, error) {
	f.mu.Lock()
	g := f.create
	if g != nil && strings.HasSuffix(name, ".sst") {
		f.create = nil
	} else {
		g = nil
	}
	f.mu.Unlock()
	if g != nil {
		g.wait()
	}
	file, err := f.FS.Create(name)
	if err != nil || !strings.Contains(name, "MANIFEST") {
		return file, err
	}
	return &gateManifest{File: file, fs: f}, nil
}

func (f *gateFS) holdCreate() *gate       { return f.hold(&f.create) }
func (f *gateFS) holdManifestSync() *gate { return f.hold(&f.manifest) }

func (f *gateFS) hold(slot **gate) *gate {
	g := newGate()
	f.mu.Lock()
	*slot = g
	f.mu.Unlock()
	return g
}

type gateManifest struct {
	vfs.File
	fs *gateFS
}

func (m *gateManifest) Sync() error {
	m.fs.mu.Lock()
	g := m.fs.manifest
	m.fs.manifest = nil
	m.fs.mu.Unlock()
	if g != nil {
		g.wait()
	}
	return m.File.Sync()
}

// inflightTree is a DB with a bottom level of bottomKeys keys and four L0
// tables of l0Keys each, compactions left to the test; write(n) writes
// and flushes n more keys.
func inflightTree(t *testing.T, fs vfs.FS, bottomKeys, l0Keys int) (d *DB, write func(n int)) {
	t.Helper()
	d = openMem(t, fs, &Options{FilterBitsPerKey: 10, FilterAllocation: FilterAllocationMonkey,
		DisableAutomaticCompactions: true, MemTableSize: 8 << 20, TargetFileSize: 8 << 20})
	next := 0
	write = func(n int) {
		t.Helper()
		for range n {
			next++
			// Spread over the key space, so every table overlaps the bottom.
			k := fmt.Sprintf("key%08d", (uint64(next)*2654435761)%100_000_000)
			if err := d.Set([]byte(k), []byte("value"), NoSync); err != nil {
				t.Fatal(err)
			}
		}
		if err := d.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	write(bottomKeys)
	if err := d.Compact(nil, nil); err != nil {
		t.Fatal(err)
	}
	for range 4 {
		write(l0Keys)
	}
	return d, write
}

// heldCompaction is inflightTree's DB with a full compaction started and
// held before it creates its first table: release compacting to let it
// go on; done answers its error.
func heldCompaction(t *testing.T, bottomKeys, l0Keys int) (d *DB, fs *gateFS, write func(int), compacting *gate, done chan error) {
	t.Helper()
	fs = &gateFS{FS: vfs.NewMem()}
	d, write = inflightTree(t, fs, bottomKeys, l0Keys)
	compacting = fs.holdCreate()
	done = make(chan error, 1)
	go func() { done <- d.Compact(nil, nil) }()
	<-compacting.reached
	return d, fs, write, compacting, done
}

// inBackground runs f on a goroutine of its own; the channel closes when
// f returns.
func inBackground(f func()) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	return done
}

// waitBudget returns once cond holds of d's filter budget, polled under
// its lock; what names the wait in the failure.
func waitBudget(t *testing.T, d *DB, what string, cond func(*filterBudget) bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		b := &d.filterBudget
		b.mu.Lock()
		ok := cond(b)
		b.mu.Unlock()
		if ok {
			return
		}
	}
	t.Fatalf("%s: not after 10 s", what)
}

// flushChosen: a flush's table has its filter chosen.
func flushChosen(b *filterBudget) bool {
	for _, p := range b.pending {
		if p.job.level == 0 && len(p.job.inputs) == 0 {
			return true
		}
	}
	return false
}

// compactionChosen: no compaction is writing tables any more, every table
// it writes has its filter chosen.
func compactionChosen(b *filterBudget) bool {
	for job := range b.active {
		if len(job.inputs) > 0 && job.writtenKeys < job.inputKeys {
			return false
		}
	}
	return true
}

// newestL0 is the L0 table with the highest file number.
func newestL0(t *testing.T, d *DB) TableInfo {
	t.Helper()
	ts := mustTables(t, d)
	var newest TableInfo
	for _, ti := range ts {
		if ti.Level == 0 && ti.FileNum > newest.FileNum {
			newest = ti
		}
	}
	if newest.FileNum == 0 {
		t.Fatal("no L0 table")
	}
	return newest
}

// TestMonkeyFlushDuringCompactionGetsItsShare is the regression test for
// an L0 table written while a compaction of L0 into the bottom level was
// in flight. The flush saw the compaction's inputs where they were, four
// L0 tables beside it and a bottom level without their keys, and sized
// its filter for that shape; the filter lives in the tree the compaction
// leaves, one L0 table over a bottom holding those keys too, where
// Monkey's share for it is larger. It got an 11-bit Ribbon where the same
// flush written after the compaction gets a 12-bit one.
//
// It also covers the moment between a compaction's last table and its
// edit's install: the compaction no longer counted as writing, so its
// built tables were counted as spent while its inputs, still in the
// version, were counted too, and the flush found the budget spent: a
// 1-bit Bloom filter (FP 0.63).
func TestMonkeyFlushDuringCompactionGetsItsShare(t *testing.T) {
	const bottomKeys, l0Keys, flushKeys = 8000, 8000, 2000

	// The reference: the same flush once the compaction has landed.
	ref, write := inflightTree(t, vfs.NewMem(), bottomKeys, l0Keys)
	defer ref.Close()
	if err := ref.Compact(nil, nil); err != nil {
		t.Fatal(err)
	}
	write(flushKeys)
	want := newestL0(t, ref)
	checkBudget(t, ref, "reference")

	for _, hold := range []string{"while writing", "while installing"} {
		t.Run(hold, func(t *testing.T) {
			d, fs, write, compacting, done := heldCompaction(t, bottomKeys, l0Keys)
			defer d.Close()
			switch hold {
			case "while writing":
				// The compaction waits to create its first table.
				write(flushKeys)
			case "while installing":
				// The flush waits to create its table while the
				// compaction writes its tables and logs its edit; it
				// chooses its filter while the edit's MANIFEST sync
				// waits (holding d.mu, so the flush's install waits too).
				flushing := fs.holdCreate()
				flushed := inBackground(func() { write(flushKeys) })
				<-flushing.reached
				installing := fs.holdManifestSync()
				close(compacting.release)
				<-installing.reached
				close(flushing.release)
				// The flush's filter is chosen before it needs d.mu.
				waitBudget(t, d, "the flush choosing its filter", flushChosen)
				close(installing.release)
				<-flushed
			}
			if hold == "while writing" {
				close(compacting.release)
			}
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			got := newestL0(t, d)
			checkBudget(t, d, hold)
			t.Logf("flush %s: %s %.2f bits per key, FP %.5f; after the compaction: %s %.2f, FP %.5f",
				hold, got.FilterKind, got.FilterBitsPerKey(), got.FilterFP, want.FilterKind, want.FilterBitsPerKey(), want.FilterFP)
			if got.FilterFP > want.FilterFP*1.01 {
				t.Fatalf("a flush %s a compaction got %s (%.2f bits per key, FP %.5f); the same flush after it gets %s (%.2f, FP %.5f)",
					hold, got.FilterKind, got.FilterBitsPerKey(), got.FilterFP, want.FilterKind, want.FilterBitsPerKey(), want.FilterFP)
			}
		})
	}
}

// TestMonkeyCompactionDuringFlushInstallKeepsItsShare is the regression
// test for a compaction writing while a flush's table was built but not
// yet in the version: the budget counted that table's filter as spent but
// not its keys, so the budget those keys bring was missing, and the
// compaction's last tables were cut to pay for it (here 7.2 bits per key
// against 9.3; in kvbench's quick fill L6 tables at 1 to 8.6 bits per key
// against a share of 9.7). The compaction's tables must get what they get
// with no flush at all, the flush's table paying for itself.
func TestMonkeyCompactionDuringFlushInstallKeepsItsShare(t *testing.T) {
	const bottomKeys, l0Keys, flushKeys = 8000, 8000, 8000
	outputs := func(d *DB) (bits []float64) {
		ts := mustTables(t, d)
		for _, ti := range ts {
			if ti.Level == NumLevels-1 {
				bits = append(bits, ti.FilterBitsPerKey())
			}
		}
		return bits
	}

	ref, _ := inflightTree(t, vfs.NewMem(), bottomKeys, l0Keys)
	defer ref.Close()
	if err := ref.Compact(nil, nil); err != nil {
		t.Fatal(err)
	}
	want := outputs(ref)

	// The compaction waits to create its first table, the flush then
	// builds its table and waits in its edit's MANIFEST sync, and the
	// compaction writes its tables meanwhile.
	d, fs, write, compacting, done := heldCompaction(t, bottomKeys, l0Keys)
	defer d.Close()
	installing := fs.holdManifestSync()
	flushed := inBackground(func() { write(flushKeys) })
	<-installing.reached
	close(compacting.release)
	waitBudget(t, d, "the compaction choosing its filters", compactionChosen)
	close(installing.release)
	<-flushed
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	checkBudget(t, d, "after the compaction")
	got := outputs(d)
	t.Logf("bottom tables' bits per key: %.2f with a flush installing, %.2f with none", got, want)
	if slices.Min(got) < slices.Min(want)-0.01 {
		t.Fatalf("a compaction written while a flush installed got %.2f bits per key in its tables; with no flush, %.2f", got, want)
	}
}
