package sstable

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/sievekv/sievekv/filters"
	"github.com/sievekv/sievekv/internal/base"
	"github.com/sievekv/sievekv/vfs"
)

// setPropertiesFilterCode rewrites the filter type byte of the table's
// properties block to code and recomputes the block's CRC32C, so that only
// the open-time agreement check (T9) can notice.
func setPropertiesFilterCode(t *testing.T, table []byte, code uint8) []byte {
	t.Helper()
	ft, err := decodeFooter(table[len(table)-FooterLen:], uint64(len(table)))
	if err != nil {
		t.Fatal(err)
	}
	out := slices.Clone(table)
	contents := out[ft.props.offset : ft.props.offset+ft.props.length]
	off := 0
	for range 8 { // the uvarint counts before the filter type (Properties.encode)
		_, n := binary.Uvarint(contents[off:])
		if n <= 0 {
			t.Fatal("properties block does not start with eight uvarints")
		}
		off += n
	}
	contents[off] = code
	tag := out[ft.props.offset+ft.props.length]
	crc := crc32.Update(crc32.Checksum(contents, crcTable), crcTable, []byte{tag})
	binary.LittleEndian.PutUint32(out[ft.props.offset+ft.props.length+1:], crc)
	return out
}

// openBytes opens a table held in memory, naming it name in errors.
func openBytes(t *testing.T, table []byte, name string) (*Reader, error) {
	t.Helper()
	fs := vfs.NewMem()
	f, _ := fs.Create("/" + name)
	f.Write(table)
	f.Close()
	rf, _ := fs.Open("/" + name)
	return Open(rf, int64(len(table)), ReaderOptions{Name: name})
}

// tableBytes writes a table and returns its bytes, without opening it.
func tableBytes(t *testing.T, entries []kv, opts WriterOptions) []byte {
	t.Helper()
	fs := vfs.NewMem()
	md := writeTable(t, fs, "/t.sst", entries, opts)
	f, err := fs.Open("/t.sst")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b := make([]byte, md.Size)
	if _, err := f.ReadAt(b, 0); err != nil {
		t.Fatal(err)
	}
	return b
}

func code(t *testing.T, ft filters.Type) uint8 {
	c, ok := ft.TableCode()
	if !ok {
		t.Fatalf("%s has no table code", ft)
	}
	return c
}

// lyingPolicy claims one type and builds another: the way a table whose
// properties and filter envelope disagree gets written with valid checksums.
type lyingPolicy struct {
	claims filters.Type
	builds filters.Policy
}

func (p lyingPolicy) Type() filters.Type                { return p.claims }
func (p lyingPolicy) Build(hs []uint64) ([]byte, error) { return p.builds.Build(hs) }

// TestFilterTypeDisagreementIsCorruption flips the filter type in one place
// of otherwise valid tables (every checksum recomputed) and checks that Open
// names the file in a *FilterMismatchError that wraps base.ErrCorruption,
// where before the check the table opened and answered from the wrong
// filter, or from none.
func TestFilterTypeDisagreementIsCorruption(t *testing.T) {
	entries := makeEntries(rand.New(rand.NewPCG(9, 9)), 300, keyGens["plain"], func() int { return 8 })
	bloom := tableBytes(t, entries, WriterOptions{Filter: filters.TypeBloom})
	blocked, err := filters.NewPolicy(filters.TypeBlockedBloom, filters.PolicyParams{BloomBitsPerKey: 10})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name  string
		table []byte
	}{
		{"properties say binary-fuse-8 over a bloom block", setPropertiesFilterCode(t, bloom, code(t, filters.TypeBinaryFuse8))},
		{"properties say none over a bloom block", setPropertiesFilterCode(t, bloom, code(t, filters.TypeNone))},
		{"properties say bloom without a filter block",
			setPropertiesFilterCode(t, tableBytes(t, entries, WriterOptions{Filter: filters.TypeNone}), code(t, filters.TypeBloom))},
		{"envelope says blocked-bloom under bloom properties",
			tableBytes(t, entries, WriterOptions{FilterPolicy: lyingPolicy{filters.TypeBloom, blocked}})},
	}
	if _, err := openBytes(t, bloom, "000042.sst"); err != nil {
		t.Fatalf("pristine table: %v", err)
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := openBytes(t, c.table, "000042.sst")
			var mm *FilterMismatchError
			if !errors.As(err, &mm) || !errors.Is(err, base.ErrCorruption) || mm.File != "000042.sst" {
				t.Fatalf("Open = %v, want a *FilterMismatchError for 000042.sst wrapping ErrCorruption", err)
			}
		})
	}
}

// TestEmptyTableHasNoFilterBlock pins the other half of T9: a table without
// keys records its filter type but carries no block, and opens.
func TestEmptyTableHasNoFilterBlock(t *testing.T) {
	r, err := openBytes(t, tableBytes(t, nil, WriterOptions{Filter: filters.TypeRibbon}), "000043.sst")
	if err != nil {
		t.Fatal(err)
	}
	if r.HasFilter() || r.Properties().FilterType != filters.TypeRibbon {
		t.Fatalf("empty table: filter %v, properties %s", r.HasFilter(), r.Properties().FilterType)
	}
}
