package sstable

import (
	"encoding/hex"
	"fmt"
	"strings"
	"testing"

	"github.com/sievekv/sievekv/filters"
	"github.com/sievekv/sievekv/internal/base"
	"github.com/sievekv/sievekv/internal/rangedel"
	"github.com/sievekv/sievekv/internal/testutil/golden"
	"github.com/sievekv/sievekv/vfs"
)

// goldenEntries is a fixed input touching every block feature: shared
// prefixes, a restart, a tombstone, an empty value, a compressible block.
func goldenEntries() []kv {
	var es []kv
	for i := range 20 {
		kind := base.KindSet
		var v []byte
		if i%7 == 3 {
			kind = base.KindDelete
		} else if i != 5 {
			v = []byte(strings.Repeat(fmt.Sprint(i%10), 12))
		}
		es = append(es, kv{base.MakeInternalKey([]byte(fmt.Sprintf("golden-%02d", i)), base.SeqNum(100-i), kind), v})
	}
	return es
}

// TestGoldenTable pins the bytes of a table written without a filter (the
// filter encodings are pinned by filters/ itself), so the format cannot
// drift by accident. Run with -update after an intended format change,
// together with a FormatVersion bump. The rangedel case is format 2.
func TestGoldenTable(t *testing.T) {
	for _, c := range []struct {
		name      string
		opts      WriterOptions
		rangeDels []rangedel.Tombstone
	}{
		{"nofilter-snappy", WriterOptions{Filter: filters.TypeNone, BlockSize: 256}, nil},
		{"nofilter-raw-restart4", WriterOptions{Filter: filters.TypeNone, BlockSize: 200, Compression: NoCompression, BlockRestartInterval: 4}, nil},
		{"rangedel-nofilter-snappy", WriterOptions{Filter: filters.TypeNone, BlockSize: 256}, goldenRangeDels()},
	} {
		t.Run(c.name, func(t *testing.T) {
			fs := vfs.NewMem()
			md := writeTable(t, fs, "/g", goldenEntries(), c.opts, c.rangeDels...)
			f, _ := fs.Open("/g")
			got := make([]byte, md.Size)
			f.ReadAt(got, 0)
			golden.Check(t, c.name, hex.Dump(got))
			r := openTable(t, fs, "/g", ReaderOptions{})
			checkWalks(t, r.NewIter(nil, nil), goldenEntries())
		})
	}
}
