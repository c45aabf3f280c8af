package kv

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/sievekv/sievekv/vfs"
)

// iterModel is the sorted key/value pairs an iterator opened at some
// moment must show.
type iterModel struct {
	keys, vals [][]byte
}

func modelOf(m map[string]string, lower, upper []byte) iterModel {
	var md iterModel
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	for _, k := range ks {
		if lower != nil && k < string(lower) || upper != nil && k >= string(upper) {
			continue
		}
		md.keys = append(md.keys, []byte(k))
		md.vals = append(md.vals, []byte(m[k]))
	}
	return md
}

// openIter is one iterator of TestIteratorReuseMatchesModel with what it
// must show and where it stands (pos: -1 before the first key, len after
// the last).
type openIter struct {
	it    *Iterator
	model iterModel
	pos   int
	known bool // pos is meaningful (the iterator has been positioned)
}

// TestIteratorReuseMatchesModel: iterators take their memory from a pool
// that the previous ones, with other bounds, snapshots, memtables and
// table layouts, left behind. Several stay open at once, opened at
// different moments between random writes, deletes, flushes and
// compactions, and every positioning call of each is checked against a
// model of the DB at its opening. State one iterator left in the pooled
// memory (a stale child, bound, heap or buffer) would show as a wrong
// key in another.
func TestIteratorReuseMatchesModel(t *testing.T) {
	for seed := range uint64(4) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 99))
			d := openMem(t, vfs.NewMem(), &Options{MemTableSize: 32 << 10, DisableWAL: true})
			defer d.Close()
			live := map[string]string{}
			key := func() []byte { return []byte(fmt.Sprintf("k%04d", rng.IntN(600))) }
			var open []*openIter
			for step := range 4000 {
				switch r := rng.IntN(100); {
				case r < 45:
					k, v := key(), fmt.Sprintf("v%d-%d", step, rng.IntN(1000))
					if err := d.Set(k, []byte(v), NoSync); err != nil {
						t.Fatal(err)
					}
					live[string(k)] = v
				case r < 55:
					k := key()
					if err := d.Delete(k, NoSync); err != nil {
						t.Fatal(err)
					}
					delete(live, string(k))
				case r < 57:
					if err := d.Flush(); err != nil {
						t.Fatal(err)
					}
				case r < 58:
					if err := d.Compact(nil, nil); err != nil {
						t.Fatal(err)
					}
				case r < 68 && len(open) < 4:
					var o IterOptions
					switch rng.IntN(4) {
					case 1:
						o.LowerBound = key()
					case 2:
						o.LowerBound, o.UpperBound = key(), key()
					case 3:
						o.UpperBound = []byte{} // admits no key
					}
					open = append(open, &openIter{it: d.NewIter(&o), model: modelOf(live, o.LowerBound, o.UpperBound)})
				case r < 75 && len(open) > 0:
					i := rng.IntN(len(open))
					if err := open[i].it.Close(); err != nil {
						t.Fatal(err)
					}
					open = slices.Delete(open, i, i+1)
				default:
					if len(open) > 0 {
						moveAndCheck(t, open[rng.IntN(len(open))], rng, key())
					}
				}
			}
			for _, o := range open {
				if err := o.it.Close(); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

// moveAndCheck makes one random positioning call on o and checks the key,
// value and validity it reports against o's model.
func moveAndCheck(t *testing.T, o *openIter, rng *rand.Rand, target []byte) {
	t.Helper()
	md, n := o.model, len(o.model.keys)
	var got bool
	var op string
	switch c := rng.IntN(6); {
	case c == 0:
		op, got, o.pos = "First", o.it.First(), 0
	case c == 1:
		op, got, o.pos = "Last", o.it.Last(), n-1
	case c == 2:
		op, got = "SeekGE "+string(target), o.it.SeekGE(target)
		o.pos, _ = slices.BinarySearchFunc(md.keys, target, bytes.Compare)
	case c == 3:
		op, got = "SeekLT "+string(target), o.it.SeekLT(target)
		i, _ := slices.BinarySearchFunc(md.keys, target, bytes.Compare)
		o.pos = i - 1
	case !o.known:
		return
	case c == 4:
		op, got = "Next", o.it.Next()
		o.pos = min(o.pos+1, n)
	default:
		op, got = "Prev", o.it.Prev()
		o.pos = max(o.pos-1, -1)
	}
	o.known = true
	if o.pos < 0 {
		o.pos = -1
	}
	if o.pos >= n {
		o.pos = n
	}
	want := o.pos >= 0 && o.pos < n
	if err := o.it.Error(); err != nil {
		t.Fatalf("%s: %v", op, err)
	}
	if got != want {
		t.Fatalf("%s = %v, want %v (model position %d of %d)", op, got, want, o.pos, n)
	}
	if want && (!bytes.Equal(o.it.Key(), md.keys[o.pos]) || !bytes.Equal(o.it.Value(), md.vals[o.pos])) {
		t.Fatalf("%s: at %q=%q, want %q=%q", op, o.it.Key(), o.it.Value(), md.keys[o.pos], md.vals[o.pos])
	}
}

// TestIteratorKeyOutlivesClose: Key's and Value's copies are the
// iterator's own, not the pooled memory, so a caller who keeps them past
// Close (against the letter of their documentation, a common slip) still
// reads what they were while later iterators reuse the pool.
func TestIteratorKeyOutlivesClose(t *testing.T) {
	d := openMem(t, vfs.NewMem(), &Options{DisableWAL: true})
	defer d.Close()
	for i := range 100 {
		if err := d.Set([]byte(fmt.Sprintf("key%03d", i)), []byte(fmt.Sprintf("value%03d", i)), NoSync); err != nil {
			t.Fatal(err)
		}
	}
	it := d.NewIter(nil)
	if !it.First() {
		t.Fatal("First found nothing")
	}
	k, v := it.Key(), it.Value()
	if err := it.Close(); err != nil {
		t.Fatal(err)
	}
	for range 10 {
		other := d.NewIter(nil)
		for ok := other.Last(); ok; ok = other.Prev() {
			_, _ = other.Key(), other.Value()
		}
		// And end on another key: the reverse scan's last copies are of
		// key000 itself, which would hide a reused buffer.
		if !other.SeekGE([]byte("key077")) {
			t.Fatal("SeekGE found nothing")
		}
		_, _ = other.Key(), other.Value()
		other.Close()
	}
	if string(k) != "key000" || string(v) != "value000" {
		t.Fatalf("after Close and later scans the kept key and value read %q=%q", k, v)
	}
}

// TestIteratorUseAfterCloseLeavesOthersAlone: an iterator used after its
// Close reports ErrClosed and does not touch the pooled memory another
// iterator took since.
func TestIteratorUseAfterCloseLeavesOthersAlone(t *testing.T) {
	d := openMem(t, vfs.NewMem(), &Options{DisableWAL: true})
	defer d.Close()
	for i := range 50 {
		if err := d.Set([]byte(fmt.Sprintf("key%03d", i)), []byte("v"), NoSync); err != nil {
			t.Fatal(err)
		}
	}
	stale := d.NewIter(nil)
	stale.First()
	stale.Close()
	fresh := d.NewIter(nil)
	if !fresh.SeekGE([]byte("key010")) {
		t.Fatal("SeekGE found nothing")
	}
	for _, move := range []func() bool{stale.First, stale.Last, stale.Next, stale.Prev,
		func() bool { return stale.SeekGE([]byte("key040")) }} {
		if move() || !errors.Is(stale.Error(), ErrClosed) || stale.Key() != nil {
			t.Fatalf("a closed iterator moved: valid %v, error %v, key %q", stale.Valid(), stale.Error(), stale.Key())
		}
	}
	n := 0
	for ok := fresh.Valid(); ok; ok = fresh.Next() {
		if want := fmt.Sprintf("key%03d", 10+n); string(fresh.Key()) != want {
			t.Fatalf("the open iterator reads %q, want %q", fresh.Key(), want)
		}
		n++
	}
	if n != 40 || fresh.Close() != nil {
		t.Fatalf("the open iterator read %d keys from key010, want 40 (error %v)", n, fresh.Error())
	}
}

// TestClosedIteratorPoolsNoReference: the memory Close returns to the
// pool holds no pointer into the DB (memtables, tables, version, blocks),
// only buffers of its own, so an idle pool keeps no released memtable or
// deleted table alive.
func TestClosedIteratorPoolsNoReference(t *testing.T) {
	// No automatic compaction: one that moved the L0 tables down before
	// NewIter left two sources, not three (seen in a loaded CI run).
	d := openMem(t, vfs.NewMem(), &Options{MemTableSize: 16 << 10, DisableWAL: true, DisableAutomaticCompactions: true})
	defer d.Close()
	for i := range 3000 {
		if err := d.Set([]byte(fmt.Sprintf("key%05d", i)), make([]byte, 20), NoSync); err != nil {
			t.Fatal(err)
		}
		if i == 1500 {
			if err := d.Compact(nil, nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	it := d.NewIter(&IterOptions{LowerBound: []byte("key00100"), UpperBound: []byte("key02900")})
	a := it.alloc
	for ok := it.First(); ok; ok = it.Next() {
	}
	for ok := it.Last(); ok; ok = it.Prev() {
	}
	// A seek to the last key leaves fewer children positioned than First
	// did, so the merge's heap shrinks under entries that held keys.
	if !it.First() || !it.SeekGE([]byte("key02899")) {
		t.Fatalf("reposition: %v", it.Error())
	}
	if len(a.children) < 3 {
		t.Fatalf("the iterator merged %d sources; the test wants a memtable, L0 and a level", len(a.children))
	}
	if err := it.Close(); err != nil {
		t.Fatal(err)
	}
	if path := pointerInto(reflect.ValueOf(a).Elem(), "iterAlloc"); path != "" {
		t.Fatalf("a pooled iterAlloc still points out of itself at %s", path)
	}
	// pointerInto passes over byte slices (the pool's own buffers are
	// some), so the merge's cached keys, which point into blocks and
	// memtable arenas, are checked one by one to the heap's capacity.
	for i, item := range a.merging.h.items[:cap(a.merging.h.items)] {
		if item.key.UserKey != nil {
			t.Fatalf("a pooled iterAlloc's merge heap keeps key %q at %d", item.key.UserKey, i)
		}
	}
}

// pointerInto returns the path of the first non-nil pointer, interface,
// map, channel or function reachable in v other than a slice's own
// backing array, or "" if there is none. Slices are walked to their
// capacity, so a cleared length does not hide a stale element.
func pointerInto(v reflect.Value, path string) string {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface, reflect.Map, reflect.Chan, reflect.Func, reflect.UnsafePointer:
		if !v.IsNil() {
			return path
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if p := pointerInto(v.Field(i), path+"."+v.Type().Field(i).Name); p != "" {
				return p
			}
		}
	case reflect.Array:
		for i := range v.Len() {
			if p := pointerInto(v.Index(i), fmt.Sprintf("%s[%d]", path, i)); p != "" {
				return p
			}
		}
	case reflect.Slice:
		full := v.Slice3(0, v.Cap(), v.Cap())
		for i := range full.Len() {
			if p := pointerInto(full.Index(i), fmt.Sprintf("%s[%d]", path, i)); p != "" {
				return p
			}
		}
	}
	return ""
}

// TestConcurrentScansSeeEveryEarlierWrite: scans in several goroutines,
// beside a writer, share memtable snapshots (one Clone per stretch between
// writes) and pooled iterator memory. The writer sets key i after key i-1
// and publishes i+1 once Set returns; every scan must see exactly the keys
// from where it seeks to some j-1, j no smaller than what was published
// before it began.
// A snapshot kept past a write would show fewer, and memory shared wrongly
// between scans a gap or a foreign key (and -race a race).
func TestConcurrentScansSeeEveryEarlierWrite(t *testing.T) {
	d := openMem(t, vfs.NewMem(), &Options{MemTableSize: 64 << 10, DisableWAL: true})
	defer d.Close()
	const n = 20000
	var published atomic.Int64
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range n {
			if err := d.Set([]byte(fmt.Sprintf("key%06d", i)), []byte(fmt.Sprint(i)), NoSync); err != nil {
				t.Error(err)
				return
			}
			published.Store(int64(i + 1))
		}
	}()
	var wg sync.WaitGroup
	for g := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for scans := 0; ; scans++ {
				select {
				case <-done:
					if scans > 0 {
						return
					}
				default:
				}
				before := published.Load()
				it := d.NewIter(nil)
				// Mostly short scans of the newest keys, where a stale
				// snapshot would show; every tenth from the first key.
				seen := 0
				if scans%10 != 0 {
					seen = int(max(before-20, 0))
				}
				for ok := it.SeekGE([]byte(fmt.Sprintf("key%06d", seen))); ok; ok = it.Next() {
					if want := fmt.Sprintf("key%06d", seen); string(it.Key()) != want || string(it.Value()) != fmt.Sprint(seen) {
						t.Errorf("scanner %d: key %d is %q=%q, want %s", g, seen, it.Key(), it.Value(), want)
						it.Close()
						return
					}
					seen++
				}
				if err := it.Close(); err != nil {
					t.Error(err)
					return
				}
				if int64(seen) < before {
					t.Errorf("scanner %d saw %d keys, but %d were written before it began", g, seen, before)
					return
				}
			}
		}()
	}
	wg.Wait()
	<-done
}
