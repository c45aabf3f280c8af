package main

// The bounded-scan workloads: scanempty (ranges of 1 to 400 ids holding no
// key, the case range filters are for) and scanshort (short ranges that
// hold keys, where a range filter must cost nothing). They load a DB of
// their own with keys as users write them, user%08d ids with holes, shaped
// as an LSM in use: most data in the bottom level, some in a middle level,
// the newest in L0.

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"

	"github.com/cockroachdb/pebble/v2"
	ldbutil "github.com/syndtr/goleveldb/leveldb/util"

	"github.com/sievekv/sievekv/kv"
)

// scanWidths are the id widths of the ranges scanempty and scanshort ask.
var scanWidths = []int{1, 9, 180, 400}

// isScanWorkload reports whether w is one of the bounded-scan workloads.
func isScanWorkload(w string) bool { return w == "scanempty" || w == "scanshort" }

// boundedScanner is an engine that scans [lo, hi) with an iterator bounded
// to it: the way an application asks "anything in this range?".
type boundedScanner interface {
	scanBounded(lo, hi []byte, n int) (int, error)
}

func (e *sieveEngine) scanBounded(lo, hi []byte, n int) (int, error) {
	it := e.db.NewIter(&kv.IterOptions{LowerBound: lo, UpperBound: hi})
	got := 0
	for ok := it.First(); ok && got < n; ok = it.Next() {
		got++
	}
	return got, it.Close()
}

func (e *pebbleEngine) scanBounded(lo, hi []byte, n int) (int, error) {
	it, err := e.db.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: hi})
	if err != nil {
		return 0, err
	}
	got := 0
	for ok := it.First(); ok && got < n; ok = it.Next() {
		got++
	}
	return got, it.Close()
}

func (e *levelEngine) scanBounded(lo, hi []byte, n int) (int, error) {
	it := e.db.NewIterator(&ldbutil.Range{Start: lo, Limit: hi}, nil)
	got := 0
	for ok := it.First(); ok && got < n; ok = it.Next() {
		got++
	}
	it.Release()
	return got, it.Error()
}

// idSet is the scan workloads' key set: n ids in runs of up to 500 with
// every other id kept, then holes of up to 1000 ids.
type idSet struct {
	ids  []int // sorted
	span int
}

func newIDSet(seed uint64, n int) *idSet {
	rng := rand.New(rand.NewPCG(seed, 0x1d5))
	s := &idSet{}
	for id := 0; len(s.ids) < n; {
		for end := id + 1 + rng.IntN(500); id < end && len(s.ids) < n; id++ {
			if rng.IntN(2) == 0 {
				s.ids = append(s.ids, id)
			}
		}
		id += 1 + rng.IntN(1000)
	}
	s.span = s.ids[len(s.ids)-1] + 1
	return s
}

func idKeyOf(id int) []byte { return fmt.Appendf(nil, "user%08d", id) }

// anyIn reports whether an id lies in [lo, hi).
func (s *idSet) anyIn(lo, hi int) bool {
	i, _ := slices.BinarySearch(s.ids, lo)
	return i < len(s.ids) && s.ids[i] < hi
}

// loadIDs writes the ids into r's engine as an LSM in use: 70% (every id
// but those of the last three tenths by a hash) compacted to the bottom,
// 20% flushed and left to the engine's compactions, 10% flushed into L0.
//
// The tree it leaves is a function of the data alone, so that two DBs of
// one engine with different table options (sievekv and sievekv-rf) scan
// the same tables: the last two parts go in flushes of at most half a
// memtable (no memtable fills on its own), each waited on until the
// engine is quiet, so every compaction the engine picks sees the same
// tables whatever the machine's timing. Writes racing background
// compactions made the two DBs end differently at 1M keys (one with 20%
// more table reads per scan).
func loadIDs(r *runner, s *idSet, memTableSize int) error {
	val := make([]byte, r.valueSize)
	part := func(id int) int {
		switch h := (uint32(id) * 2654435761) >> 24 % 10; {
		case h < 7:
			return 0
		case h < 9:
			return 1
		}
		return 2
	}
	perFlush := quietFlushKeys(memTableSize, len(idKeyOf(0)), r.valueSize)
	for p := 0; p < 3; p++ {
		unflushed := 0
		for i, id := range s.ids {
			if part(id) != p {
				continue
			}
			if err := r.eng.set(idKeyOf(id), valueFor(val, i)); err != nil {
				return err
			}
			if unflushed++; p > 0 && unflushed == perFlush {
				if err := flushQuiet(r); err != nil {
					return err
				}
				unflushed = 0
			}
		}
		var err error
		switch {
		case p == 0:
			err = r.eng.compactAll()
		case unflushed > 0:
			err = flushQuiet(r)
		}
		if err != nil {
			return err
		}
	}
	r.live = len(s.ids)
	return nil
}

