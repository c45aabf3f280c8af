package sstable

import "sync"

// readahead turns a long forward scan's one-pread-per-block into a few
// large preads (BM3). An iterator owns one; a Get passes none. After
// readaheadAfter consecutive data blocks loaded in order, the next miss
// reads a window of several blocks into buf, and the following misses
// inside the window copy from it instead of calling the file. The window
// starts at readaheadMin and doubles per refill up to readaheadMax, as OS
// readahead does, so a short scan pays nothing and a long one issues one
// pread per 256 KiB. It works through vfs.File.ReadAt alone, so every file
// system (mem_fs included) gets it.
type readahead struct {
	pooled   *[]byte // the window's memory, from readaheadPool; nil until needed
	buf      []byte  // window contents; len is what was read
	off      uint64  // file offset of buf[0]
	nextOff  uint64  // where the next sequential block would start
	seqReads int     // consecutive in-order block loads
	size     int     // next window size
}

const (
	// readaheadAfter: four in-order block loads (16 KiB of a default table)
	// before reading ahead, so a short scan (kvbench scanrange reads 100
	// entries, about three blocks) never pays for a window it does not
	// use, while a long one switches to large reads early.
	readaheadAfter = 4
	readaheadMin   = 32 << 10
	readaheadMax   = 256 << 10
)

// readaheadPool recycles window buffers (readaheadMax bytes each) across
// iterators, so opening and closing many scans does not allocate them.
var readaheadPool = sync.Pool{New: func() any { b := make([]byte, readaheadMax); return &b }}

// readStored reads the stored bytes of block h into stored (exactly
// h.length+blockTrailerLen bytes), through ra's window when it has one.
func (r *Reader) readStored(h blockHandle, stored []byte, ra *readahead) error {
	if ra == nil {
		return r.readFull(stored, h.offset)
	}
	if ra.covers(h) {
		copy(stored, ra.buf[h.offset-ra.off:])
		return nil
	}
	if ra.seqReads < readaheadAfter {
		return r.readFull(stored, h.offset)
	}
	ra.size = min(max(2*ra.size, readaheadMin), readaheadMax)
	n := uint64(max(ra.size, len(stored)))
	if end := r.dataEnd(); h.offset+n > end {
		n = end - h.offset // the window never reaches past the data blocks
	}
	if ra.pooled == nil && n <= readaheadMax {
		ra.pooled = readaheadPool.Get().(*[]byte)
		ra.buf = (*ra.pooled)[:0]
	}
	if uint64(cap(ra.buf)) < n {
		ra.buf = make([]byte, n) // a block larger than any window
	}
	ra.buf, ra.off = ra.buf[:n], h.offset
	if err := r.readFull(ra.buf, h.offset); err != nil {
		ra.buf = ra.buf[:0]
		return err
	}
	copy(stored, ra.buf)
	return nil
}

// note records that the iterator loads block h, from the cache or not, so
// a scan over partly cached blocks still counts as sequential.
func (ra *readahead) note(h blockHandle) {
	if h.offset == ra.nextOff {
		ra.seqReads++
	} else {
		ra.seqReads, ra.size = 0, 0
	}
	ra.nextOff = h.end()
}

// release returns the window's memory to the pool; the iterator calls it
// on Close and the readahead starts afresh if used again.
func (ra *readahead) release() {
	if ra.pooled != nil {
		readaheadPool.Put(ra.pooled)
	}
	*ra = readahead{}
}

// covers reports whether the window holds all of block h.
func (ra *readahead) covers(h blockHandle) bool {
	return len(ra.buf) > 0 && h.offset >= ra.off && h.end() <= ra.off+uint64(len(ra.buf))
}
