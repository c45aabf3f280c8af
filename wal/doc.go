// Package wal is sievekv's record log: the framing shared by the write-ahead
// log and the MANIFEST. A Writer appends opaque records to an io.Writer; a
// Reader returns them in order and says precisely where and how a log ends.
//
// Records are cut into chunks that never straddle a fixed 32 KiB block, each
// chunk carrying a CRC32C, its length, its position in the record
// (FULL/FIRST/MIDDLE/LAST), the low 32 bits of the log's number and the
// offset through which the writer had fsynced the file when the chunk was
// written. The byte layout is in docs/format.md, "Record log (WAL and
// MANIFEST)"; the reasons for each field are in docs/engine.md, "Why each
// chunk header field exists".
//
// # How a log ends
//
// Reader.Next returns io.EOF at a clean end: the end of the input, or zeros
// from a chunk boundary to the end of the input (W6). When reading the input
// fails it returns an error wrapping ErrRead and the input's error: nothing
// is then known of the bytes. Otherwise it returns an *Error wrapping one of
// two sentinels:
//
//   - ErrTornTail: the bytes after the last good record cannot be read as a
//     record, and nothing after them proves they had been synced. This is
//     what a crash during an unsynced write leaves behind; Error.Offset is
//     where the log should be truncated (the end of the last good record).
//   - ErrCorruption: a damaged chunk is followed by a valid chunk of the same
//     log whose synced-through offset lies beyond the damage, so the damaged
//     bytes had been durably written before: bit rot or a bug, never a crash.
//     Error.Offset is the start of the damaged chunk.
//
// # Invariants
//
//	W1 (framing): a chunk never crosses a block boundary; a block tail too
//	   small for a chunk header (HeaderSize bytes) is zero padding.
//	W2 (checked): Reader never returns a byte that was not covered by a CRC32C
//	   it verified, and never returns a record after it has returned an error.
//	W3 (owned bytes): a chunk is accepted only if its log number matches the
//	   Reader's, so bytes left over from a previous use of the file (a recycled
//	   log) are never mistaken for records.
//	W4 (synced mark): every chunk records the writer's synced offset at the
//	   time it was framed; that offset never exceeds the chunk's own offset
//	   and never decreases along the log.
//	W5 (prefix): the records a Reader returns are exactly a prefix of the
//	   records written, in order; a torn tail only ever shortens that prefix.
//	W6 (zero tail): bytes that are all zero from a chunk boundary (outside a
//	   fragmented record) to the end of the input are the clean end of the
//	   log, as a preallocated, memory-mapped log leaves it (vfs.Appender).
//	   Zeros followed by any non-zero byte, zeros inside a record, and zeroed
//	   bytes that a later chunk proves were synced are still a torn tail or
//	   corruption. A chunk header is never all zeros (its type is >= 1).
//
// # Concurrency
//
// A Writer and a Reader are each for one goroutine at a time: neither locks.
// The engine calls a Writer under its commit mutex; WriteRecord only appends
// to an in-memory buffer (it writes through once the buffer passes
// flushThreshold), so the expensive Flush and Sync can be batched for group
// commit.
package wal
