package sstable

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/golang/snappy"
	"runtime"
	"testing"

	"github.com/sievekv/sievekv/filters"
	"github.com/sievekv/sievekv/internal/base"
	"github.com/sievekv/sievekv/vfs"
)

// Hostile tables: bytes whose checksums are all valid (recomputed after
// each edit), so only the reader's structural checks stand between them
// and a panic, an allocation bomb or a wrong answer (T8).

// resealBlock rewrites the stored block at h in table: contents replaced
// by c (same length as h.length), tag set, CRC32C recomputed.
func resealBlock(table []byte, h blockHandle, c []byte, tag byte) {
	if uint64(len(c)) != h.length {
		panic("resealBlock: length change")
	}
	copy(table[h.offset:], c)
	table[h.offset+h.length] = tag
	crc := crc32.Update(crc32.Checksum(c, crcTable), crcTable, []byte{tag})
	binary.LittleEndian.PutUint32(table[h.offset+h.length+1:], crc)
}

// allocatedDuring returns the bytes allocated while f ran.
func allocatedDuring(f func()) uint64 {
	var a, b runtime.MemStats
	runtime.ReadMemStats(&a)
	f()
	runtime.ReadMemStats(&b)
	return b.TotalAlloc - a.TotalAlloc
}

func wantCorruption(t *testing.T, what string, err error) {
	t.Helper()
	if err == nil || !errors.Is(err, base.ErrCorruption) {
		t.Fatalf("%s: want a corruption error, got %v", what, err)
	}
}

var _ = bytes.Equal

// snappyBomb returns n bytes of snappy contents whose header claims a
// decoded length of claim bytes.
func snappyBomb(n int, claim uint64) []byte {
	c := binary.AppendUvarint(nil, claim)
	return append(c, make([]byte, n-len(c))...)
}

func TestHostileSnappyHeaderAllocation(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	entries := makeEntries(rng, 200, keyGens["plain"], func() int { return 20 })
	data := tableBytes(t, entries, WriterOptions{BlockSize: 512})
	r, err := openBytes(t, data, "h.sst")
	if err != nil {
		t.Fatal(err)
	}
	dh, ih := r.index[0].handle, r.footer.index
	t.Run("data", func(t *testing.T) {
		bad := bytes.Clone(data)
		resealBlock(bad, dh, snappyBomb(int(dh.length), maxBlockLen), tagSnappy)
		r, err := openBytes(t, bad, "h.sst")
		if err != nil {
			t.Fatal(err)
		}
		var gerr error
		n := allocatedDuring(func() { _, _, _, gerr = r.Get(entries[0].key.UserKey, base.SeqNumMax) })
		wantCorruption(t, "Get", gerr)
		if n > 64<<20 {
			t.Fatalf("a %d-byte block made Get allocate %d bytes", dh.length, n)
		}
	})
	t.Run("index", func(t *testing.T) {
		bad := bytes.Clone(data)
		resealBlock(bad, ih, snappyBomb(int(ih.length), maxBlockLen), tagSnappy)
		var oerr error
		n := allocatedDuring(func() { _, oerr = openBytes(t, bad, "h.sst") })
		wantCorruption(t, "Open", oerr)
		if n > 64<<20 {
			t.Fatalf("a %d-byte index block made Open allocate %d bytes", ih.length, n)
		}
	})
}

// TestSnappyExpansionBoundAdmitsRealBlocks: the most compressible blocks
// (long runs of one byte) stay within maxSnappyExpansion and read back.
func TestSnappyExpansionBoundAdmitsRealBlocks(t *testing.T) {
	for _, n := range []int{1, 100, 4 << 10, 1 << 20} {
		c := snappy.Encode(nil, make([]byte, n))
		if got := len(c) * maxSnappyExpansion; got < n {
			t.Fatalf("%d zero bytes compress to %d: bound %d too small", n, len(c), got)
		}
	}
	entries := []kv{{base.MakeInternalKey([]byte("a"), 1, base.KindSet), make([]byte, 1<<20)}}
	data := tableBytes(t, entries, WriterOptions{})
	r, err := openBytes(t, data, "z.sst")
	if err != nil {
		t.Fatal(err)
	}
	v, _, ok, err := r.Get([]byte("a"), base.SeqNumMax)
	if err != nil || !ok || !bytes.Equal(v, entries[0].value) {
		t.Fatalf("Get: ok %v err %v", ok, err)
	}
}

