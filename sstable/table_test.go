package sstable

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/sievekv/sievekv/filters"
	"github.com/sievekv/sievekv/internal/base"
	"github.com/sievekv/sievekv/vfs"
)

var allFilters = []filters.Type{filters.TypeBinaryFuse8, filters.TypeBinaryFuse16, filters.TypeXor8, filters.TypeBloom, filters.TypeBlockedBloom, filters.TypeNone}

// roundTrip writes entries, reopens the table and checks Get at random
// snapshots, full walks both ways, and bounded seeks against the model.
func roundTrip(t *testing.T, entries []kv, opts WriterOptions, probes int, rng *rand.Rand) *Reader {
	fs := vfs.NewMem()
	md := writeTable(t, fs, "/t.sst", entries, opts)
	r := openTable(t, fs, "/t.sst", ReaderOptions{FileNum: 1, Cache: NewCache(1 << 20)})
	if p := r.Properties(); p.NumEntries != uint64(len(entries)) || md.Properties.NumEntries != p.NumEntries || r.Size() != md.Size {
		t.Fatalf("properties: %v; metadata size %d, reader size %d", p, md.Size, r.Size())
	}
	if len(entries) > 0 {
		p := r.Properties()
		if base.Compare(p.SmallestKey, entries[0].key) != 0 || base.Compare(p.LargestKey, entries[len(entries)-1].key) != 0 {
			t.Fatalf("smallest/largest %v %v", p.SmallestKey, p.LargestKey)
		}
	}
	// Get for every entry's user key at its own seqnum and at random ones,
	// plus absent keys.
	for i := 0; i < probes && len(entries) > 0; i++ {
		e := entries[rng.IntN(len(entries))]
		for _, seq := range []base.SeqNum{e.key.SeqNum(), base.SeqNumMax, base.SeqNum(rng.IntN(int(e.key.SeqNum()) + 2)), 0} {
			checkGet(t, r, entries, e.key.UserKey, seq)
		}
		absent := append(append([]byte(nil), e.key.UserKey...), 0x00, byte(rng.IntN(256)))
		checkGet(t, r, entries, absent, base.SeqNumMax)
	}
	checkGet(t, r, entries, []byte("\xff\xff\xff\xff\xff\xff\xff"), base.SeqNumMax)
	it := r.NewIter(nil, nil)
	checkWalks(t, it, entries)
	probe := func() base.InternalKey {
		if len(entries) == 0 || rng.IntN(8) == 0 {
			return base.MakeInternalKey([]byte{byte(rng.IntN(256))}, base.SeqNum(rng.IntN(100)), base.KindSet)
		}
		e := entries[rng.IntN(len(entries))]
		return base.MakeInternalKey(e.key.UserKey, e.key.SeqNum()+base.SeqNum(rng.IntN(3))-1, base.Kind(rng.IntN(2)))
	}
	checkSeeks(t, it, entries, probe, probes)
	it.Close()
	// Bounded iterators: bounds taken from the table's own keys.
	for range 4 {
		var lo, hi []byte
		if len(entries) > 0 {
			// Windows of up to 5000 entries keep big tables cheap.
			i := rng.IntN(len(entries))
			j := min(len(entries)-1, i+rng.IntN(5000))
			lo, hi = entries[i].key.UserKey, entries[j].key.UserKey
		}
		want := inBounds(entries, lo, hi)
		bit := r.NewIter(lo, hi)
		checkWalks(t, bit, want)
		checkSeeks(t, bit, want, probe, probes/4)
		bit.Close()
	}
	return r
}

func checkGet(t *testing.T, r *Reader, entries []kv, uk []byte, seq base.SeqNum) {
	t.Helper()
	want, wantOK := modelGet(entries, uk, seq)
	v, kind, ok, err := r.Get(uk, seq)
	if err != nil {
		t.Fatalf("Get(%q@%d): %v", uk, seq, err)
	}
	if ok != wantOK || (ok && (kind != want.key.Kind() || !bytes.Equal(v, want.value))) {
		t.Fatalf("Get(%q@%d) = %v %v (%d bytes), want %v %v", uk, seq, ok, kind, len(v), wantOK, want.key)
	}
}

