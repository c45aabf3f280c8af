package sstable

// readahead turns a long forward scan's one-pread-per-block into a few
// large preads (C3). An iterator owns one; a Get passes none. After
// readaheadAfter consecutive data blocks loaded in order, the
// next miss reads a window of several blocks into buf, and the following
// misses inside the window copy from it instead of calling the file. The
// window starts at readaheadMin and doubles per refill up to readaheadMax,
// as OS readahead does, so a short scan pays little and a long one issues
// one pread per 256 KiB. It works through vfs.File.ReadAt alone, so every
// file system (mem_fs included) gets it.
type readahead struct {
	buf      []byte // window contents; len is what was read
	off      uint64 // file offset of buf[0]
	nextOff  uint64 // where the next sequential block would start
	seqReads int    // consecutive in-order block loads
	size     int    // next window size
}

const (
	// readaheadAfter: two sequential misses (a scan crossing blocks, not a
	// Get or a seek landing in one) before the iterator reads ahead.
	readaheadAfter = 2
	readaheadMin   = 64 << 10
	readaheadMax   = 256 << 10
)

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
	if end := r.footer.dataEnd(); h.offset+n > end {
		n = end - h.offset // the window never reaches past the data blocks
	}
	if uint64(cap(ra.buf)) < n {
		ra.buf = make([]byte, n, max(n, readaheadMax))
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

// covers reports whether the window holds all of block h.
func (ra *readahead) covers(h blockHandle) bool {
	return len(ra.buf) > 0 && h.offset >= ra.off && h.end() <= ra.off+uint64(len(ra.buf))
}
