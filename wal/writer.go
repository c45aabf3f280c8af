package wal

import (
	"encoding/binary"
	"fmt"
	"io"
)

// Syncer makes the bytes written so far durable; a vfs or os file is one.
type Syncer interface {
	Sync() error
}

// flushThreshold is how many framed bytes a Writer buffers before
// WriteRecord writes them through on its own. Two blocks: each such write
// carries at least a full block, and memory stays bounded however large a
// record is; a caller that syncs per commit group flushes before reaching it.
const flushThreshold = 2 * BlockSize

// zeros is the source of block-tail padding (keeps W1).
var zeros [HeaderSize]byte

// Writer frames records into a log. It buffers: WriteRecord only appends to
// memory (writing through past flushThreshold), Flush hands the buffer to the
// io.Writer, Sync also makes it durable. A failed write or sync is sticky:
// the file's contents are then unknown, so every later call returns the same
// error and the caller must start a new log.
//
// A Writer is not safe for concurrent use (see the package documentation).
type Writer struct {
	w      io.Writer
	syncer Syncer
	logNum uint32 // low 32 bits of the log number, stamped in every chunk (W3)

	buf    []byte // framed bytes not yet handed to w
	off    int64  // logical size of the log: bytes written to w plus len(buf)
	synced int64  // offset through which Sync has succeeded (W4)
	err    error  // sticky failure
	closed bool
}

// NewWriter returns a Writer appending to w, which must be empty or positioned
// at offset 0 of the file: offsets are counted from 0 and blocks are aligned
// to them. syncer makes w durable; it may be nil (tests, throwaway logs), in
// which case Sync only flushes and the synced mark stays 0, so damage
// anywhere in such a log reads as a torn tail, never as ErrCorruption.
// logNum identifies this use of the file (the engine's file number).
func NewWriter(w io.Writer, syncer Syncer, logNum uint64) *Writer {
	return &Writer{
		w:      w,
		syncer: syncer,
		logNum: uint32(logNum),
		buf:    make([]byte, 0, flushThreshold+BlockSize),
	}
}

// WriteRecord frames p (which may be empty) and returns the file offset of
// the record's first chunk. p is copied; the caller may reuse it at once. The
// record is not on disk, nor even handed to the io.Writer, until Flush or
// Sync.
func (w *Writer) WriteRecord(p []byte) (offset int64, err error) {
	if w.closed {
		return 0, ErrClosed
	}
	if w.err != nil {
		return 0, w.err
	}
	first := true
	for {
		left := BlockSize - int(w.off%BlockSize)
		if left < HeaderSize {
			// Keeps W1: no header fits, pad to the block boundary.
			w.buf = append(w.buf, zeros[:left]...)
			w.off += int64(left)
			left = BlockSize
		}
		if first {
			offset = w.off
		}
		n := min(len(p), left-HeaderSize)
		last := n == len(p)
		var typ byte
		switch {
		case first && last:
			typ = chunkFull
		case first:
			typ = chunkFirst
		case last:
			typ = chunkLast
		default:
			typ = chunkMiddle
		}
		w.appendChunk(typ, p[:n])
		p = p[n:]
		first = false
		if len(w.buf) >= flushThreshold {
			if err := w.flush(); err != nil {
				return 0, err
			}
		}
		if last {
			return offset, nil
		}
	}
}

// appendChunk frames one chunk into buf.
func (w *Writer) appendChunk(typ byte, payload []byte) {
	start := len(w.buf)
	w.buf = append(w.buf, 0, 0, 0, 0) // CRC, filled in below
	w.buf = binary.LittleEndian.AppendUint16(w.buf, uint16(len(payload)))
	w.buf = append(w.buf, typ)
	w.buf = binary.LittleEndian.AppendUint32(w.buf, w.logNum)
	w.buf = binary.LittleEndian.AppendUint64(w.buf, uint64(w.synced))
	// Checksum the caller's payload before copying it: it is then read
	// once from wherever it lives and written once into buf.
	binary.LittleEndian.PutUint32(w.buf[start:], chunkCRC(w.buf[start:], payload))
	w.buf = append(w.buf, payload...)
	w.off += int64(HeaderSize + len(payload))
}

// Flush hands every buffered byte to the io.Writer. It does not sync.
func (w *Writer) Flush() error {
	if w.closed {
		return ErrClosed
	}
	return w.flush()
}

func (w *Writer) flush() error {
	if w.err != nil {
		return w.err
	}
	if len(w.buf) == 0 {
		return nil
	}
	base := w.off - int64(len(w.buf))
	n, err := w.w.Write(w.buf)
	if err == nil && n != len(w.buf) {
		err = io.ErrShortWrite
	}
	if err != nil {
		w.err = fmt.Errorf("wal: write of %d bytes at offset %d: %w", len(w.buf), base, err)
		return w.err
	}
	w.buf = w.buf[:0]
	return nil
}

// Sync flushes and then makes the log durable through Size(). Chunks framed
// afterwards carry the new synced mark (W4), which is what lets a Reader
// call damage before it corruption rather than a torn tail. A Sync with
// nothing new since the last one does not call the Syncer, so callers doing
// group commit may call it freely.
func (w *Writer) Sync() error {
	if w.closed {
		return ErrClosed
	}
	return w.sync()
}

func (w *Writer) sync() error {
	if err := w.flush(); err != nil {
		return err
	}
	if w.syncer == nil || w.synced == w.off {
		return nil
	}
	if err := w.syncer.Sync(); err != nil {
		// After a failed fsync the kernel may have dropped the dirty pages;
		// nothing about the file can be assumed any more, hence sticky.
		w.err = fmt.Errorf("wal: sync through offset %d: %w", w.off, err)
		return w.err
	}
	w.synced = w.off
	return nil
}

// Size returns the logical size of the log: every byte framed so far,
// including those still buffered. After Sync it is the durable size.
func (w *Writer) Size() int64 { return w.off }

// Close syncs the log (flushes only if the Syncer is nil) and makes the
// Writer unusable. It does not close the underlying file, which the caller
// owns. A second Close returns ErrClosed.
func (w *Writer) Close() error {
	if w.closed {
		return ErrClosed
	}
	err := w.sync()
	w.closed = true
	return err
}
