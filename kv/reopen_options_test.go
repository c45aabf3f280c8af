package kv

import (
	"bytes"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"slices"
	"testing"

	"github.com/sievekv/sievekv/vfs"
)

// reopenVariants are the changes a user may make to Options between two
// Opens of one DB: another filter, filter budget or range filter, table
// and level sizes, a memtable smaller than what the WAL replays, the WAL
// or the tombstone index toggled, tiny descriptor and cache limits.
var reopenVariants = map[string]func(o *Options){
	"bloom":    func(o *Options) { o.Filter = FilterBloom },
	"none":     func(o *Options) { o.Filter = FilterNone },
	"xor8":     func(o *Options) { o.Filter = FilterXor8 },
	"ribbon1":  func(o *Options) { o.Filter = FilterRibbon; o.RibbonBits = 1 },
	"fuse16":   func(o *Options) { o.Filter = FilterBinaryFuse16 },
	"blocked1": func(o *Options) { o.Filter = FilterBlockedBloom; o.BloomBitsPerKey = 1 },
	"bits1":    func(o *Options) { o.FilterBitsPerKey = 1 },
	"bits64":   func(o *Options) { o.FilterBitsPerKey = 64 },
	"uniform":  func(o *Options) { o.FilterAllocation = FilterAllocationUniform },
	"rangeoff": func(o *Options) { o.RangeFilterBitsPerKey = 0 },
	"range48":  func(o *Options) { o.RangeFilterBitsPerKey = 48 },
	"block1m":  func(o *Options) { o.BlockSize = 1 << 20 },
	"target1":  func(o *Options) { o.TargetFileSize = 1 },
	"lbase1":   func(o *Options) { o.LBaseMaxBytes = 1 },
	"l0one": func(o *Options) {
		o.L0CompactionThreshold, o.L0SlowdownWritesThreshold, o.L0StopWritesThreshold = 1, 1, 1
	},
	"memmin":     func(o *Options) { o.MemTableSize = minMemTableSize },
	"membig":     func(o *Options) { o.MemTableSize = 64 << 20 },
	"nowal":      func(o *Options) { o.DisableWAL = true },
	"notombidx":  func(o *Options) { o.DisableTombstoneIndex = true },
	"tombage1":   func(o *Options) { o.TombstoneMaxAge = 1 },
	"maxopen16":  func(o *Options) { o.MaxOpenFiles = 16 },
	"nocache":    func(o *Options) { o.BlockCacheSize = -1 },
	"noauto":     func(o *Options) { o.DisableAutomaticCompactions = true },
	"defaults":   func(o *Options) { *o = Options{FS: o.FS} },
	"tombageneg": func(o *Options) { o.TombstoneMaxAge = -1 },
}

// reopenVariantsShort are the variants make test runs; make soak runs
// every one (TestReopenWithOtherOptionsSoak).
var reopenVariantsShort = []string{"memmin", "nowal", "xor8"}

// TestReopenWithOtherOptionsMatchesModel opens a DB holding several
// levels, tombstones, range deletions and unflushed WAL records with
// other Options than it was written with: every read (Gets, scans both
// ways, bounded iterators, a snapshot held across writes and compactions)
// must match a map model, as must a checkpoint taken before, opened with
// the new options; Check must pass under both option sets, and the DB
// must reopen with the first ones. (A break-it review's harness, 60 cases
// with no defect found; kept so that a change cannot quietly tie a DB to
// the options that wrote it.)
func TestReopenWithOtherOptionsMatchesModel(t *testing.T) {
	reopenWithOtherOptionsCases(t, reopenVariantsShort, []float64{10}, 1500)
}

// TestReopenWithOtherOptionsSoak runs every variant over trees written
// with and without range filters, for make soak (SIEVEKV_SOAK).
func TestReopenWithOtherOptionsSoak(t *testing.T) {
	if os.Getenv("SIEVEKV_SOAK") == "" {
		t.Skip("every variant: set SIEVEKV_SOAK=1 (make soak)")
	}
	reopenWithOtherOptionsCases(t, slices.Sorted(maps.Keys(reopenVariants)), []float64{10, 0}, 4000)
}

// reopenWithOtherOptionsCases runs reopenWithOtherOptions for each named
// variant over trees written with each range filter width.
func reopenWithOtherOptionsCases(t *testing.T, names []string, ranges []float64, batches int) {
	for i, name := range names {
		for _, rangeBits := range ranges {
			t.Run(fmt.Sprintf("%s/range%v", name, rangeBits), func(t *testing.T) {
				reopenWithOtherOptions(t, uint64(i), rangeBits, batches, reopenVariants[name])
			})
		}
	}
}

