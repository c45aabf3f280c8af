package sstable

import (
	"encoding/binary"
	"fmt"
	"strings"

	"github.com/sievekv/sievekv/filters"
	"github.com/sievekv/sievekv/internal/base"
)

// Properties describe a table; the writer records them in the properties
// block and the reader exposes them after Open.
type Properties struct {
	NumEntries    uint64 // all entries, tombstones included
	NumDeletions  uint64 // KindDelete entries
	NumDataBlocks uint64
	RawKeySize    uint64 // sum of encoded internal key lengths
	RawValueSize  uint64 // sum of value lengths
	// DataSize is the on-disk bytes of all data blocks, trailers included.
	DataSize uint64
	// UncompressedDataSize is the data blocks' contents before compression.
	UncompressedDataSize uint64
	IndexSize            uint64 // index block contents
	FilterType           filters.Type
	FilterSize           uint64 // filter block contents (0 without a filter)
	FilterKeys           uint64 // distinct user keys hashed into the filter
	// SmallestKey and LargestKey are the first and last internal keys
	// (zero values for an empty table).
	SmallestKey, LargestKey       base.InternalKey
	SmallestSeqNum, LargestSeqNum base.SeqNum
	// NumRangeDeletions counts the tombstones of the range-deletion block
	// at RangeDelOffset, RangeDelLength bytes long (format 2 only; all
	// three are zero in a table without range tombstones). The sequence
	// numbers above include theirs.
	NumRangeDeletions, RangeDelOffset, RangeDelLength uint64
	// RangeFilterSize is the range filter block's contents size, 0 when
	// the table has none.
	RangeFilterSize uint64
}

// encode writes the properties block contents: the uvarint fields in
// declaration order (FilterType as its one-byte TableCode), then each key as a uvarint
// length and its encoded bytes (length 0 for an empty table).
func (p *Properties) encode() []byte {
	var b []byte
	for _, v := range []uint64{p.NumEntries, p.NumDeletions, p.NumDataBlocks, p.RawKeySize,
		p.RawValueSize, p.DataSize, p.UncompressedDataSize, p.IndexSize} {
		b = binary.AppendUvarint(b, v)
	}
	code, _ := p.FilterType.TableCode() // the writer accepts only types with one
	b = append(b, code)
	b = binary.AppendUvarint(b, p.FilterSize)
	b = binary.AppendUvarint(b, p.FilterKeys)
	for _, k := range []base.InternalKey{p.SmallestKey, p.LargestKey} {
		if p.NumEntries == 0 {
			b = binary.AppendUvarint(b, 0)
			continue
		}
		b = binary.AppendUvarint(b, uint64(k.Size()))
		b = k.Encode(b)
	}
	b = binary.AppendUvarint(b, uint64(p.SmallestSeqNum))
	b = binary.AppendUvarint(b, uint64(p.LargestSeqNum))
	// The optional trailing fields, each group present only when nonzero
	// so every table has one encoding: the range-deletion triple (format
	// 2), then the range filter size. A reader tells them apart by how
	// many uvarints follow LargestSeqNum: 0, 1 (range filter), 3 (range
	// deletions) or 4 (both).
	if p.NumRangeDeletions > 0 {
		for _, v := range []uint64{p.NumRangeDeletions, p.RangeDelOffset, p.RangeDelLength} {
			b = binary.AppendUvarint(b, v)
		}
	}
	if p.RangeFilterSize > 0 {
		b = binary.AppendUvarint(b, p.RangeFilterSize)
	}
	return b
}