// withProperties returns table with its properties block replaced by p
// (any length), the footer's handle and checksum rewritten to match.
func withProperties(table []byte, p Properties) []byte {
	le := binary.LittleEndian
	ft := table[len(table)-FooterLen:]
	off := le.Uint64(ft[32:])
	c := p.encode()
	out := append(bytes.Clone(table[:off]), c...)
	out = append(out, make([]byte, blockTrailerLen)...)
	resealBlock(out, blockHandle{off, uint64(len(c))}, c, tagNone)
	nf := bytes.Clone(ft)
	le.PutUint64(nf[40:], uint64(len(c)))
	le.PutUint32(nf[52:], crc32.Checksum(nf[:52], crcTable))
	return append(out, nf...)
}

// TestHostileRangeDelHandleWraps: a range-deletion handle whose offset is
// near 2^64 wraps its end around to where the range filter starts.
func TestHostileRangeDelHandleWraps(t *testing.T) {
	data := seedTableWithRangeDels(t)
	r, err := openBytes(t, data, "w.sst")
	if err != nil {
		t.Fatal(err)
	}
	p := r.Properties()
	p.RangeDelOffset = ^uint64(0) - 99
	p.DataSize = p.RangeDelOffset
	p.RangeDelLength = r.rangeFilterStart + 100 - blockTrailerLen
	bad := withProperties(data, p)
	_, err = openBytes(t, bad, "w.sst")
	wantCorruption(t, "Open", err)
}

// tableBlocks lists every checksummed block of an opened table.
func tableBlocks(r *Reader) []blockHandle {
	var hs []blockHandle
	for _, e := range r.index {
		hs = append(hs, e.handle)
	}
	f := r.footer
	if f.rangeDel.length > 0 {
		hs = append(hs, f.rangeDel)
	}
	if n := r.props.RangeFilterSize; n > 0 {
		hs = append(hs, blockHandle{r.rangeFilterStart, n})
	}
	if f.filter.length > 0 {
		hs = append(hs, f.filter)
	}
	return append(hs, f.index, f.props)
}

// TestHostileResealedMutations mutates blocks in place and reseals them,
// so every checksum holds: Open and every read must not panic and may
// fail only with ErrCorruption.
func TestHostileResealedMutations(t *testing.T) {
	seeds := [][]byte{
		seedTable(t, 30, WriterOptions{BlockSize: 64}),
		seedTable(t, 30, WriterOptions{BlockSize: 64, Compression: NoCompression}),
		seedTable(t, 30, WriterOptions{RangeFilterBitsPerKey: 10, BlockSize: 128}),
		seedTableWithRangeDels(t),
	}
	rng := rand.New(rand.NewPCG(3, 3))
	class := func(err error) {
		t.Helper()
		if err != nil && !errors.Is(err, base.ErrCorruption) {
			t.Fatalf("error of the wrong class: %v", err)
		}
	}
	for si, seed := range seeds {
		r0, err := openBytes(t, seed, "m.sst")
		if err != nil {
			t.Fatal(err)
		}
		blocks := tableBlocks(r0)
		for iter := 0; iter < 3000; iter++ {
			h := blocks[rng.IntN(len(blocks))]
			bad := bytes.Clone(seed)
			c := bytes.Clone(bad[h.offset : h.offset+h.length])
			for n := 1 + rng.IntN(3); n > 0 && len(c) > 0; n-- {
				switch rng.IntN(3) {
				case 0:
					c[rng.IntN(len(c))] ^= byte(1 << rng.IntN(8))
				case 1:
					c[rng.IntN(len(c))] = byte(rng.IntN(256))
				default:
					c[rng.IntN(len(c))] = [...]byte{0, 0x7f, 0x80, 0xff}[rng.IntN(4)]
				}
			}
			tag := bad[h.offset+h.length]
			resealBlock(bad, h, c, tag)
			func() {
				defer func() {
					if p := recover(); p != nil {
						t.Fatalf("seed %d, block at %d, iteration %d: panic: %v", si, h.offset, iter, p)
					}
				}()
				r, err := openBytes(t, bad, "m.sst")
				if err != nil {
					class(err)
					return
				}
				it := r.NewIter(nil, nil)
				var keys []base.InternalKey
				for ok := it.First(); ok; ok = it.Next() {
					keys = append(keys, it.Key().Clone())
				}
				class(it.Error())
				for ok := it.Last(); ok; ok = it.Prev() {
				}
				class(it.Error())
				for _, k := range keys {
					_, _, _, err := r.Get(k.UserKey, base.SeqNumMax)
					class(err)
					it2 := r.NewIter(k.UserKey, nil)
					it2.SeekGE(k)
					it2.SeekLT(k)
					it2.First()
					it2.Last()
					class(it2.Error())
					it2.Close()
				}
				it.Close()
				class(r.VerifyBlocks())
				for _, rd := range r.RangeDels() {
					r.RangeDelCover(rd.Start, base.SeqNumMax)
				}
				r.MayContainRange([]byte("a"), []byte("b"))
				r.Close()
			}()
		}
	}
}