// quietFlushKeys is how many entries of the given sizes fill at most half
// a memtable, even with an engine's per-entry overhead (taken as 64 bytes,
// more than sievekv's or Pebble's), so that only explicit flushes make
// tables.
func quietFlushKeys(memTableSize, keySize, valueSize int) int {
	return max(1, memTableSize/2/(keySize+valueSize+64))
}

// flushQuiet flushes r's memtable and waits until no flush or compaction
// runs, so the next write finds the engine's tree settled.
func flushQuiet(r *runner) error {
	if err := r.eng.flush(); err != nil {
		return err
	}
	return settle(r)
}

// scanPhase is the timed loop of scanempty or scanshort over s.
func scanPhase(w string, r *runner, s *idSet, ops int, seed uint64) (phaseSpec, error) {
	sc, ok := r.eng.(boundedScanner)
	if !ok {
		return phaseSpec{}, fmt.Errorf("engine %s has no bounded scan", r.name)
	}
	empty := w == "scanempty"
	// The ranges are drawn before the clock starts: ops of each width.
	mk := func(salt uint64, count int) ([][2][]byte, error) {
		rng := rand.New(rand.NewPCG(seed, salt))
		out := make([][2][]byte, 0, count)
		for tries := 0; len(out) < count; tries++ {
			if tries > 100*count {
				return nil, fmt.Errorf("%s: too few ranges of the wanted kind", w)
			}
			width := scanWidths[len(out)%len(scanWidths)]
			lo := rng.IntN(s.span)
			if !empty {
				lo = s.ids[rng.IntN(len(s.ids))] // starts at a key: never empty
			}
			if s.anyIn(lo, lo+width) == empty {
				continue
			}
			out = append(out, [2][]byte{idKeyOf(lo), idKeyOf(lo + width)})
		}
		return out, nil
	}
	timed, err := mk(100, ops)
	if err != nil {
		return phaseSpec{}, err
	}
	warm, err := mk(101, min(ops/10, 20000))
	if err != nil {
		return phaseSpec{}, err
	}
	op := func(rs [][2][]byte) opFunc {
		return func(i int) (int64, bool, error) {
			q := rs[i%len(rs)]
			got, err := sc.scanBounded(q[0], q[1], scanLength)
			return 0, got > 0, err
		}
	}
	want := wantAll
	if empty {
		want = wantNone
	}
	return phaseSpec{workload: w, ops: ops, warmup: op(warm), op: op(timed), wantFound: want}, nil
}

// runScanWorkload loads a fresh DB of r's engine with the id keys,
// measures w on it and removes it.
func runScanWorkload(r *runner, w string, fl *flags, root string, progress io.Writer) ([]result, error) {
	if r.open == nil {
		return nil, nil // a view of another engine's DB: nothing of its own to load
	}
	fr, p, done, err := loadScanDB(r, w, fl, root)
	if err != nil {
		return nil, err
	}
	return measureFresh(fr, p, done, progress)
}

// loadScanDB opens a fresh DB of r's engine for w, loads the id keys into
// it and draws w's ranges. done closes the DB and removes it.
func loadScanDB(r *runner, w string, fl *flags, root string) (*runner, phaseSpec, func() error, error) {
	fr, done, err := openFresh(r, w, root, r.open)
	if err != nil {
		return nil, phaseSpec{}, nil, err
	}
	s := newIDSet(fl.seed, fl.n)
	if err := loadIDs(fr, s, fl.memTable); err != nil {
		done()
		return nil, phaseSpec{}, nil, fmt.Errorf("load: %w", err)
	}
	if err := scanTrees.check(fr, w); err != nil {
		done()
		return nil, phaseSpec{}, nil, err
	}
	p, err := scanPhase(w, fr, s, fl.ops, fl.seed)
	if err != nil {
		done()
		return nil, phaseSpec{}, nil, err
	}
	return fr, p, done, nil
}

// scanKeysDescription is the header line for the scan workloads.
func scanKeysDescription(fl *flags) string {
	var b bytes.Buffer
	fmt.Fprintf(&b, "scanempty/scanshort: a DB of their own per engine, %d keys user%%08d (runs of up to 500 ids, every other kept, holes up to 1000), "+
		"70%% compacted to the bottom, 20%% flushed then compacted by the engine, 10%% flushed last (both in flushes of at most half a memtable, each waited on until the engine is quiet, "+
		"so the tree is a function of the data: the sievekv DBs are checked to hold the same tables, listed under each workload); bounded iterators over ranges of %v ids, "+
		"empty (scanempty) or starting at a key (scanshort, up to %d entries read); sievekv-rf is sievekv with RangeFilterBitsPerKey %g\n",
		fl.n, scanWidths, scanLength, fl.rangeFilterBits)
	return b.String()
}
