package wal

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
)

// Reader returns the records of a log in order. Next returns io.EOF at a
// clean end and an *Error (ErrTornTail or ErrCorruption) otherwise; every
// error is sticky. A Reader is not safe for concurrent use.
type Reader struct {
	r      io.Reader
	logNum uint32

	block    []byte // current block; block[:n] holds data
	n        int    // bytes of the current block that were read
	pos      int    // next unread byte in block
	blockOff int64  // file offset of block[0]
	eof      bool   // r is exhausted: block is the last one
	loaded   bool   // block holds a block (false before the first read)

	rec     []byte // assembly buffer for fragmented records
	goodEnd int64  // file offset just past the last record returned
	synced  int64  // largest synced mark of an accepted chunk (W4)
	err     error  // sticky: io.EOF, an *Error or a read error
}

// NewReader returns a Reader of the log with number logNum read from r,
// which must be positioned at offset 0 of the file.
func NewReader(r io.Reader, logNum uint64) *Reader {
	return &Reader{r: r, logNum: uint32(logNum), block: make([]byte, BlockSize)}
}

// Next returns the next record. The slice is only valid until the next call
// to Next: callers that keep it must copy it. At a clean end of the log Next
// returns io.EOF; see the package documentation for the other errors.
func (r *Reader) Next() ([]byte, error) {
	if r.err != nil {
		return nil, r.err
	}
	rec, err := r.next()
	if err != nil {
		r.err = err
		return nil, err
	}
	return rec, nil
}

// LastRecordEnd returns the file offset just past the last record Next
// returned: the size of the log's good prefix so far.
func (r *Reader) LastRecordEnd() int64 { return r.goodEnd }

// SyncedMark returns the largest synced mark (W4) of the chunks read so
// far that passed their checks: non-zero proves the writer had completed a
// Sync of this log before framing one of them. The engine reads it to tell
// whether a later log proves an older one durable (docs/design.md,
// "Old logs sync in the background").
func (r *Reader) SyncedMark() int64 { return r.synced }

// readBlock loads the next block. On return r.n == 0 means the input is
// exhausted.
func (r *Reader) readBlock() error {
	if r.loaded {
		r.blockOff += BlockSize
	}
	r.loaded = true
	r.pos = 0
	n, err := io.ReadFull(r.r, r.block)
	r.n = n
	switch err {
	case nil:
	case io.EOF, io.ErrUnexpectedEOF:
		r.eof = true
	default:
		return fmt.Errorf("%w: block at offset %d: %w", ErrRead, r.blockOff, err)
	}
	return nil
}

func (r *Reader) next() ([]byte, error) {
	inRecord := false
	r.rec = r.rec[:0]
	for {
		if !r.loaded || r.pos >= r.n {
			if r.loaded && r.eof {
				if inRecord {
					return nil, r.torn(r.blockOff+int64(r.pos), "log ends inside a fragmented record")
				}
				return nil, io.EOF
			}
			if err := r.readBlock(); err != nil {
				return nil, err
			}
			continue
		}
		x := r.blockOff + int64(r.pos)
		if BlockSize-r.pos < HeaderSize {
			// Block tail padding (W1): must be zeros, whether or not the file
			// ends inside it.
			for _, b := range r.block[r.pos:r.n] {
				if b != 0 {
					return nil, r.fail(x, "non-zero block padding", false, inRecord)
				}
			}
			r.pos = r.n
			continue
		}
		if r.n-r.pos < HeaderSize {
			return nil, r.fail(x, "truncated chunk header", false, inRecord)
		}
		h := decodeHeader(r.block[r.pos:])
		end := r.pos + HeaderSize + h.length
		if end > BlockSize {
			return nil, r.fail(x, fmt.Sprintf("chunk length %d overruns its block", h.length), false, inRecord)
		}
		if end > r.n {
			return nil, r.fail(x, "truncated chunk", false, inRecord)
		}
		payload := r.block[r.pos+HeaderSize : end]
		if chunkCRC(r.block[r.pos:], payload) != h.crc {
			return nil, r.fail(x, "checksum mismatch", false, inRecord)
		}
		if h.typ < chunkFull || h.typ > chunkLast {
			return nil, r.fail(x, fmt.Sprintf("unknown chunk type %d", h.typ), false, inRecord)
		}
		if h.logNum != r.logNum {
			// Keeps W3: a checksummed chunk of another log is a leftover.
			return nil, r.fail(x, fmt.Sprintf("chunk of log %d, reading log %d", h.logNum, r.logNum), true, inRecord)
		}
		if h.synced > uint64(x) {
			// A genuine chunk of this log claims more was synced than lies
			// before it: bytes before it were lost or it was moved. A crash
			// cannot do that (W4), so this is corruption outright.
			return nil, &Error{Err: ErrCorruption, Offset: x, BadOffset: x,
				Reason: fmt.Sprintf("chunk claims %d bytes synced but sits at offset %d: data before it is missing", h.synced, x)}
		}
		r.synced = max(r.synced, int64(h.synced))
		switch h.typ {
		case chunkFull:
			if inRecord {
				return nil, r.fail(x, "FULL chunk inside a fragmented record", false, inRecord)
			}
			r.pos = end
			r.goodEnd = r.blockOff + int64(end)
			return payload, nil
		case chunkFirst:
			if inRecord {
				return nil, r.fail(x, "FIRST chunk inside a fragmented record", false, inRecord)
			}
			inRecord = true
			r.rec = append(r.rec, payload...)
		case chunkMiddle, chunkLast:
			if !inRecord {
				return nil, r.fail(x, "continuation chunk without a FIRST", false, inRecord)
			}
			r.rec = append(r.rec, payload...)
		}
		r.pos = end
		if h.typ == chunkLast {
			r.goodEnd = r.blockOff + int64(end)
			return r.rec, nil
		}
	}
}

