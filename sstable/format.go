package sstable

import (
	"encoding/binary"
	"hash/crc32"

	"github.com/sievekv/sievekv/internal/base"
)

// Table layout (docs/format.md, "Sorted table", has the byte diagrams):
//
//	[data block 0] ... [data block n-1] [range-deletion block]?
//	[range filter block]? [filter block]? [index block]
//	[properties block] [footer]
//
// The range-deletion block (format 2 only) and the range filter block are
// located by the properties, not by the footer.
//
// Every block is stored as contents || tag (1 byte) || CRC32C (4 bytes LE)
// of contents||tag; a handle's length counts the contents only (T1).

// FormatVersion is the newest table format this package writes; it reads
// every version listed.
//
//	1: first format (sievekv 0.1): prefix-compressed blocks with restart
//	   arrays, snappy or none, CRC32C trailers, one whole-table filter
//	   block, varint properties, 64-byte footer.
//	2: 1 plus a range-deletion block after the data blocks, located by
//	   three trailing properties fields. Only a table that holds range
//	   tombstones is written in format 2; any other is written in format 1,
//	   byte for byte as before, so older readers still open it.
const FormatVersion uint32 = 2

// formatVersionPointsOnly is the version of a table without range
// tombstones.
const formatVersionPointsOnly uint32 = 1

// Magic closes every table: the ASCII bytes "SVKVSST1" read as a
// little-endian uint64. Do not change: on disk.
const Magic uint64 = 0x31545353_564b5653

const (
	// FooterLen is the fixed size of the footer.
	FooterLen = 64
	// blockTrailerLen is the tag byte plus the CRC32C.
	blockTrailerLen = 5
	// maxBlockLen bounds a handle's length: no block this package writes
	// comes near it, and a corrupt handle must not make the reader
	// allocate gigabytes.
	maxBlockLen = 1 << 30
)

// Compression tags of a block trailer. Do not renumber: on disk.
const (
	tagNone   byte = 0
	tagSnappy byte = 1
)

// crcTable is the Castagnoli polynomial (CRC32C), hardware-accelerated on
// amd64 and arm64.
var crcTable = crc32.MakeTable(crc32.Castagnoli)

// blockHandle locates a block's contents; the trailer follows them (T1).
type blockHandle struct {
	offset, length uint64
}

func (h blockHandle) end() uint64 { return h.offset + h.length + blockTrailerLen }

// appendHandle encodes a handle as two uvarints (index block values).
func appendHandle(dst []byte, h blockHandle) []byte {
	dst = binary.AppendUvarint(dst, h.offset)
	return binary.AppendUvarint(dst, h.length)
}

// decodeHandle decodes a handle that must fill b exactly.
func decodeHandle(b []byte) (blockHandle, bool) {
	off, n := binary.Uvarint(b)
	if n <= 0 {
		return blockHandle{}, false
	}
	length, m := binary.Uvarint(b[n:])
	if m <= 0 || n+m != len(b) || length > maxBlockLen {
		return blockHandle{}, false
	}
	return blockHandle{off, length}, true
}

// footer is the fixed 64-byte tail of a table:
//
//	0  filter handle offset, length  (2 x u64 LE; length 0 = no filter)
//	16 index handle offset, length   (2 x u64 LE)
//	32 properties handle offset, len (2 x u64 LE)
//	48 format version                (u32 LE)
//	52 CRC32C of bytes [0, 52)       (u32 LE)
//	56 magic                         (u64 LE)
type footer struct {
	filter, index, props blockHandle
	version              uint32
	// rangeDel is not in the footer's bytes: a format 2 table records it
	// in its properties, and Open fills it in from there.
	rangeDel blockHandle
}

func (f footer) encode() []byte {
	b := make([]byte, FooterLen)
	le := binary.LittleEndian
	le.PutUint64(b[0:], f.filter.offset)
	le.PutUint64(b[8:], f.filter.length)
	le.PutUint64(b[16:], f.index.offset)
	le.PutUint64(b[24:], f.index.length)
	le.PutUint64(b[32:], f.props.offset)
	le.PutUint64(b[40:], f.props.length)
	le.PutUint32(b[48:], f.version)
	le.PutUint32(b[52:], crc32.Checksum(b[:52], crcTable))
	le.PutUint64(b[56:], Magic)
	return b
}

// decodeFooter checks magic, checksum and version of a footer and that its
// handles tile [0, size) in the order of the layout (T2). It returns a bare
// reason; the caller adds the file name.
func decodeFooter(b []byte, size uint64) (footer, error) {
	le := binary.LittleEndian
	if len(b) != FooterLen {
		return footer{}, base.CorruptionErrorf("footer is %d bytes, want %d", len(b), FooterLen)
	}
	if m := le.Uint64(b[56:]); m != Magic {
		return footer{}, base.CorruptionErrorf("bad magic %#x (not a sievekv table)", m)
	}
	if got, want := le.Uint32(b[52:]), crc32.Checksum(b[:52], crcTable); got != want {
		return footer{}, base.CorruptionErrorf("footer checksum mismatch (stored %#x, computed %#x)", got, want)
	}
	f := footer{
		filter:  blockHandle{le.Uint64(b[0:]), le.Uint64(b[8:])},
		index:   blockHandle{le.Uint64(b[16:]), le.Uint64(b[24:])},
		props:   blockHandle{le.Uint64(b[32:]), le.Uint64(b[40:])},
		version: le.Uint32(b[48:]),
	}
	if f.version < formatVersionPointsOnly || f.version > FormatVersion {
		return footer{}, base.CorruptionErrorf("unsupported format version %d", f.version)
	}
	for _, h := range []blockHandle{f.filter, f.index, f.props} {
		if h.length > maxBlockLen || h.offset > size {
			return footer{}, base.CorruptionErrorf("block handle (%d, %d) out of range", h.offset, h.length)
		}
	}
	if size < FooterLen || f.props.end() != size-FooterLen || f.index.end() != f.props.offset {
		return footer{}, base.CorruptionErrorf("index/properties handles do not tile the table tail")
	}
	if f.filter.length != 0 && f.filter.end() != f.index.offset {
		return footer{}, base.CorruptionErrorf("filter handle does not end where the index starts")
	}
	if f.filter.length == 0 && f.filter.offset != 0 {
		return footer{}, base.CorruptionErrorf("absent filter with nonzero offset %d", f.filter.offset)
	}
	return f, nil
}

// dataEnd is where the data blocks stop.
func (f footer) dataEnd() uint64 {
	if f.rangeDel.length != 0 {
		return f.rangeDel.offset
	}
	return f.metaStart()
}

// metaStart is where the filter, or without one the index, starts: the
// end of the range-deletion block when there is one.
func (f footer) metaStart() uint64 {
	if f.filter.length != 0 {
		return f.filter.offset
	}
	return f.index.offset
}
