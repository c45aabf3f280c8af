package memtable

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"
	"unsafe"

	"github.com/sievekv/sievekv/internal/base"
	"github.com/sievekv/sievekv/internal/testutil"
)

type modelEntry struct {
	key   base.InternalKey
	value []byte
}

// randomMemtable fills a memtable and a sorted model with n random
// operations over a small key space so versions pile up.
func randomMemtable(rng *rand.Rand, n, keySpace int) (*MemTable, []modelEntry) {
	m := New()
	byKey := map[string]modelEntry{}
	for seq := 1; seq <= n; seq++ {
		uk := []byte(fmt.Sprintf("k%04d", rng.IntN(keySpace)))
		if rng.IntN(10) == 0 {
			uk = append(uk, 0x00, 0xff)
		}
		var e modelEntry
		if rng.IntN(4) == 0 {
			e = modelEntry{base.MakeInternalKey(uk, base.SeqNum(seq), base.KindDelete), nil}
			m.Delete(uk, base.SeqNum(seq))
		} else {
			v := []byte(fmt.Sprintf("v%d", seq))
			e = modelEntry{base.MakeInternalKey(uk, base.SeqNum(seq), base.KindSet), v}
			m.Set(uk, base.SeqNum(seq), v)
		}
		byKey[string(e.key.Encode(nil))] = e
	}
	model := make([]modelEntry, 0, len(byKey))
	for _, e := range byKey {
		model = append(model, e)
	}
	slices.SortFunc(model, func(a, b modelEntry) int { return base.Compare(a.key, b.key) })
	return m, model
}

// TestGetVisibility checks MT3 against the model at every snapshot.
func TestGetVisibility(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	const n = 2000
	m, model := randomMemtable(rng, n, 50)
	if m.Len() != len(model) {
		t.Fatalf("Len %d, model %d", m.Len(), len(model))
	}
	for range 5000 {
		uk := []byte(fmt.Sprintf("k%04d", rng.IntN(55)))
		snap := base.SeqNum(rng.IntN(n + 2))
		var want *modelEntry
		for i := range model {
			e := &model[i]
			if bytes.Equal(e.key.UserKey, uk) && base.Visible(e.key.SeqNum(), snap) {
				want = e // model is sorted seq-descending: first hit is newest
				break
			}
		}
		v, kind, found := m.Get(uk, snap)
		switch {
		case want == nil && found:
			t.Fatalf("Get(%s@%d) found %s, want miss", uk, snap, kind)
		case want != nil && (!found || kind != want.key.Kind() || !bytes.Equal(v, want.value)):
			t.Fatalf("Get(%s@%d) = %q %v %v, want %v %q", uk, snap, v, kind, found, want.key, want.value)
		}
	}
}