func TestRoundTripSizes(t *testing.T) {
	small := func() int { return 10 }
	for _, n := range []int{0, 1, 10000, 200000} {
		for _, ft := range allFilters {
			if n == 200000 && ft != filters.TypeBinaryFuse8 {
				continue // the big table once; filters are covered at 10k
			}
			t.Run(fmt.Sprintf("n=%d/%s", n, ft), func(t *testing.T) {
				rng := rand.New(rand.NewPCG(uint64(n), uint64(ft)))
				entries := makeEntries(rng, n, keyGens["plain"], small)
				probes := 2000
				if n == 200000 {
					probes = 1000 // plus full walks of all 200k entries
				}
				roundTrip(t, entries, WriterOptions{Filter: ft}, probes, rng)
			})
		}
	}
}

func TestRoundTripShapes(t *testing.T) {
	cases := []struct {
		name  string
		n     int
		gen   string
		vlen  func() int
		block int
	}{
		{"emptyvalues", 10000, "plain", func() int { return 0 }, 0},
		{"64KiBvalues", 40, "plain", func() int { return 64 << 10 }, 0},
		{"longprefix", 5000, "longprefix", func() int { return 20 }, 0},
		{"binary", 2000, "binary", func() int { return 3 }, 0},
		{"binary-tinyblocks", 2000, "binary", func() int { return 3 }, 64},
		{"plain-1entryblocks", 500, "plain", func() int { return 30 }, 1},
	}
	for _, c := range cases {
		for _, comp := range []Compression{SnappyCompression, NoCompression} {
			t.Run(fmt.Sprintf("%s/comp=%d", c.name, comp), func(t *testing.T) {
				rng := rand.New(rand.NewPCG(42, uint64(len(c.name))))
				entries := makeEntries(rng, c.n, keyGens[c.gen], c.vlen)
				probes := 1000
				if c.n < 100 {
					probes = 150 // 64 KiB values: each Get copies and checks a 64 KiB block
				}
				roundTrip(t, entries, WriterOptions{BlockSize: c.block, Compression: comp}, probes, rng)
			})
		}
	}
}

// TestRestartIntervals runs the battery across restart intervals, as
// LevelDB's harness does, since Prev and seeks depend on them.
func TestRestartIntervals(t *testing.T) {
	for _, ri := range []int{1, 2, 3, 16, 100} {
		t.Run(fmt.Sprint(ri), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(ri), 77))
			entries := makeEntries(rng, 3000, keyGens["longprefix"], func() int { return rng.IntN(40) })
			roundTrip(t, entries, WriterOptions{BlockRestartInterval: ri, BlockSize: 1024}, 500, rng)
		})
	}
}

func TestWriterRejectsDisorder(t *testing.T) {
	fs := vfs.NewMem()
	f, _ := fs.Create("/t")
	w := NewWriter(f, WriterOptions{})
	if err := w.Add(base.MakeInternalKey([]byte("b"), 5, base.KindSet), nil); err != nil {
		t.Fatal(err)
	}
	for _, k := range []base.InternalKey{
		base.MakeInternalKey([]byte("a"), 9, base.KindSet),
		base.MakeInternalKey([]byte("b"), 5, base.KindSet),
		base.MakeInternalKey([]byte("b"), 6, base.KindSet),
	} {
		if err := w.Add(k, nil); err == nil {
			t.Fatalf("Add(%v) after b#5 accepted", k)
		}
	}
	if err := w.Add(base.InternalKey{UserKey: []byte("c"), Trailer: 7}, nil); err == nil {
		t.Fatal("invalid kind accepted")
	}
	if _, err := w.Finish(); err != nil {
		t.Fatal(err)
	}
	r := openTable(t, fs, "/t", ReaderOptions{})
	if r.Properties().NumEntries != 1 {
		t.Fatalf("rejected adds changed the table: %v", r.Properties())
	}
}

// TestSeparatorProperties checks T5's separator on random pairs.
func TestSeparatorProperties(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	gen := keyGens["binary"]
	for range 20000 {
		a := base.MakeInternalKey(gen(rng, 0), base.SeqNum(rng.IntN(5)), base.Kind(rng.IntN(2)))
		b := base.MakeInternalKey(gen(rng, 0), base.SeqNum(rng.IntN(5)), base.Kind(rng.IntN(2)))
		if base.Compare(a, b) >= 0 {
			continue
		}
		s := separator(a, b)
		if base.Compare(a, s) > 0 || base.Compare(s, b) >= 0 {
			t.Fatalf("separator(%v, %v) = %v", a, b, s)
		}
		// The Get argument of T5: a search key in (a, s] never has b's
		// user key unless s is a itself.
		if base.Compare(s, a) != 0 && bytes.Equal(s.UserKey, b.UserKey) {
			t.Fatalf("separator(%v, %v) = %v shares b's user key", a, b, s)
		}
		if su := successor(a); base.Compare(su, a) < 0 {
			t.Fatalf("successor(%v) = %v", a, su)
		}
	}
	if got := base.ShortSeparator([]byte("abcdef"), []byte("abzz")); string(got) != "abd" {
		t.Fatalf("ShortSeparator = %q", got)
	}
}

