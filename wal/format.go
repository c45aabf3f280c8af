package wal

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
)

// Chunk header layout (docs/format.md, "Chunk"):
//
//	offset size field
//	0      4    masked CRC32C of bytes [4, HeaderSize) of the header and the payload
//	4      2    payload length, little-endian
//	6      1    chunk type (chunkFull ... chunkLast)
//	7      4    log number, low 32 bits, little-endian
//	11     8    synced offset: the file offset through which the writer had
//	            completed a Sync when this chunk was framed, little-endian
//	19     n    payload
const (
	// BlockSize is the fixed block size. 32 KiB is LevelDB's choice: large
	// enough that per-block padding is negligible, small enough that a reader
	// holds one block in memory.
	BlockSize = 32 << 10
	// HeaderSize is the size of a chunk header.
	HeaderSize = 19
	// MaxChunkPayload is the largest payload one chunk can carry.
	MaxChunkPayload = BlockSize - HeaderSize
)

// Chunk types. Do not renumber: on disk. Zero is never written so that a
// zero-filled region (preallocation, a lost page) is never a valid chunk.
const (
	chunkFull   = 1 // a whole record
	chunkFirst  = 2 // the first piece of a record continued in later chunks
	chunkMiddle = 3 // an inner piece
	chunkLast   = 4 // the final piece
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// maskDelta is LevelDB's CRC mask constant. Storing a rotated, offset CRC
// keeps the checksum of a payload that itself embeds a CRC (a log inside a
// record, as in tests that copy logs) from being trivially related to it.
const maskDelta = 0xa282ead8

func maskCRC(c uint32) uint32 { return (c>>15 | c<<17) + maskDelta }

// chunkCRC returns the masked checksum of a chunk whose header is hdr (only
// bytes [4:HeaderSize) are covered) and whose payload is payload.
func chunkCRC(hdr, payload []byte) uint32 {
	c := crc32.Update(0, castagnoli, hdr[4:HeaderSize])
	return maskCRC(crc32.Update(c, castagnoli, payload))
}

// header is a decoded chunk header.
type header struct {
	crc    uint32
	length int
	typ    byte
	logNum uint32
	synced uint64
}

func decodeHeader(b []byte) header {
	return header{
		crc:    binary.LittleEndian.Uint32(b[0:4]),
		length: int(binary.LittleEndian.Uint16(b[4:6])),
		typ:    b[6],
		logNum: binary.LittleEndian.Uint32(b[7:11]),
		synced: binary.LittleEndian.Uint64(b[11:19]),
	}
}

var (
	// ErrCorruption is wrapped by the error a Reader returns when damaged
	// bytes are followed by proof that they had been synced (see the package
	// documentation). The log cannot be trusted past Error.Offset.
	ErrCorruption = errors.New("wal: corruption")
	// ErrTornTail is wrapped by the error a Reader returns when the log ends
	// in bytes that are not a complete valid record and nothing proves they
	// had been synced: the trace of a crash. Truncating the file at
	// Error.Offset leaves a clean log.
	ErrTornTail = errors.New("wal: torn tail")
	// ErrClosed is returned by a Writer used after Close.
	ErrClosed = errors.New("wal: writer is closed")
	// ErrRead is wrapped, beside the file's own error, by the error a
	// Reader returns when reading the log failed: nothing is known about
	// the bytes, so it is neither ErrCorruption nor ErrTornTail.
	ErrRead = errors.New("wal: read failed")
)

// Error describes where and why a log stopped being readable. It wraps
// ErrCorruption or ErrTornTail; use errors.Is to tell them apart and
// errors.As to get the offset.
type Error struct {
	// Err is ErrCorruption or ErrTornTail.
	Err error
	// Offset is, for ErrTornTail, the end of the last good record: the size
	// to truncate the file to. For ErrCorruption it is the file offset of the
	// damaged chunk (or padding).
	Offset int64
	// BadOffset is the file offset where the unreadable bytes start. It
	// equals Offset for ErrCorruption and is >= Offset for ErrTornTail.
	BadOffset int64
	// Reason says what was wrong with the bytes at BadOffset.
	Reason string
}

func (e *Error) Error() string {
	if errors.Is(e.Err, ErrTornTail) {
		return fmt.Sprintf("%v: bytes at offset %d: %s (last good record ends at %d)",
			e.Err, e.BadOffset, e.Reason, e.Offset)
	}
	return fmt.Sprintf("%v: chunk at offset %d: %s", e.Err, e.BadOffset, e.Reason)
}

// Unwrap returns the sentinel so errors.Is works.
func (e *Error) Unwrap() error { return e.Err }