// decodeProperties parses a properties block strictly: every field present,
// no trailing bytes, keys valid internal keys (copied out of b), known
// filter type, and the counts consistent with each other.
func decodeProperties(b []byte) (Properties, error) {
	var p Properties
	uv := func(name string) (uint64, error) {
		v, n := binary.Uvarint(b)
		if n <= 0 {
			return 0, malformed("properties: bad varint for %s", name)
		}
		b = b[n:]
		return v, nil
	}
	fields := []struct {
		name string
		dst  *uint64
	}{{"entries", &p.NumEntries}, {"deletions", &p.NumDeletions}, {"data blocks", &p.NumDataBlocks},
		{"raw key size", &p.RawKeySize}, {"raw value size", &p.RawValueSize}, {"data size", &p.DataSize},
		{"uncompressed data size", &p.UncompressedDataSize}, {"index size", &p.IndexSize}}
	for _, f := range fields {
		v, err := uv(f.name)
		if err != nil {
			return Properties{}, err
		}
		*f.dst = v
	}
	if len(b) == 0 {
		return Properties{}, malformed("properties: missing filter type")
	}
	var ok bool
	if p.FilterType, ok = filters.TypeFromTableCode(b[0]); !ok {
		return Properties{}, malformed("properties: unknown filter type code %d", b[0])
	}
	b = b[1:]
	var err error
	if p.FilterSize, err = uv("filter size"); err != nil {
		return Properties{}, err
	}
	if p.FilterKeys, err = uv("filter keys"); err != nil {
		return Properties{}, err
	}
	var keyLens [2]uint64
	for i, dst := range []*base.InternalKey{&p.SmallestKey, &p.LargestKey} {
		n, err := uv("key length")
		keyLens[i] = n
		if err != nil {
			return Properties{}, err
		}
		if n > uint64(len(b)) {
			return Properties{}, malformed("properties: key length %d overruns the block", n)
		}
		if n > 0 {
			k, ok := base.DecodeInternalKey(b[:n])
			if !ok || !k.Kind().Valid() {
				return Properties{}, malformed("properties: invalid smallest/largest key")
			}
			*dst = k.Clone()
		}
		b = b[n:]
	}
	s, err := uv("smallest seqnum")
	if err != nil {
		return Properties{}, err
	}
	l, err := uv("largest seqnum")
	if err != nil {
		return Properties{}, err
	}
	p.SmallestSeqNum, p.LargestSeqNum = base.SeqNum(s), base.SeqNum(l)
	// The optional trailing fields (see encode): 0, 1, 3 or 4 uvarints.
	var tail []uint64
	for len(b) > 0 && len(tail) < 4 {
		v, err := uv("optional field")
		if err != nil {
			return Properties{}, err
		}
		tail = append(tail, v)
	}
	switch len(tail) {
	case 0:
	case 1:
		p.RangeFilterSize = tail[0]
	case 3, 4:
		p.NumRangeDeletions, p.RangeDelOffset, p.RangeDelLength = tail[0], tail[1], tail[2]
		if p.NumRangeDeletions == 0 || p.RangeDelLength == 0 {
			return Properties{}, malformed("properties: range-deletion fields with no range deletions")
		}
		if len(tail) == 4 {
			p.RangeFilterSize = tail[3]
		}
	default:
		return Properties{}, malformed("properties: %d optional fields, want 0, 1, 3 or 4", len(tail))
	}
	if len(tail) != 0 && len(tail) != 3 && p.RangeFilterSize == 0 {
		return Properties{}, malformed("properties: range filter size 0 recorded")
	}
	if len(b) != 0 {
		return Properties{}, malformed("properties: %d trailing bytes", len(b))
	}
	if p.NumDeletions > p.NumEntries || (p.NumEntries == 0) != (keyLens[0] == 0) || (keyLens[0] == 0) != (keyLens[1] == 0) ||
		(p.NumEntries == 0) != (p.NumDataBlocks == 0) || p.SmallestSeqNum > p.LargestSeqNum ||
		(p.NumEntries > 0 && base.Compare(p.SmallestKey, p.LargestKey) > 0) {
		return Properties{}, malformed("properties: inconsistent counts or key range")
	}
	return p, nil
}

// String renders the properties one per line, for tools and test failures.
func (p Properties) String() string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "entries: %d (%d deletions)\n", p.NumEntries, p.NumDeletions)
	fmt.Fprintf(&sb, "data: %d blocks, %d bytes on disk, %d uncompressed, raw keys %d, raw values %d\n",
		p.NumDataBlocks, p.DataSize, p.UncompressedDataSize, p.RawKeySize, p.RawValueSize)
	fmt.Fprintf(&sb, "index: %d bytes\n", p.IndexSize)
	fmt.Fprintf(&sb, "filter: %s, %d bytes over %d keys\n", p.FilterType, p.FilterSize, p.FilterKeys)
	if p.RangeFilterSize > 0 {
		fmt.Fprintf(&sb, "range filter: %d bytes\n", p.RangeFilterSize)
	}
	if p.NumEntries > 0 {
		fmt.Fprintf(&sb, "keys: %v .. %v, seqnums %d..%d\n", p.SmallestKey, p.LargestKey, p.SmallestSeqNum, p.LargestSeqNum)
	}
	if p.NumRangeDeletions > 0 {
		fmt.Fprintf(&sb, "range deletions: %d, %d bytes\n", p.NumRangeDeletions, p.RangeDelLength)
	}
	return sb.String()
}