// torn returns the ErrTornTail error for unreadable bytes at bad.
func (r *Reader) torn(bad int64, reason string) error {
	return &Error{Err: ErrTornTail, Offset: r.goodEnd, BadOffset: bad, Reason: reason}
}

// fail classifies unreadable bytes at file offset bad (the start of the
// current chunk or padding). It reads the rest of the input looking for a
// valid chunk of this log: one whose synced mark lies beyond bad proves bad
// had been fsynced before, so the damage is corruption; without such proof
// the bytes are an unsynced tail a crash may legitimately have torn. A
// checksummed chunk of another log at a record boundary, with no chunk of
// ours after it, is the clean end of a recycled file (W3).
//
// Zeros from a chunk boundary to the end of the input are the clean end of
// a preallocated log (W6): io.EOF, unless a record was left unfinished.
func (r *Reader) fail(bad int64, reason string, stale, inRecord bool) error {
	zeroTail := allZero(r.block[r.pos:r.n])
	anyValid, proven, zeroTail, err := r.scan(bad, zeroTail)
	if err != nil {
		return err
	}
	switch {
	case proven:
		return &Error{Err: ErrCorruption, Offset: bad, BadOffset: bad, Reason: reason}
	case zeroTail && !inRecord:
		return io.EOF
	case zeroTail:
		return r.torn(bad, "log ends in zeros inside a fragmented record")
	case stale && !inRecord && !anyValid:
		return io.EOF
	default:
		return r.torn(bad, reason)
	}
}

// scan looks at every byte position after bad (chunks never cross blocks, so
// block by block) for a chunk that passes every check of next(). It reports
// whether one exists and whether one proves bad was synced, and keeps
// zeroTail true while every block after the current one is all zeros. It
// consumes the rest of the input.
func (r *Reader) scan(bad int64, zeroTail bool) (anyValid, proven, zero bool, err error) {
	var pat [4]byte // the log number as stamped at header bytes [7:11]
	binary.LittleEndian.PutUint32(pat[:], r.logNum)
	start := r.pos + 1
	for {
		// bytes.Index finds candidate positions at memory speed; only they
		// pay for a header decode and a CRC.
		for from := start + 7; from+HeaderSize-7 <= r.n; {
			i := bytes.Index(r.block[from:r.n], pat[:])
			if i < 0 {
				break
			}
			p := from + i - 7
			from += i + 1
			if p+HeaderSize > r.n {
				break
			}
			b := r.block[p:]
			h := decodeHeader(b)
			end := p + HeaderSize + h.length
			if h.typ < chunkFull || h.typ > chunkLast || end > r.n {
				continue
			}
			// A chunk whose synced mark exceeds its own offset is still
			// genuine writer output (checksummed, this log), displaced by
			// lost bytes before it: its mark is proof like any other.
			if chunkCRC(b, r.block[p+HeaderSize:end]) != h.crc {
				continue
			}
			anyValid = true
			if h.synced > uint64(bad) {
				return true, true, false, nil
			}
		}
		if r.eof {
			return anyValid, false, zeroTail && !anyValid, nil
		}
		if err := r.readBlock(); err != nil {
			return anyValid, false, false, err
		}
		zeroTail = zeroTail && allZero(r.block[:r.n])
		start = 0
	}
}

// allZero reports whether b holds only zero bytes.
func allZero(b []byte) bool {
	for len(b) >= 8 {
		if binary.LittleEndian.Uint64(b) != 0 {
			return false
		}
		b = b[8:]
	}
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}
