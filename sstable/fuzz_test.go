package sstable

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/sievekv/sievekv/filters"
	"github.com/sievekv/sievekv/internal/base"
	"github.com/sievekv/sievekv/internal/rangedel"
	"github.com/sievekv/sievekv/vfs"
)

// seedTable returns the bytes of a small valid table.
func seedTable(tb testing.TB, n int, opts WriterOptions) []byte {
	rng := rand.New(rand.NewPCG(uint64(n), 5))
	fs := vfs.NewMem()
	md := writeTable(tb, fs, "/s", makeEntries(rng, n, keyGens["binary"], func() int { return rng.IntN(20) }), opts)
	f, _ := fs.Open("/s")
	b := make([]byte, md.Size)
	f.ReadAt(b, 0)
	return b
}

// seedTableWithRangeDels returns a small valid table with a range-deletion
// block.
func seedTableWithRangeDels(tb testing.TB) []byte {
	rng := rand.New(rand.NewPCG(7, 5))
	fs := vfs.NewMem()
	md := writeTable(tb, fs, "/s", makeEntries(rng, 20, keyGens["plain"], func() int { return rng.IntN(20) }), WriterOptions{BlockSize: 64},
		rangedel.Tombstone{Start: []byte("key000000003"), End: []byte("key000000009"), Seq: 500},
		rangedel.Tombstone{Start: []byte("key000000005"), End: []byte("key000000012"), Seq: 501})
	f, _ := fs.Open("/s")
	b := make([]byte, md.Size)
	f.ReadAt(b, 0)
	return b
}

// seedBlock returns a valid data block's contents.
func seedBlock(n, restart int) []byte {
	rng := rand.New(rand.NewPCG(uint64(n), uint64(restart)))
	w := blockWriter{restartInterval: restart}
	for _, e := range makeEntries(rng, n, keyGens["binary"], func() int { return rng.IntN(8) }) {
		w.add(e.key.Encode(nil), e.value)
	}
	return append([]byte(nil), w.finish()...)
}

// FuzzBlock decodes arbitrary block contents (T4): parseBlock either
// rejects them with errMalformed or accepts a block on which every
// iterator operation stays inside it and fails, if at all, with
// errMalformed; validate then either rejects the block or vouches for an
// iterator that agrees with its entry count and order.
func FuzzBlock(f *testing.F) {
	f.Add(seedBlock(0, 16))
	f.Add(seedBlock(1, 16))
	f.Add(seedBlock(40, 16))
	f.Add(seedBlock(40, 1))
	f.Add(seedBlock(40, 3))
	f.Add([]byte{0, 0, 0, 0})
	f.Add([]byte{1, 0, 0, 0})
	f.Add(swapFirstEntries(seedBlock(2, 1)))
	f.Add(shiftSecondRestart(seedBlock(40, 16)))
	f.Fuzz(func(t *testing.T, data []byte) {
		b, err := parseBlock(data)
		if rejected(t, err, errMalformed) {
			return
		}
		exerciseUnvalidated(t, b)
		n, err := b.validate()
		if rejected(t, err, errMalformed) {
			return
		}
		var it blockIter
		it.init(b)
		var keys []base.InternalKey
		for ok := it.first(); ok; ok = it.nextEntry() {
			keys = append(keys, it.key.Clone())
		}
		if it.err != nil || len(keys) != n {
			t.Fatalf("forward walk: %d of %d entries, err %v", len(keys), n, it.err)
		}
		i := len(keys) - 1
		for ok := it.last(); ok; ok = it.prevEntry() {
			if i < 0 || base.Compare(it.key, keys[i]) != 0 {
				t.Fatalf("backward walk disagrees at %d", i)
			}
			i--
		}
		if it.err != nil || i != -1 {
			t.Fatalf("backward walk stopped at %d, err %v", i, it.err)
		}
		for j, k := range keys {
			if !it.seekGE(k) || base.Compare(it.key, k) != 0 {
				t.Fatalf("seekGE(own key %d) failed", j)
			}
			if ok := it.seekLT(k); ok != (j > 0) || (ok && base.Compare(it.key, keys[j-1]) != 0) {
				t.Fatalf("seekLT(own key %d) wrong", j)
			}
		}
	})
}