// reopenWithOtherOptions is one case: the tree is written by batches
// random batches.
func reopenWithOtherOptions(t *testing.T, seed uint64, rangeBits float64, batches int, vary func(*Options)) {
	fs := vfs.NewMem()
	base := Options{FS: fs, MemTableSize: 4 << 10, TargetFileSize: 4 << 10, LBaseMaxBytes: 8 << 10, BlockSize: 256,
		RangeFilterBitsPerKey: rangeBits}
	rng := rand.New(rand.NewPCG(7, seed))
	m := &modelWriter{t: t, rng: rng, keys: oddKeyPool(rng, 60), model: map[string]string{}}
	for range 3000 {
		m.keys = append(m.keys, fmt.Appendf(nil, "key%05d", rng.IntN(100000)))
	}
	d, err := Open("db", &base)
	if err != nil {
		t.Fatal(err)
	}
	m.write(d, batches, 60)
	if err := d.CompactDue(); err != nil {
		t.Fatal(err)
	}
	m.write(d, 100, 0) // left in the WAL
	m.check(d, "as written")
	if err := d.Checkpoint("ckpt"); err != nil {
		t.Fatal(err)
	}
	atCheckpoint := maps.Clone(m.model)
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}

	other := base
	vary(&other)
	if d, err = Open("db", &other); err != nil {
		t.Fatalf("reopen with other options: %v", err)
	}
	m.check(d, "reopened with other options")
	c, err := Open("ckpt", &other)
	if err != nil {
		t.Fatalf("open the checkpoint with other options: %v", err)
	}
	checkExtremeModel(t, 9, rng, c.Get, c.NewIter, atCheckpoint)
	if err := c.Compact(nil, nil); err != nil {
		t.Fatal(err)
	}
	checkExtremeModel(t, 9, rng, c.Get, c.NewIter, atCheckpoint)
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}

	snap := d.NewSnapshot()
	atSnapshot := maps.Clone(m.model)
	m.write(d, 200, 40)
	m.check(d, "written with other options")
	if err := d.CompactDue(); err != nil {
		t.Fatal(err)
	}
	m.check(d, "after CompactDue")
	m.write(d, 50, 0)
	if err := d.Compact(nil, nil); err != nil {
		t.Fatal(err)
	}
	m.check(d, "after Compact")
	checkExtremeModel(t, 3, rng, snap.Get, snap.NewIter, atSnapshot)
	snap.Close()
	m.write(d, 30, 0)
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	for _, o := range []*Options{&other, &base} {
		if rep, err := Check("db", o); err != nil || len(rep.Problems) > 0 {
			t.Fatalf("Check: %v %v", err, rep.Problems)
		}
	}

	if d, err = Open("db", &base); err != nil {
		t.Fatalf("reopen with the first options: %v", err)
	}
	m.check(d, "reopened with the first options")
	m.write(d, 100, 30)
	if err := d.Compact(nil, nil); err != nil {
		t.Fatal(err)
	}
	m.check(d, "compacted with the first options")
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
}

// modelWriter writes random batches of Sets, Deletes and DeleteRanges
// over keys and keeps model, the state they leave.
type modelWriter struct {
	t     *testing.T
	rng   *rand.Rand
	keys  [][]byte
	model map[string]string
	round int
}

// write applies n batches, flushing after every flushEvery-th (0: never).
func (m *modelWriter) write(d *DB, n, flushEvery int) {
	m.t.Helper()
	for i := range n {
		m.round++
		b := d.NewBatch()
		next := maps.Clone(m.model)
		for op := 1 + m.rng.IntN(8); op > 0; op-- {
			k := m.keys[m.rng.IntN(len(m.keys))]
			switch r := m.rng.IntN(10); {
			case r < 6:
				v := fmt.Sprintf("v%d.%d.%s", m.round, op, bytes.Repeat([]byte{'x'}, m.rng.IntN(200)))
				b.Set(k, []byte(v))
				next[string(k)] = v
			case r < 9:
				b.Delete(k)
				delete(next, string(k))
			default:
				end := append(slices.Clone(k), byte(m.rng.IntN(256)))
				b.DeleteRange(k, end)
				for mk := range next {
					if mk >= string(k) && mk < string(end) {
						delete(next, mk)
					}
				}
			}
		}
		if err := d.Apply(b, NoSync); err != nil {
			m.t.Fatalf("Apply: %v", err)
		}
		m.model = next
		if flushEvery > 0 && i%flushEvery == flushEvery-1 {
			if err := d.Flush(); err != nil {
				m.t.Fatal(err)
			}
		}
	}
}

// check holds every read of d against the model.
func (m *modelWriter) check(d *DB, when string) {
	m.t.Helper()
	m.t.Logf("%s: %d keys", when, len(m.model))
	checkExtremeModel(m.t, 0, m.rng, d.Get, d.NewIter, m.model)
}
