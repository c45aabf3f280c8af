package kv

import (
	"bytes"
	"errors"
	"fmt"
	"math/bits"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/sievekv/sievekv/internal/base"
	"github.com/sievekv/sievekv/internal/rangedel"
	"github.com/sievekv/sievekv/vfs"
)

// scanCover is what a memtable's cover must answer, from rangedel's R1.
func scanCover(ts []rangedel.Tombstone, key []byte, readSeq base.SeqNum) base.SeqNum {
	var best base.SeqNum
	for _, t := range ts {
		if t.Seq <= readSeq && t.Seq > best && t.Covers(key, 0) {
			best = t.Seq
		}
	}
	return best
}

// TestMemRangeDelIndexMatchesScan adds random overlapping tombstones to a
// memRangeDels a few at a time, with lookups between the additions (so
// the index is extended many times), and checks every lookup, at every
// read sequence number, against a scan of the list, and the index's
// shape: its runs tile the list in order, each more than twice the size
// of the next (K13), so there are at most log2(n)+1.
func TestMemRangeDelIndexMatchesScan(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	key := func() []byte { return fmt.Appendf(nil, "%03d", r.IntN(300)) }
	for round := range 20 {
		var m memRangeDels
		var seq base.SeqNum
		for range 60 {
			for range 1 + r.IntN(8) {
				s, e := key(), key()
				if c := bytes.Compare(s, e); c == 0 {
					continue
				} else if c > 0 {
					s, e = e, s
				}
				seq += base.SeqNum(1 + r.IntN(3)) // point writes take numbers too
				m.add(s, e, seq)
			}
			idx := m.indexed()
			list := m.all()
			if idx.n != len(list) {
				t.Fatalf("round %d: index holds %d of %d tombstones", round, idx.n, len(list))
			}
			from := 0
			for i, run := range idx.runs {
				if run.from != from || run.to <= run.from || run.set.Len() != run.to-run.from {
					t.Fatalf("round %d: run %d is [%d, %d), want it to start at %d", round, i, run.from, run.to, from)
				}
				if i > 0 && 2*(run.to-run.from) >= idx.runs[i-1].to-idx.runs[i-1].from {
					t.Fatalf("round %d: run %d (%d tombstones) is not less than half of run %d's %d (K13)", round, i, run.to-run.from, i-1, idx.runs[i-1].to-idx.runs[i-1].from)
				}
				from = run.to
			}
			if from != len(list) || len(idx.runs) > bits.Len(uint(len(list))) {
				t.Fatalf("round %d: %d runs over %d of %d tombstones", round, len(idx.runs), from, len(list))
			}
			for range 50 {
				k := key()
				if r.IntN(3) == 0 {
					k = append(k, 'x')
				}
				rs := base.SeqNum(r.IntN(int(seq) + 2))
				if got, want := m.cover(k, rs), scanCover(list, k, rs); got != want {
					t.Fatalf("round %d: cover(%q, %d) = %d, want %d", round, k, rs, got, want)
				}
				floor := base.SeqNum(r.IntN(int(seq) + 1))
				want := scanCover(list, k, rs)
				if want <= floor {
					want = 0
				}
				if got := idx.coverAbove(k, rs, floor); got != want {
					t.Fatalf("round %d: coverAbove(%q, %d, %d) = %d, want %d", round, k, rs, floor, got, want)
				}
			}
		}
	}
	var empty memRangeDels
	if empty.indexed() != nil || empty.cover([]byte("a"), base.SeqNumMax) != 0 {
		t.Fatal("a memtable without range tombstones must have no index and no cover")
	}
}

