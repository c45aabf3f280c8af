package sstable

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/sievekv/sievekv/filters"
	"github.com/sievekv/sievekv/internal/base"
	"github.com/sievekv/sievekv/vfs"
)

// region is a named byte range of a table, for sampling flips.
type region struct {
	name       string
	start, end uint64
}

// tableRegions lists every region of a table: each data block with its
// trailer, the filter, index and properties blocks, and the footer.
func tableRegions(t *testing.T, r *Reader) []region {
	var rs []region
	for i, e := range r.index {
		rs = append(rs, region{fmt.Sprintf("data block %d", i), e.handle.offset, e.handle.end()})
	}
	f := r.footer
	if f.filter.length > 0 {
		rs = append(rs, region{"filter", f.filter.offset, f.filter.end()})
	}
	rs = append(rs, region{"index", f.index.offset, f.index.end()},
		region{"properties", f.props.offset, f.props.end()},
		region{"footer", r.size - FooterLen, r.size})
	// The regions must tile the file: every byte is sampled from somewhere.
	next := uint64(0)
	for _, x := range rs {
		if x.start != next {
			t.Fatalf("regions leave a gap before %s", x.name)
		}
		next = x.end
	}
	if next != r.size {
		t.Fatalf("regions end at %d of %d", next, r.size)
	}
	return rs
}

// exercise runs every read the model can check: Open, a Get per user key
// and per absent neighbour, and full walks both ways. It returns whether an
// operation reported corruption, and fails the test on a wrong answer or
// an error of any other class.
func exercise(t *testing.T, data []byte, entries []kv, what string) (detected bool) {
	t.Helper()
	check := func(err error) bool {
		if err == nil {
			return false
		}
		if !errors.Is(err, base.ErrCorruption) {
			t.Fatalf("%s: error without ErrCorruption: %v", what, err)
		}
		if !bytes.Contains([]byte(err.Error()), []byte("c.sst")) {
			t.Fatalf("%s: error does not name the file: %v", what, err)
		}
		return true
	}
	r, err := openBytes(t, data, "c.sst")
	if err != nil {
		return check(err)
	}
	for i, e := range entries {
		if i > 0 && bytes.Equal(entries[i-1].key.UserKey, e.key.UserKey) {
			continue
		}
		for _, uk := range [][]byte{e.key.UserKey, append(slices.Clone(e.key.UserKey), 0)} {
			want, wantOK := modelGet(entries, uk, base.SeqNumMax)
			v, kind, ok, err := r.Get(uk, base.SeqNumMax)
			if check(err) {
				detected = true
				continue
			}
			if ok != wantOK || (ok && (kind != want.key.Kind() || !bytes.Equal(v, want.value))) {
				t.Fatalf("%s: wrong answer for Get(%q)", what, uk)
			}
		}
	}
	it := r.NewIter(nil, nil)
	i := 0
	for ok := it.First(); ok; ok = it.Next() {
		if i >= len(entries) || !sameEntry(it, entries[i]) {
			t.Fatalf("%s: forward walk returned a wrong entry at %d", what, i)
		}
		i++
	}
	if check(it.Error()) {
		detected = true
	} else if i != len(entries) {
		t.Fatalf("%s: forward walk silently stopped at %d of %d", what, i, len(entries))
	}
	it = r.NewIter(nil, nil)
	i = len(entries) - 1
	for ok := it.Last(); ok; ok = it.Prev() {
		if i < 0 || !sameEntry(it, entries[i]) {
			t.Fatalf("%s: backward walk returned a wrong entry at %d", what, i)
		}
		i--
	}
	if check(it.Error()) {
		detected = true
	} else if i != -1 {
		t.Fatalf("%s: backward walk silently stopped at %d", what, i)
	}
	return detected
}

// TestCorruptionByteFlips flips sampled bytes of every region (T1, T2, T8):
// each operation either fails with ErrCorruption naming the file or returns
// the right answer, and because every byte is checksummed and the walks
// touch every block, every flip is detected by some operation.
func TestCorruptionByteFlips(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 13))
	// Compressible values so some blocks are snappy-compressed.
	entries := makeEntries(rng, 600, keyGens["plain"], func() int { return 40 })
	for i := range entries {
		if entries[i].value != nil && i%2 == 0 {
			entries[i].value = bytes.Repeat([]byte{byte(i)}, 40)
		}
	}
	for _, ft := range []filters.Type{filters.TypeBinaryFuse8, filters.TypeBloom, filters.TypeNone} {
		t.Run(ft.String(), func(t *testing.T) {
			fs := vfs.NewMem()
			writeTable(t, fs, "/t.sst", entries, WriterOptions{BlockSize: 1024, Filter: ft})
			r := openTable(t, fs, "/t.sst", ReaderOptions{})
			orig := make([]byte, r.Size())
			r.file.ReadAt(orig, 0)
			if exercise(t, orig, entries, "pristine") {
				t.Fatal("pristine table reported corruption")
			}
			samples := 0
			for _, reg := range tableRegions(t, r) {
				n := reg.end - reg.start
				// Every region gets its first byte, its tag, its CRC and a
				// random byte; metadata regions get ten more random bytes.
				// Data blocks rotate through the positions to keep the
				// test fast while still covering each kind of byte.
				offs := []uint64{reg.start, reg.end - 5, reg.end - 1, reg.start + rng.Uint64N(n)}
				if bytes.HasPrefix([]byte(reg.name), []byte("data")) {
					offs = []uint64{offs[samples%4], reg.start + rng.Uint64N(n)}
				} else {
					for range 10 {
						offs = append(offs, reg.start+rng.Uint64N(n))
					}
				}
				for _, off := range offs {
					if off < reg.start || off >= reg.end {
						continue
					}
					data := slices.Clone(orig)
					data[off] ^= byte(1 << rng.IntN(8))
					what := fmt.Sprintf("flip at %d (%s)", off, reg.name)
					if !exercise(t, data, entries, what) {
						t.Fatalf("%s went undetected", what)
					}
					samples++
				}
			}
			// Truncations anywhere must fail Open (the footer moves).
			for _, cut := range []int{0, 1, FooterLen - 1, FooterLen, len(orig) / 2, len(orig) - 1} {
				if !exercise(t, orig[:cut], entries, fmt.Sprintf("truncated to %d", cut)) {
					t.Fatalf("truncation to %d undetected", cut)
				}
			}
			t.Logf("%d flips, all detected", samples)
		})
	}
}