// checkIter compares a full walk forward and backward and random seeks with
// the model restricted to [lower, upper).
func checkIter(t *testing.T, it base.InternalIterator, model []modelEntry, lower, upper []byte, rng *rand.Rand) {
	t.Helper()
	var want []modelEntry
	for _, e := range model {
		if (lower == nil || bytes.Compare(e.key.UserKey, lower) >= 0) && (upper == nil || bytes.Compare(e.key.UserKey, upper) < 0) {
			want = append(want, e)
		}
	}
	same := func(i int) bool {
		return it.Valid() && base.Compare(it.Key(), want[i].key) == 0 && it.Key().Trailer == want[i].key.Trailer && bytes.Equal(it.Value(), want[i].value)
	}
	i := 0
	for ok := it.First(); ok; ok = it.Next() {
		if i >= len(want) || !same(i) {
			t.Fatalf("forward step %d: got %v", i, it.Key())
		}
		i++
	}
	if i != len(want) || it.Valid() {
		t.Fatalf("forward walk saw %d of %d", i, len(want))
	}
	i = len(want) - 1
	for ok := it.Last(); ok; ok = it.Prev() {
		if i < 0 || !same(i) {
			t.Fatalf("backward step %d: got %v", i, it.Key())
		}
		i--
	}
	if i != -1 {
		t.Fatalf("backward walk stopped at %d", i)
	}
	for range 300 {
		uk := []byte(fmt.Sprintf("k%04d", rng.IntN(60)))
		key := base.MakeInternalKey(uk, base.SeqNum(rng.IntN(3000)), base.Kind(rng.IntN(2)))
		ge, _ := slices.BinarySearchFunc(want, key, func(e modelEntry, k base.InternalKey) int { return base.Compare(e.key, k) })
		if ok := it.SeekGE(key); ok != (ge < len(want)) || (ok && !same(ge)) {
			t.Fatalf("SeekGE(%v) = %v, want index %d of %d", key, ok, ge, len(want))
		}
		// Step both ways from a seek to exercise direction changes.
		if ge < len(want) && ge > 0 {
			if !it.Prev() || !same(ge-1) {
				t.Fatalf("Prev after SeekGE(%v)", key)
			}
			if !it.Next() || !same(ge) {
				t.Fatalf("Next after Prev after SeekGE(%v)", key)
			}
		}
		lt := ge - 1
		if ok := it.SeekLT(key); ok != (lt >= 0) || (ok && !same(lt)) {
			t.Fatalf("SeekLT(%v) = %v, want index %d", key, ok, lt)
		}
		if lt >= 0 && lt+1 < len(want) {
			if !it.Next() || !same(lt+1) {
				t.Fatalf("Next after SeekLT(%v)", key)
			}
		}
	}
}

func TestIterMatchesModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, n := range []int{0, 1, 5, 63, 64, 65, 3000} {
		m, model := randomMemtable(rng, n, 40)
		for _, b := range [][2][]byte{{nil, nil}, {[]byte("k0010"), nil}, {nil, []byte("k0030")}, {[]byte("k0005"), []byte("k0005\x00\xff")}, {[]byte("k0020"), []byte("k0010")}} {
			t.Run(fmt.Sprintf("n=%d/[%q,%q)", n, b[0], b[1]), func(t *testing.T) {
				it := m.NewIter(b[0], b[1])
				checkIter(t, it, model, b[0], b[1], rng)
				if err := it.Close(); err != nil {
					t.Fatal(err)
				}
			})
		}
	}
}

// TestIterSnapshot checks MT5.
func TestIterSnapshot(t *testing.T) {
	m := New()
	m.Set([]byte("a"), 1, []byte("1"))
	it := m.NewIter(nil, nil)
	m.Set([]byte("b"), 2, []byte("2"))
	m.Set([]byte("a"), 3, []byte("3"))
	n := 0
	for ok := it.First(); ok; ok = it.Next() {
		n++
	}
	if n != 1 {
		t.Fatalf("iterator saw %d entries written after it was created", n-1)
	}
}

// TestReplaceSameKey checks MT1: re-adding an internal key replaces it.
func TestReplaceSameKey(t *testing.T) {
	m := New()
	m.Set([]byte("a"), 1, []byte("old"))
	m.Set([]byte("a"), 1, []byte("newer"))
	if v, _, _ := m.Get([]byte("a"), 1); string(v) != "newer" || m.Len() != 1 {
		t.Fatalf("got %q len %d", v, m.Len())
	}
	// The replaced entry's bytes stay in the arena, and in the size (MT4),
	// beside the key filter's (MT11).
	if got, want := m.ApproximateSize(), int64(1+3)+int64(1+5)+EntryOverhead+m.filter.Load().bytes(); got != want {
		t.Fatalf("size %d, want %d", got, want)
	}
}

// TestCopiesInput checks MT2: callers may reuse their buffers.
func TestCopiesInput(t *testing.T) {
	m := New()
	k, v := []byte("key"), []byte("val")
	m.Set(k, 1, v)
	k[0], v[0] = 'X', 'X'
	if got, _, ok := m.Get([]byte("key"), 1); !ok || string(got) != "val" {
		t.Fatalf("memtable aliased caller memory: %q %v", got, ok)
	}
}

