package sstable

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/sievekv/sievekv/filters"
	"github.com/sievekv/sievekv/internal/base"
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
// rejects them with errMalformed or accepts a block whose every iterator
// operation stays inside it, agrees with its entry count and order.
func FuzzBlock(f *testing.F) {
	f.Add(seedBlock(0, 16))
	f.Add(seedBlock(1, 16))
	f.Add(seedBlock(40, 16))
	f.Add(seedBlock(40, 1))
	f.Add(seedBlock(40, 3))
	f.Add([]byte{0, 0, 0, 0})
	f.Add([]byte{1, 0, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		b, err := parseBlock(data)
		if err != nil {
			if !errors.Is(err, errMalformed) {
				t.Fatalf("error of the wrong class: %v", err)
			}
			return
		}
		var it blockIter
		it.init(b)
		var keys []base.InternalKey
		for ok := it.first(); ok; ok = it.nextEntry() {
			keys = append(keys, it.key.Clone())
		}
		if it.err != nil || len(keys) != b.numEntries {
			t.Fatalf("forward walk: %d of %d entries, err %v", len(keys), b.numEntries, it.err)
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
		if err != nil {
			if !errors.Is(err, base.ErrCorruption) {
				t.Fatalf("error of the wrong class: %v", err)
			}
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
		if err != nil {
			if !errors.Is(err, errMalformed) {
				t.Fatalf("error of the wrong class: %v", err)
			}
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
	})
}