// failingFile fails every Write and counts Close calls.
type failingFile struct {
	vfs.File
	closes int
}

func (f *failingFile) Write(p []byte) (int, error) { return 0, errors.New("injected write error") }
func (f *failingFile) Close() error {
	f.closes++
	return f.File.Close()
}

// TestFinishClosesFileAfterFailedAdd: NewWriter's contract is that
// Finish closes the file, and Finish's own failures do; but after an Add
// had failed (a sticky write error), Finish returned that error with the
// file still open, so a caller that drops the writer on a Finish error,
// as the contract allows, leaked the file.
func TestFinishClosesFileAfterFailedAdd(t *testing.T) {
	fs := vfs.NewMem()
	f0, _ := fs.Create("/f")
	f := &failingFile{File: f0}
	w := NewWriter(f, WriterOptions{BlockSize: 1})
	var addErr error
	for i := 0; addErr == nil && i < 1<<16; i++ {
		addErr = w.Add(base.MakeInternalKey(fmt.Appendf(nil, "k%08d", i), 1, base.KindSet), make([]byte, 1024))
	}
	if addErr == nil {
		t.Fatal("no Add failed")
	}
	if _, err := w.Finish(); err == nil {
		t.Fatal("Finish after a failed Add succeeded")
	}
	if f.closes != 1 {
		t.Fatalf("Finish after a failed Add closed the file %d times, want 1", f.closes)
	}
	if err := w.Abort(); err != nil || f.closes != 1 {
		t.Fatalf("Abort after Finish: %v, %d closes", err, f.closes)
	}
}

// withIndex returns table with its index block replaced by one holding
// idx (uncompressed), and the properties and footer rewritten after it.
func withIndex(table []byte, r *Reader, idx []indexEntry) []byte {
	bw := blockWriter{restartInterval: 1}
	for _, e := range idx {
		bw.add(e.sep.Encode(nil), appendHandle(nil, e.handle))
	}
	c := bytes.Clone(bw.finish())
	ih := blockHandle{r.footer.index.offset, uint64(len(c))}
	out := append(bytes.Clone(table[:ih.offset]), c...)
	out = append(out, make([]byte, blockTrailerLen)...)
	resealBlock(out, ih, c, tagNone)
	p := r.props
	p.IndexSize = uint64(len(c))
	pc := p.encode()
	ph := blockHandle{uint64(len(out)), uint64(len(pc))}
	out = append(out, pc...)
	out = append(out, make([]byte, blockTrailerLen)...)
	resealBlock(out, ph, pc, tagNone)
	ft := r.footer
	ft.index, ft.props = ih, ph
	return append(out, ft.encode()...)
}