// readWhileWriting runs write on the calling goroutine while readers
// goroutines each call read over and over (r is the reader's number, rng
// its own generator seeded from r and stream) until write has returned. A
// reader whose read returns an error stops, and the test fails with the
// first such error: the memtable's one-writer, many-readers rule, checked
// under -race.
func readWhileWriting(t *testing.T, readers int, stream uint64, read func(r int, rng *rand.Rand) error, write func()) {
	t.Helper()
	var g testutil.Group
	done := make(chan struct{})
	for r := range readers {
		g.Go(func() error {
			rng := rand.New(rand.NewPCG(uint64(r), stream))
			for {
				select {
				case <-done:
					return nil
				default:
				}
				if err := read(r, rng); err != nil {
					return err
				}
			}
		})
	}
	write()
	close(done)
	for _, err := range g.Wait() {
		t.Fatal(err)
	}
}

// TestConcurrentReadersOneWriter exercises the concurrency rule under -race:
// one writer, readers doing Get and iterator walks whose results must be
// consistent with the monotone writes.
func TestConcurrentReadersOneWriter(t *testing.T) {
	m := New()
	const writes = 20000
	readWhileWriting(t, 4, 9, func(r int, rng *rand.Rand) error {
		if r%2 == 0 {
			// Key i is written with seq i+1 and value i, so a visible
			// result must carry exactly that value.
			i := rng.IntN(writes)
			if v, _, ok := m.Get([]byte(fmt.Sprintf("%08d", i)), base.SeqNumMax); ok && string(v) != fmt.Sprint(i) {
				return fmt.Errorf("key %d read %q", i, v)
			}
			return nil
		}
		it := m.NewIter(nil, nil)
		defer it.Close()
		var prev base.InternalKey
		n := 0
		for ok := it.First(); ok; ok = it.Next() {
			if n > 0 && base.Compare(prev, it.Key()) >= 0 {
				return fmt.Errorf("iterator out of order at %v", it.Key())
			}
			prev = it.Key()
			n++
			if n > 500 {
				break
			}
		}
		return nil
	}, func() {
		for i := range writes {
			m.Set([]byte(fmt.Sprintf("%08d", i)), base.SeqNum(i+1), []byte(fmt.Sprint(i)))
		}
	})
	if m.Len() != writes {
		t.Fatalf("Len %d", m.Len())
	}
}