// TestPropertiesRecorded checks the counts the writer records.
func TestPropertiesRecorded(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	entries := makeEntries(rng, 5000, keyGens["plain"], func() int { return 7 })
	fs := vfs.NewMem()
	writeTable(t, fs, "/t", entries, WriterOptions{Filter: filters.TypeBloom, BloomBitsPerKey: 12})
	r := openTable(t, fs, "/t", ReaderOptions{})
	p := r.Properties()
	var dels, rawK, rawV uint64
	distinct := 0
	minSeq, maxSeq := base.SeqNumMax, base.SeqNum(0)
	for i, e := range entries {
		if e.key.Kind() == base.KindDelete {
			dels++
		}
		rawK += uint64(e.key.Size())
		rawV += uint64(len(e.value))
		if i == 0 || !bytes.Equal(entries[i-1].key.UserKey, e.key.UserKey) {
			distinct++
		}
		minSeq, maxSeq = min(minSeq, e.key.SeqNum()), max(maxSeq, e.key.SeqNum())
	}
	if p.NumDeletions != dels || p.RawKeySize != rawK || p.RawValueSize != rawV || p.FilterKeys != uint64(distinct) ||
		p.SmallestSeqNum != minSeq || p.LargestSeqNum != maxSeq || p.FilterType != filters.TypeBloom ||
		p.FilterSize != r.FilterSize() || p.FilterSize == 0 || p.NumDataBlocks == 0 || p.IndexSize == 0 {
		t.Fatalf("properties %v", p)
	}
	// 12 bits/key Bloom: the filter is about 12 bits per distinct key.
	if bpk := float64(p.FilterSize*8) / float64(distinct); bpk < 11 || bpk > 14 {
		t.Fatalf("bloom at 12 bits/key uses %.1f bits/key", bpk)
	}
}

// TestSnappyOnlyWhenWorthIt checks the 12.5% rule: random values do not
// compress and are stored raw; repetitive values are compressed.
func TestSnappyOnlyWhenWorthIt(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	random := makeEntries(rng, 2000, keyGens["plain"], func() int { return 200 })
	fs := vfs.NewMem()
	writeTable(t, fs, "/r", random, WriterOptions{Filter: filters.TypeNone})
	p := openTable(t, fs, "/r", ReaderOptions{}).Properties()
	if p.DataSize != p.UncompressedDataSize+p.NumDataBlocks*blockTrailerLen {
		t.Fatalf("incompressible data was stored compressed: %v", p)
	}
	var rep []kv
	for i := range 2000 {
		rep = append(rep, kv{base.MakeInternalKey([]byte(fmt.Sprintf("k%06d", i)), 1, base.KindSet), bytes.Repeat([]byte("ab"), 100)})
	}
	writeTable(t, fs, "/c", rep, WriterOptions{Filter: filters.TypeNone})
	p = openTable(t, fs, "/c", ReaderOptions{}).Properties()
	if p.DataSize*2 > p.UncompressedDataSize {
		t.Fatalf("repetitive data not compressed: %v", p)
	}
	// Incompressible blocks first, then compressible ones: the backoff
	// after failed attempts may store at most incompressibleBackoff of the
	// compressible blocks raw.
	var mixed []kv
	for i, e := range random {
		mixed = append(mixed, kv{base.MakeInternalKey([]byte(fmt.Sprintf("a%06d", i)), 1, base.KindSet), e.value})
	}
	for _, e := range rep {
		mixed = append(mixed, kv{base.MakeInternalKey(append([]byte("b"), e.key.UserKey...), 1, base.KindSet), e.value})
	}
	writeTable(t, fs, "/m", mixed, WriterOptions{Filter: filters.TypeNone})
	r := openTable(t, fs, "/m", ReaderOptions{})
	raw := 0
	for _, ie := range r.index {
		b, _ := r.readRaw(ie.handle, dataBlock, nil)
		if uint64(len(b)) == ie.handle.length && bytes.HasPrefix(ie.sep.UserKey, []byte("b")) {
			raw++
		}
	}
	if raw > incompressibleBackoff+1 {
		t.Fatalf("%d compressible blocks stored raw after the backoff", raw)
	}
}