// TestVerifyBlocksChecksSeparatorShape: T5 lets a separator be the last
// key of its block or (u, TrailerMax) with u strictly between the user
// keys around the cut. An index whose separator is instead the next
// block's first user key at a higher sequence number still orders every
// key (block i's keys <= s_i < block i+1's), so VerifyBlocks passed it,
// yet a Get of that user key stops at block i and misses its versions
// in block i+1: a wrong answer on a table kv.Check vouched for.
func TestVerifyBlocksChecksSeparatorShape(t *testing.T) {
	var entries []kv
	for i := 0; i < 40; i++ {
		entries = append(entries, kv{base.MakeInternalKey(fmt.Appendf(nil, "key%04d", i), base.SeqNum(100+i), base.KindSet), []byte("value")})
	}
	data := tableBytes(t, entries, WriterOptions{BlockSize: 64, Compression: NoCompression, Filter: filters.TypeNone})
	r, err := openBytes(t, data, "s.sst")
	if err != nil {
		t.Fatal(err)
	}
	if len(r.index) < 3 {
		t.Fatalf("%d blocks", len(r.index))
	}
	// The first key of block 1.
	b, err := r.readDataBlock(r.index[1].handle, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	var bi blockIter
	bi.init(&b.blk)
	if !bi.first() {
		t.Fatal("empty block")
	}
	next := bi.key.Clone()
	b.release()
	for _, sep := range []base.InternalKey{
		base.MakeInternalKey(next.UserKey, next.SeqNum()+1, base.KindSet), // not TrailerMax
		{UserKey: next.UserKey, Trailer: base.TrailerMax},                 // u not below the next block's
	} {
		idx := slices.Clone(r.index)
		idx[0].sep = sep
		bad := withIndex(data, r, idx)
		rb, err := openBytes(t, bad, "s.sst")
		if err != nil {
			t.Fatalf("separator %s: Open: %v", sep, err)
		}
		if _, _, found, err := rb.Get(next.UserKey, base.SeqNumMax); found || err != nil {
			t.Fatalf("separator %s did not hide %s from Get (found %v, err %v)", sep, next, found, err)
		}
		verr := rb.VerifyBlocks()
		wantCorruption(t, "VerifyBlocks with separator "+sep.String(), verr)
		if !strings.Contains(verr.Error(), "s.sst") {
			t.Fatalf("VerifyBlocks error does not name the file: %v", verr)
		}
	}
	// The honest table still verifies.
	if err := r.VerifyBlocks(); err != nil {
		t.Fatal(err)
	}
}

// TestDecodedBlockHintBounded: a raw read's buffer follows the table's
// mean decoded block size only within the stepped size classes, so
// properties claiming huge blocks (checksummed, but written by anyone)
// cannot make each read of a small block allocate their claim.
func TestDecodedBlockHintBounded(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 2))
	entries := makeEntries(rng, 500, keyGens["plain"], func() int { return 50 })
	for i := range entries {
		clear(entries[i].value) // compressible: the hint is for snappy blocks
	}
	r, err := openBytes(t, tableBytes(t, entries, WriterOptions{}), "b.sst")
	if err != nil {
		t.Fatal(err)
	}
	p := r.Properties()
	if got, want := r.decodedBlockHint, int(p.UncompressedDataSize/p.NumDataBlocks); got != want || got == 0 {
		t.Fatalf("hint %d for a real table, want its mean decoded block size %d", got, want)
	}
	for _, claim := range []uint64{bufStepLimit + 1, 512 << 20, 1 << 62} {
		p.UncompressedDataSize = claim * p.NumDataBlocks
		if got := decodedBlockHint(p); got != 0 {
			t.Fatalf("properties claiming %d-byte blocks give a hint of %d", claim, got)
		}
	}
	if got := decodedBlockHint(Properties{}); got != 0 {
		t.Fatalf("a table without data blocks gives a hint of %d", got)
	}
	p = r.Properties()
	p.DataSize = p.UncompressedDataSize + 5*p.NumDataBlocks // stored as is
	if got := decodedBlockHint(p); got != 0 {
		t.Fatalf("an uncompressed table gives a hint of %d: its raw buffers are the cached blocks", got)
	}
}
