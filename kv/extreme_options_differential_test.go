package kv

import (
	"bytes"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"testing"
	"time"

	"github.com/sievekv/sievekv/vfs"
)

// extremeOptions draws options at the edges a careless caller reaches:
// the smallest memtable, the smallest blocks, no cache, L0 thresholds of
// 1, output tables of one byte, tiny tombstone ages, range filters, no
// WAL.
func extremeOptions(rng *rand.Rand, fs vfs.FS) *Options {
	o := &Options{FS: fs, MemTableSize: minMemTableSize << rng.IntN(3), BlockSize: 256,
		BlockCacheSize: -1, IdlePurgeMinShare: 1e-9}
	if rng.IntN(2) == 0 {
		o.RangeFilterBitsPerKey = 3 + float64(rng.IntN(46))
	}
	if rng.IntN(2) == 0 {
		o.L0CompactionThreshold, o.L0SlowdownWritesThreshold, o.L0StopWritesThreshold = 1, 1, 1+rng.IntN(2)
	}
	if rng.IntN(2) == 0 {
		o.TargetFileSize, o.LBaseMaxBytes = 1, 1
	}
	if rng.IntN(2) == 0 {
		o.TombstoneMaxAge = time.Duration(1+rng.IntN(3)) * time.Millisecond
	}
	if rng.IntN(3) == 0 {
		o.DisableAutomaticCompactions = true
	}
	if rng.IntN(2) == 0 {
		o.FilterBitsPerKey = []float64{1, 64}[rng.IntN(2)]
	}
	if rng.IntN(2) == 0 {
		o.MaxOpenFiles = minMaxOpenFiles
	}
	if rng.IntN(4) == 0 {
		o.DisableWAL = true // Close flushes, so reopens keep everything
	}
	if rng.IntN(4) == 0 {
		o.Filter = FilterTypes()[rng.IntN(len(FilterTypes()))]
	}
	return o
}

// TestExtremeOptionsDifferential runs batches mixing Sets, Deletes and
// DeleteRanges of the same keys (a write and a range over it in one
// batch, in either order), flushes, compactions, snapshots, checkpoints
// and reopens, under extreme options, and compares every Get, snapshot
// read and iterator step with a map model.
func TestExtremeOptionsDifferential(t *testing.T) {
	seeds := 24
	if raceEnabled {
		seeds = 6
	}
	runExtremeSeeds(t, seeds, 30)
}

// TestExtremeOptionsSoak is the long form, for make soak (SIEVEKV_SOAK).
func TestExtremeOptionsSoak(t *testing.T) {
	skipUnlessSoak(t)
	runExtremeSeeds(t, 100, 300)
}

func skipUnlessSoak(t *testing.T) {
	if os.Getenv("SIEVEKV_SOAK") == "" {
		t.Skip("a long randomized run: set SIEVEKV_SOAK=1 (make soak)")
	}
}

func runExtremeSeeds(t *testing.T, seeds, rounds int) {
	for seed := uint64(1); seed <= uint64(seeds); seed++ {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) { runExtremeOptions(t, seed, rounds) })
	}
}