// TestDeleteRangeManyInMemtable runs random point writes, hundreds of
// overlapping range deletions (alone and in batches), snapshots and
// long-lived iterators against the plain model with every write still in
// the mutable memtable, where the range tombstones are answered by the
// memtable's index (K13) rather than a table's block.
func TestDeleteRangeManyInMemtable(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	d, err := Open("db", &Options{FS: vfs.NewMem(), MemTableSize: 64 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	var keys []string
	for i := range 200 {
		keys = append(keys, rdKey(i))
	}
	key := func() string { return keys[r.IntN(len(keys))] + string(rune('a' + r.IntN(2)))[:r.IntN(2)] }
	type pinned struct {
		s  *Snapshot
		it *Iterator // made when the snapshot was taken, walked later
		m  rdModel
	}
	var pins []pinned
	m := rdModel{}
	tombstones := 0
	deleteRange := func(b *Batch) {
		a, c := key(), key()
		if a == c {
			return
		}
		if a > c {
			a, c = c, a
		}
		if b != nil {
			b.DeleteRange([]byte(a), []byte(c))
		} else if err := d.DeleteRange([]byte(a), []byte(c), NoSync); err != nil {
			t.Fatal(err)
		}
		m.deleteRange(a, c)
		tombstones++
	}
	for step := range 3000 {
		switch op := r.IntN(100); {
		case op < 50:
			k, v := key(), fmt.Sprintf("v%d", step)
			if err := d.Set([]byte(k), []byte(v), NoSync); err != nil {
				t.Fatal(err)
			}
			m[k] = v
		case op < 55:
			k := key()
			if err := d.Delete([]byte(k), NoSync); err != nil {
				t.Fatal(err)
			}
			delete(m, k)
		case op < 80:
			deleteRange(nil)
		case op < 85:
			b := d.NewBatch()
			for range 1 + r.IntN(4) {
				if r.IntN(2) == 0 {
					deleteRange(b)
				} else {
					k, v := key(), fmt.Sprintf("b%d", step)
					b.Set([]byte(k), []byte(v))
					m[k] = v
				}
			}
			if err := d.Apply(b, NoSync); err != nil {
				t.Fatal(err)
			}
		case op < 88:
			s := d.NewSnapshot()
			pins = append(pins, pinned{s: s, it: s.NewIter(nil), m: m.clone()})
		case op < 90 && len(pins) > 0:
			i := r.IntN(len(pins))
			p := pins[i]
			checkIterFromStart(t, fmt.Sprintf("step %d: iterator pinned", step), p.it, p.m)
			checkAgainst(t, fmt.Sprintf("step %d: snapshot", step), p.s, p.m, keys, "", "")
			p.s.Close()
			pins = append(pins[:i], pins[i+1:]...)
		case op < 96:
			for range 20 {
				k := key()
				v, err := d.Get([]byte(k))
				want, ok := m[k]
				if ok != (err == nil) || (ok && string(v) != want) || (!ok && !errors.Is(err, ErrNotFound)) {
					t.Fatalf("step %d: Get(%s) = %q, %v; want %q, %v", step, k, v, err, want, ok)
				}
			}
		default:
			lo, hi := key(), key()
			if lo > hi {
				lo, hi = hi, lo
			}
			checkAgainst(t, fmt.Sprintf("step %d", step), d, m, keys, lo, hi)
		}
	}
	for _, p := range pins {
		checkIterFromStart(t, "end: iterator pinned", p.it, p.m)
		p.s.Close()
	}
	rs, err := d.loadReadState()
	if err != nil {
		t.Fatal(err)
	}
	defer rs.unref()
	if len(rs.imm) != 0 || len(rs.v.Levels[0]) != 0 || int(rs.mem.rangeDels.n.Load()) != tombstones || tombstones < 500 {
		t.Fatalf("want all %d tombstones (>= 500) in the mutable memtable: %d there, %d immutable memtables, %d L0 tables",
			tombstones, rs.mem.rangeDels.n.Load(), len(rs.imm), len(rs.v.Levels[0]))
	}
	checkAgainst(t, "end", d, m, keys, "", "")
}

// checkIterFromStart walks it forward from First, then closes it, and
// compares what it saw with m.
func checkIterFromStart(t *testing.T, what string, it *Iterator, m rdModel) {
	t.Helper()
	n := 0
	for ok := it.First(); ok; ok = it.Next() {
		if want, ok := m[string(it.Key())]; !ok || want != string(it.Value()) {
			t.Fatalf("%s: %s=%s, model has %q, %v", what, it.Key(), it.Value(), want, ok)
		}
		n++
	}
	if err := it.Close(); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if n != len(m) {
		t.Fatalf("%s: saw %d keys, model has %d", what, n, len(m))
	}
}

// TestDeleteRangeConcurrentWithReads runs one writer range-deleting the
// even keys of a memtable one by one, in order, against readers doing
// Gets, snapshot Gets and scans, so readers extend the memtable's index
// while the commit path appends to its list (run it with -race). Each
// read must see a consistent state: every odd key, and the even keys
// from some point on, as one prefix of the deletions would leave.
func TestDeleteRangeConcurrentWithReads(t *testing.T) {
	const n = 400
	d, err := Open("db", &Options{FS: vfs.NewMem(), MemTableSize: 64 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	for i := range n {
		if err := d.Set([]byte(rdKey(i)), []byte("v"), NoSync); err != nil {
			t.Fatal(err)
		}
	}
	// check reads every key of one consistent view: the odd keys all
	// present, the even ones deleted up to some key and present from it.
	check := func(what string, present func(i int) (bool, error)) error {
		gap := -1 // first even key seen present
		for i := range n {
			ok, err := present(i)
			if err != nil {
				return fmt.Errorf("%s: key %d: %w", what, i, err)
			}
			switch {
			case i%2 == 1 && !ok:
				return fmt.Errorf("%s: odd key %d missing", what, i)
			case i%2 == 0 && ok && gap < 0:
				gap = i
			case i%2 == 0 && !ok && gap >= 0:
				return fmt.Errorf("%s: even key %d deleted after %d present: not a prefix of the deletions", what, i, gap)
			}
		}
		return nil
	}
	var wg sync.WaitGroup
	done := make(chan struct{})
	errs := make(chan error, 4)
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(done)
		for i := 0; i < n; i += 2 {
			if err := d.DeleteRange([]byte(rdKey(i)), []byte(rdKey(i+1)), NoSync); err != nil {
				errs <- err
				return
			}
		}
	}()
	for reader := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for rounds := 0; ; rounds++ {
				select {
				case <-done:
					if rounds > 0 {
						return
					}
				default:
				}
				var err error
				switch reader {
				case 0:
					// The latest state, even keys downwards: the writer
					// deletes upwards, so once a key reads deleted every
					// lower even key must too, however far it got since.
					deletedAt := -1
					for i := n - 1; i >= 0 && err == nil; i-- {
						_, gerr := d.Get([]byte(rdKey(i)))
						switch {
						case gerr != nil && !errors.Is(gerr, ErrNotFound):
							err = gerr
						case i%2 == 1 && gerr != nil:
							err = fmt.Errorf("Get: odd key %d missing", i)
						case i%2 == 0 && gerr == nil && deletedAt >= 0:
							err = fmt.Errorf("Get: even key %d present after %d read deleted", i, deletedAt)
						case i%2 == 0 && gerr != nil && deletedAt < 0:
							deletedAt = i
						}
					}
				case 1:
					s := d.NewSnapshot()
					err = check("snapshot", func(i int) (bool, error) {
						_, gerr := s.Get([]byte(rdKey(i)))
						if errors.Is(gerr, ErrNotFound) {
							return false, nil
						}
						return gerr == nil, gerr
					})
					s.Close()
				case 2:
					it := d.NewIter(nil)
					seen := map[int]bool{}
					for ok := it.First(); ok; ok = it.Next() {
						var i int
						fmt.Sscanf(string(it.Key()), "k%d", &i)
						seen[i] = true
					}
					if cerr := it.Close(); cerr != nil {
						err = cerr
					} else {
						err = check("scan", func(i int) (bool, error) { return seen[i], nil })
					}
				}
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if err := check("final", func(i int) (bool, error) {
		_, err := d.Get([]byte(rdKey(i)))
		if errors.Is(err, ErrNotFound) {
			return false, nil
		}
		return err == nil, err
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Get([]byte(rdKey(n - 2))); !errors.Is(err, ErrNotFound) {
		t.Fatalf("last even key after every deletion: %v, want not found", err)
	}
}