// FuzzFooter decodes arbitrary footers (T2): rejected with ErrCorruption,
// or accepted and re-encoded to the same bytes.
func FuzzFooter(f *testing.F) {
	tbl := seedTable(f, 50, WriterOptions{})
	f.Add(tbl[len(tbl)-FooterLen:], uint64(len(tbl)))
	tbl = seedTable(f, 0, WriterOptions{Filter: filters.TypeNone})
	f.Add(tbl[len(tbl)-FooterLen:], uint64(len(tbl)))
	f.Add(make([]byte, FooterLen), uint64(FooterLen))
	f.Fuzz(func(t *testing.T, data []byte, size uint64) {
		ft, err := decodeFooter(data, size)
		if rejected(t, err, base.ErrCorruption) {
			return
		}
		if !bytes.Equal(ft.encode(), data) {
			t.Fatal("accepted footer does not re-encode to its bytes")
		}
		if ft.props.end() != size-FooterLen || ft.dataEnd() > ft.index.offset {
			t.Fatal("accepted footer with handles that do not tile the file")
		}
	})
}

// FuzzProperties decodes arbitrary properties blocks: rejected with
// errMalformed, or accepted and stable under encode/decode.
func FuzzProperties(f *testing.F) {
	for _, n := range []int{0, 1, 30} {
		rng := rand.New(rand.NewPCG(uint64(n), 1))
		fs := vfs.NewMem()
		md := writeTable(f, fs, "/p", makeEntries(rng, n, keyGens["plain"], func() int { return 3 }), WriterOptions{})
		f.Add(md.Properties.encode())
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := decodeProperties(data)
		if rejected(t, err, errMalformed) {
			return
		}
		q, err := decodeProperties(p.encode())
		if err != nil || q.String() != p.String() {
			t.Fatalf("re-decoding accepted properties: %v", err)
		}
	})
}

// FuzzReaderOpen opens arbitrary bytes as a table (T8): Open and every
// read on an opened table either succeed or fail with ErrCorruption; no
// panic, and a successful walk is strictly ordered in both directions.
func FuzzReaderOpen(f *testing.F) {
	f.Add(seedTable(f, 0, WriterOptions{}))
	f.Add(seedTable(f, 1, WriterOptions{}))
	f.Add(seedTable(f, 30, WriterOptions{BlockSize: 64}))
	f.Add(seedTable(f, 30, WriterOptions{Filter: filters.TypeNone, Compression: NoCompression, BlockSize: 100}))
	f.Add(seedTable(f, 30, WriterOptions{Filter: filters.TypeBloom}))
	f.Add(seedTable(f, 30, WriterOptions{RangeFilterBitsPerKey: 10}))
	f.Add(seedTableWithRangeDels(f))
	f.Add([]byte("not a table"))
	f.Fuzz(func(t *testing.T, data []byte) {
		fs := vfs.NewMem()
		w, _ := fs.Create("/f")
		w.Write(data)
		w.Close()
		rf, _ := fs.Open("/f")
		class := func(err error) {
			if err != nil && !errors.Is(err, base.ErrCorruption) {
				t.Fatalf("error of the wrong class: %v", err)
			}
		}
		r, err := Open(rf, int64(len(data)), ReaderOptions{Cache: NewCache(1 << 20)})
		if err != nil {
			class(err)
			return
		}
		it := r.NewIter(nil, nil)
		var keys []base.InternalKey
		for ok := it.First(); ok; ok = it.Next() {
			if len(keys) > 0 && base.Compare(keys[len(keys)-1], it.Key()) >= 0 {
				t.Fatal("forward walk out of order")
			}
			keys = append(keys, it.Key().Clone())
		}
		class(it.Error())
		clean := it.Error() == nil
		n := 0
		for ok := it.Last(); ok; ok = it.Prev() {
			n++
		}
		class(it.Error())
		if clean && it.Error() == nil && n != len(keys) {
			t.Fatalf("forward saw %d entries, backward %d", len(keys), n)
		}
		for _, k := range keys {
			_, _, _, err := r.Get(k.UserKey, base.SeqNumMax)
			class(err)
			it.SeekGE(k)
			it.SeekLT(k)
			class(it.Error())
		}
		r.Get([]byte("absent"), base.SeqNumMax)
		// The range-deletion block is untrusted too (format 2): what Open
		// accepted answers without panicking.
		for _, rd := range r.RangeDels() {
			r.RangeDelCover(rd.Start, base.SeqNumMax)
			r.EstimateDataBytes(rd.Start, rd.End)
		}
		r.EstimateDataBytes(nil, []byte{0xff})
	})
}