// TestApproximateSizeTracksHeap checks MT4: the charged size stays within a
// factor of what the Go heap actually grew by, plus the arena chunks
// mapped outside it (MT12).
func TestApproximateSizeTracksHeap(t *testing.T) {
	for _, vlen := range []int{0, 10, 100, 1000} {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		m := New()
		for i := range 50000 {
			m.Set([]byte(fmt.Sprintf("key%08d", i)), base.SeqNum(i), make([]byte, vlen))
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		heap := float64(after.HeapAlloc) - float64(before.HeapAlloc) + float64(m.arena.mappedSize())
		ratio := float64(m.ApproximateSize()) / heap
		t.Logf("value %d B: ratio %.2f", vlen, ratio)
		if ratio < 0.7 || ratio > 1.4 {
			t.Errorf("value %d B: ApproximateSize %d vs heap growth %.0f (ratio %.2f)", vlen, m.ApproximateSize(), heap, ratio)
		}
		runtime.KeepAlive(m)
	}
}

// TestArenaConcurrentReaders checks MT6 under -race: readers resolve arena
// positions while the writer fills chunks, publishes new ones and gives
// large values chunks of their own. Every value read must be exactly the
// bytes written for that key.
func TestArenaConcurrentReaders(t *testing.T) {
	m := New()
	const writes = 3000
	valueOf := func(i int) []byte {
		n := i % 97
		if i%500 == 7 {
			n = maxChunk/4 + 1 + i // a chunk of its own
		}
		return bytes.Repeat([]byte{byte(i)}, n)
	}
	key := func(i int) []byte { return []byte(fmt.Sprintf("key%06d", i)) }
	readWhileWriting(t, 3, 11, func(_ int, rng *rand.Rand) error {
		i := rng.IntN(writes)
		if v, _, ok := m.Get(key(i), base.SeqNumMax); ok && !bytes.Equal(v, valueOf(i)) {
			return fmt.Errorf("Get(%d): %d bytes, want %d", i, len(v), len(valueOf(i)))
		}
		it := m.NewIter(key(i), nil)
		defer it.Close()
		for ok, n := it.First(), 0; ok && n < 20; ok, n = it.Next(), n+1 {
			var j int
			fmt.Sscanf(string(it.Key().UserKey), "key%06d", &j)
			if !bytes.Equal(it.Value(), valueOf(j)) {
				return fmt.Errorf("iterator at %d: wrong value", j)
			}
		}
		return nil
	}, func() {
		for i := range writes {
			m.Set(key(i), base.SeqNum(i+1), valueOf(i))
		}
	})
	if chunks := len(*m.arena.chunks.Load()); chunks < 5 {
		t.Fatalf("only %d arena chunks: the test did not cross chunk boundaries", chunks)
	}
}

// TestSetAllocates checks MT6: inserts allocate only arena chunks and tree
// nodes, a small fraction of an allocation per entry on average.
func TestSetAllocates(t *testing.T) {
	m := New()
	k, v := make([]byte, 16), make([]byte, 100)
	i := 0
	allocs := testing.AllocsPerRun(20000, func() {
		i++
		binary.BigEndian.PutUint64(k, uint64(i*7919%100003))
		m.Set(k, base.SeqNum(i), v)
	})
	if allocs > 0.2 {
		t.Fatalf("%.2f allocations per Set, want at most 0.2", allocs)
	}
}

// TestLogicalSize checks MT7 over random writes, replacements of an
// internal key included: LogicalSize is the key and value bytes of every
// Add plus LogicalEntryOverhead per distinct entry, and never exceeds the
// memory charge ApproximateSize.
func TestLogicalSize(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 16))
	m := New()
	var want int64
	seen := map[string]bool{}
	for i := range 5000 {
		k := []byte(fmt.Sprintf("k%03d", rng.IntN(400)))
		seq := base.SeqNum(rng.IntN(3)) // repeats replace the same internal key
		v := make([]byte, rng.IntN(300))
		m.Set(k, seq, v)
		want += int64(len(k) + len(v))
		if id := fmt.Sprintf("%s#%d", k, seq); !seen[id] {
			seen[id] = true
			want += LogicalEntryOverhead
		}
		if got := m.LogicalSize(); got != want {
			t.Fatalf("after %d writes: LogicalSize %d, want %d", i+1, got, want)
		}
		if m.LogicalSize() > m.ApproximateSize() {
			t.Fatalf("after %d writes: LogicalSize %d above ApproximateSize %d", i+1, m.LogicalSize(), m.ApproximateSize())
		}
	}
	if m.Len() != len(seen) {
		t.Fatalf("Len %d, want %d distinct entries", m.Len(), len(seen))
	}
}

// A short scan, a seek and a couple of steps as when a memtable is merged
// with tables, buffers a few entries rather than a full batch: it
// allocates less than one full batch's buffer (the iterator, the tree's
// clone and firstIterBatch entries), where buffering iterBatch entries on
// every seek grew the buffer to 64 items (about 5 KB) per scan.
func TestShortScanBuffersFewEntries(t *testing.T) {
	m := New()
	v := make([]byte, 100)
	for i := range 3000 {
		m.Set([]byte(fmt.Sprintf("key%06d", i*7)), base.SeqNum(i+1), v)
	}
	const scans = 200
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for i := range scans {
		it := m.NewIter(nil, nil)
		ok := it.SeekGE(base.MakeInternalKey([]byte(fmt.Sprintf("key%06d", (i*131)%20000)), base.SeqNumMax, base.KindSet))
		for j := 0; ok && j < 2; j++ {
			ok = it.Next()
		}
		it.Close()
	}
	runtime.ReadMemStats(&after)
	perScan := float64(after.TotalAlloc-before.TotalAlloc) / scans
	if limit := float64(iterBatch * unsafe.Sizeof(item{})); perScan >= limit {
		t.Fatalf("a short scan allocates %.0f B, want under one full batch (%.0f B)", perScan, limit)
	}
}
