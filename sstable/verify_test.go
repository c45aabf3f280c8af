package sstable

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/sievekv/sievekv/filters"
	"github.com/sievekv/sievekv/internal/base"
	"github.com/sievekv/sievekv/internal/invariants"
	"github.com/sievekv/sievekv/vfs"
)

// TestValidateRejectsWhatParseAccepts: the two checksum-valid defects a
// writer bug could produce, keys out of order and a restart offset inside
// an entry, pass the cheap parseBlock of the read path and are caught by
// validate (T4).
func TestValidateRejectsWhatParseAccepts(t *testing.T) {
	for name, data := range map[string][]byte{
		"keys out of order":             swapFirstEntries(seedBlock(2, 1)),
		"restart not an entry boundary": shiftSecondRestart(seedBlock(40, 16)),
	} {
		b, err := parseBlock(data)
		if err != nil {
			t.Fatalf("%s: parseBlock rejected it: %v", name, err)
		}
		exerciseUnvalidated(t, b)
		if _, err := b.validate(); !errors.Is(err, errMalformed) {
			t.Errorf("%s: validate = %v, want errMalformed", name, err)
		}
	}
}

// rewriteBlock applies damage to the contents of the uncompressed block at
// h in a table's bytes and recomputes the block's checksum, making a
// malformed block that the checksum (T1) cannot catch.
func rewriteBlock(t *testing.T, table []byte, h blockHandle, damage func(contents []byte)) []byte {
	t.Helper()
	out := slices.Clone(table)
	contents := out[h.offset : h.offset+h.length]
	tail := out[h.offset+h.length : h.end()]
	if tail[0] != tagNone {
		t.Fatalf("block at %d is compressed", h.offset)
	}
	damage(contents)
	binary.LittleEndian.PutUint32(tail[1:], crc32.Update(crc32.Checksum(contents, crcTable), crcTable, tail[:1]))
	return out
}

// TestVerifyBlocksFindsMisplacedRestart: a checksum-valid data block whose
// second restart points inside an entry is reported by VerifyBlocks as
// corruption naming the file, while Gets and scans of the damaged table
// never panic and fail, if at all, with ErrCorruption (in invariants
// builds the read path validates the block and must fail).
func TestVerifyBlocksFindsMisplacedRestart(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	entries := makeEntries(rng, 400, keyGens["plain"], func() int { return 24 })
	fs := vfs.NewMem()
	writeTable(t, fs, "/v.sst", entries, WriterOptions{BlockSize: 1024, Filter: filters.TypeNone})
	r := openTable(t, fs, "/v.sst", ReaderOptions{})
	if err := r.VerifyBlocks(); err != nil {
		t.Fatalf("pristine table: %v", err)
	}
	orig := make([]byte, r.Size())
	r.file.ReadAt(orig, 0)
	h := r.index[1].handle
	damaged := rewriteBlock(t, orig, h, func(c []byte) {
		n := int(binary.LittleEndian.Uint32(c[len(c)-4:]))
		if n < 2 {
			t.Fatalf("block has %d restarts", n)
		}
		at := len(c) - 4 - 4*n + 4
		binary.LittleEndian.PutUint32(c[at:], binary.LittleEndian.Uint32(c[at:])+1)
	})

	f, _ := fs.Create("/d.sst")
	f.Write(damaged)
	f.Close()
	rf, _ := fs.Open("/d.sst")
	d, err := Open(rf, int64(len(damaged)), ReaderOptions{Name: "d.sst"})
	if err != nil {
		t.Fatalf("Open: %v (the damage is in a data block)", err)
	}
	defer d.Close()
	err = d.VerifyBlocks()
	if !errors.Is(err, base.ErrCorruption) || !strings.Contains(err.Error(), "d.sst") {
		t.Fatalf("VerifyBlocks = %v, want ErrCorruption naming d.sst", err)
	}
	readErrs := 0
	for _, e := range entries {
		if _, _, _, err := d.Get(e.key.UserKey, base.SeqNumMax); err != nil {
			if !errors.Is(err, base.ErrCorruption) {
				t.Fatalf("Get: error of the wrong class: %v", err)
			}
			readErrs++
		}
	}
	it := d.NewIter(nil, nil)
	for ok := it.Last(); ok; ok = it.Prev() {
	}
	if err := it.Error(); err != nil && !errors.Is(err, base.ErrCorruption) {
		t.Fatalf("scan: error of the wrong class: %v", err)
	}
	if invariants.Enabled && readErrs == 0 {
		t.Fatal("invariants build: no Get of the damaged block reported corruption")
	}
}