// exerciseUnvalidated runs every block iterator operation on a block that
// only parseBlock has seen, as a Get or scan does outside invariants
// builds: nothing may panic or loop, every key yielded must be a valid
// internal key, and every error must be errMalformed.
func exerciseUnvalidated(t *testing.T, b *block) {
	t.Helper()
	var it blockIter
	it.init(b)
	checkErr := func(op string) {
		if it.err != nil && !errors.Is(it.err, errMalformed) {
			t.Fatalf("%s: error of the wrong class: %v", op, it.err)
		}
		if it.valid && !it.key.Kind().Valid() {
			t.Fatalf("%s: yielded a key of invalid kind", op)
		}
	}
	var keys []base.InternalKey
	for ok := it.first(); ok; ok = it.nextEntry() {
		keys = append(keys, it.key.Clone())
	}
	checkErr("forward walk")
	for ok := it.last(); ok; ok = it.prevEntry() {
	}
	checkErr("backward walk")
	for _, k := range append(keys, base.MakeSearchKey(nil, base.SeqNumMax), base.MakeSearchKey([]byte{0xff, 0xff}, 0)) {
		it.init(b)
		it.seekGE(k)
		checkErr("seekGE")
		it.init(b)
		it.seekLT(k)
		checkErr("seekLT")
	}
}

// swapFirstEntries rebuilds the block, restart interval 1 (every entry
// stores its full key), with its first two entries swapped: every entry
// still decodes, but the keys are out of order, which only validate
// notices.
func swapFirstEntries(data []byte) []byte {
	b, err := parseBlock(data)
	if err != nil || b.numRestarts < 2 {
		return data
	}
	var it blockIter
	it.init(b)
	type entry struct{ key, value []byte }
	var es []entry
	for ok := it.first(); ok; ok = it.nextEntry() {
		es = append(es, entry{it.key.Encode(nil), slices.Clone(it.value)})
	}
	es[0], es[1] = es[1], es[0]
	w := blockWriter{restartInterval: 1}
	for _, e := range es {
		w.add(e.key, e.value)
	}
	return slices.Clone(w.finish())
}

// shiftSecondRestart returns the block with its second restart offset
// moved one byte into an entry: parseBlock accepts it (still increasing,
// still inside), validate does not.
func shiftSecondRestart(data []byte) []byte {
	out := slices.Clone(data)
	b, err := parseBlock(out)
	if err != nil || b.numRestarts < 2 {
		return out
	}
	binary.LittleEndian.PutUint32(out[b.entriesEnd+4:], uint32(b.restart(1)+1))
	return out
}

// rejected reports whether a decoder refused its input (err is not nil),
// failing t unless it did so with an error of class: a fuzz target's
// decoder may reject anything, but only in the way its caller expects.
func rejected(t *testing.T, err, class error) bool {
	t.Helper()
	if err != nil && !errors.Is(err, class) {
		t.Fatalf("error of the wrong class: %v", err)
	}
	return err != nil
}