func runExtremeOptions(t *testing.T, seed uint64, rounds int) {
	rng := rand.New(rand.NewPCG(seed, 11))
	fs := vfs.NewMem()
	opts := extremeOptions(rng, fs)
	d, err := Open("db", opts)
	if err != nil {
		t.Fatalf("seed %d: %+v: %v", seed, opts, err)
	}
	defer func() { d.Close() }()
	pool := oddKeyPool(rng, 24)
	key := func() []byte { return pool[rng.IntN(len(pool))] }
	model := map[string]string{}
	type snap struct {
		s     *Snapshot
		model map[string]string
	}
	var snaps []snap
	checkpoints := 0
	fail := func(format string, args ...any) {
		t.Helper()
		t.Fatalf("seed %d (%+v): %s", seed, *opts, fmt.Sprintf(format, args...))
	}
	for round := 0; round < rounds; round++ {
		b := d.NewBatch()
		next := maps.Clone(model)
		for n := 1 + rng.IntN(6); n > 0; n-- {
			k := key()
			switch r := rng.IntN(10); {
			case r < 5:
				v := fmt.Sprintf("v%d.%d.%s", round, n, bytes.Repeat([]byte{'x'}, rng.IntN(300)))
				b.Set(k, []byte(v))
				next[string(k)] = v
			case r < 7:
				b.Delete(k)
				delete(next, string(k))
			default:
				e := key()
				if c := bytes.Compare(k, e); c > 0 {
					k, e = e, k
				} else if c == 0 {
					continue
				}
				b.DeleteRange(k, e)
				for mk := range next {
					if mk >= string(k) && mk < string(e) {
						delete(next, mk)
					}
				}
			}
		}
		if err := d.Apply(b, NoSync); err != nil {
			fail("round %d Apply: %v", round, err)
		}
		model = next
		switch rng.IntN(9) {
		case 0:
			if err := d.Flush(); err != nil {
				fail("Flush: %v", err)
			}
		case 1:
			if err := d.Compact(nil, nil); err != nil {
				fail("Compact: %v", err)
			}
		case 2:
			lo, hi := key(), key()
			if bytes.Compare(lo, hi) > 0 {
				lo, hi = hi, lo
			}
			if err := d.Compact(lo, hi); err != nil {
				fail("Compact: %v", err)
			}
		case 3:
			snaps = append(snaps, snap{d.NewSnapshot(), maps.Clone(model)})
		case 4:
			if len(snaps) > 0 {
				i := rng.IntN(len(snaps))
				if err := snaps[i].s.Close(); err != nil {
					fail("snapshot Close: %v", err)
				}
				snaps = append(snaps[:i], snaps[i+1:]...)
			}
		case 5:
			checkpoints++
			dir := fmt.Sprintf("ckpt%d", checkpoints)
			if err := d.Checkpoint(dir); err != nil {
				fail("Checkpoint: %v", err)
			}
			co := *opts
			c, err := Open(dir, &co)
			if err != nil {
				fail("open checkpoint: %v", err)
			}
			checkExtremeModel(t, seed, rng, c.Get, c.NewIter, model)
			if err := c.Close(); err != nil {
				fail("close checkpoint: %v", err)
			}
		case 7:
			if err := d.CompactDue(); err != nil {
				fail("CompactDue: %v", err)
			}
		case 6:
			if rng.IntN(3) == 0 {
				for _, s := range snaps {
					s.s.Close()
				}
				snaps = nil
				if err := d.Close(); err != nil {
					fail("Close: %v", err)
				}
				if rep, err := Check("db", opts); err != nil || len(rep.Problems) > 0 {
					fail("Check: %v %v", err, rep)
				}
				if d, err = Open("db", opts); err != nil {
					fail("reopen: %v", err)
				}
			}
		}
		checkExtremeModel(t, seed, rng, d.Get, d.NewIter, model)
		for _, s := range snaps {
			checkExtremeModel(t, seed, rng, s.s.Get, s.s.NewIter, s.model)
		}
	}
}

// checkModel compares every pool key's Get and a few random iterator
// walks over get and newIter with model.
func checkExtremeModel(t *testing.T, seed uint64, rng *rand.Rand, get func([]byte) ([]byte, error),
	newIter func(*IterOptions) *Iterator, model map[string]string) {
	t.Helper()
	for k, v := range model {
		got, err := get([]byte(k))
		if err != nil || string(got) != v {
			t.Fatalf("seed %d: Get(%x) = %.20q, %v; want %.20q", seed, k, got, err, v)
		}
	}
	// A full forward and backward scan must list exactly the model.
	it := newIter(nil)
	var n int
	for ok := it.First(); ok; ok = it.Next() {
		if v, ok := model[string(it.Key())]; !ok || v != string(it.Value()) {
			t.Fatalf("seed %d: scan: %x = %.20q, model has %v %.20q", seed, it.Key(), it.Value(), ok, v)
		}
		n++
	}
	if err := it.Error(); err != nil || n != len(model) {
		t.Fatalf("seed %d: forward scan: %d keys, %v; model %d", seed, n, err, len(model))
	}
	n = 0
	for ok := it.Last(); ok; ok = it.Prev() {
		n++
	}
	if err := it.Close(); err != nil || n != len(model) {
		t.Fatalf("seed %d: backward scan: %d keys, %v; model %d", seed, n, err, len(model))
	}
	for q := 0; q < 3; q++ {
		lower, upper := oddBound(rng), oddBound(rng)
		it := newIter(&IterOptions{LowerBound: lower, UpperBound: upper})
		m := newModelIter(model, lower, upper)
		var trace []string
		for step := 0; step < 10; step++ {
			op, got := positionBoth(rng, rng.IntN(4), it, m, lower, upper)
			trace = append(trace, op)
			for got && m.valid() && rng.IntN(3) > 0 {
				if rng.IntN(2) == 0 {
					trace = append(trace, "Next")
					got = it.Next()
					m.pos++
				} else {
					trace = append(trace, "Prev")
					got = it.Prev()
					m.pos--
				}
				if got != m.valid() || got && string(it.Key()) != m.keys[m.pos] {
					break
				}
			}
			if err := it.Error(); err != nil {
				t.Fatalf("seed %d [%x, %x): %v after %v", seed, lower, upper, err, trace)
			}
			if got != m.valid() || got && (string(it.Key()) != m.keys[m.pos] || string(it.Value()) != model[m.keys[m.pos]]) {
				var gk, wk string
				if got {
					gk = fmt.Sprintf("%x", it.Key())
				}
				if m.valid() {
					wk = fmt.Sprintf("%x", m.keys[m.pos])
				}
				t.Fatalf("seed %d [%x, %x): after %v got %v %s, want %v %s", seed, lower, upper, trace, got, gk, m.valid(), wk)
			}
		}
		if err := it.Close(); err != nil {
			t.Fatalf("seed %d: iterator Close: %v", seed, err)
		}
	}
}
