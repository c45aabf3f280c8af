package vfs

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sync/atomic"
)

// ErrMapUnsupported is returned by Mapper.Map when the file or its file
// system cannot be preallocated and mapped (no fallocate, say); callers
// fall back to Write.
var ErrMapUnsupported = errors.New("vfs: file cannot be mapped")

// Mapper is an optional File capability: write a file through a shared
// memory mapping instead of write(2) (V4). The OS file system of Linux has
// it; MemFS and errorfs have no mapping of their own and reach the same
// callers through Appender's fallback to Write.
type Mapper interface {
	// Map preallocates bytes [off, off+n) of the file on disk and maps
	// them shared and writable. Preallocating first is what turns a full
	// disk into an error here (ENOSPC) instead of a SIGBUS on a later
	// store. The file's size becomes at least off+n; the new bytes read as
	// zeros until stored.
	Map(off, n int64) (Mapping, error)
}

// Mapping is a mapped region of a file, from Mapper.Map.
type Mapping interface {
	// Bytes is the region. A store into it is in the OS page cache at once
	// (it survives the process, not a power loss); Sync makes it durable.
	Bytes() []byte
	// Sync makes every store into the file's mappings durable (V1).
	Sync() error
	// Unmap releases the region; Bytes must not be used afterwards.
	Unmap() error
}

// Prefaulter is an optional Mapping capability: make the pages of
// Bytes()[off:off+n] present and writable without changing their contents
// (Linux's MADV_POPULATE_WRITE), so the stores that follow take no page
// fault. An error means only that the pages were not prefaulted.
type Prefaulter interface {
	Prefault(off, n int) error
}

// prefaultChunk is how far ahead of the write position an Appender
// prefaults a mapped segment, and how often. A store into a page of a
// shared file mapping faults the first time (the page cache page is
// allocated and zeroed, the file system told), about 10-25 us on the
// shared test machine: with 130-byte WAL records one commit in 30 paid it,
// which set the 99th percentile of a NoSync write. Prefaulting 16 pages
// at once moves that cost to one commit in about 500 and takes the page
// faults in one system call (docs/design.md, "Prefaulted WAL pages").
const prefaultChunk = 64 << 10

// DefaultSegmentSize is how much of a file an Appender preallocates and
// maps at a time: large enough that mapping costs (a few syscalls) are paid
// once per 16k WAL records of 100 bytes, small enough that a log holding a
// few writes wastes little disk. docs/design.md ("WAL output") has the
// measurements.
const DefaultSegmentSize = 2 << 20

// Appender writes a file sequentially from offset 0 (V4). If the file is a
// Mapper, Write copies into preallocated mapped segments and makes no
// syscall except when a segment fills; otherwise Write is the file's Write.
// Either way the bytes are in the OS when Write returns, so a process crash
// loses none of them. A mapped file is longer than what was written: its
// tail, up to the end of the last segment, reads as zeros.
//
// An Appender is for one goroutine at a time, like the File it writes,
// beside the warming StartWarm may run.
type Appender struct {
	f       File
	segSize int64
	mapped  bool // Map works for this file; false once it has said it cannot

	seg    Mapping // current segment, nil before the first mapped write
	segOff int64   // file offset of seg.Bytes()[0]
	off    int64   // bytes written so far: the logical size
	dirty  bool    // stores since the last Sync
	// faulted is the segment offset up to which seg's pages were
	// prefaulted; noPrefault is set once seg cannot be.
	faulted int
	// touched is the segment offset up to which the writer has stored
	// into every page (touchAhead).
	touched    int
	noPrefault bool
	err        error // sticky failure
	// warm is the StartWarm goroutine prefaulting seg beside the writer,
	// if one runs (appender_warm.go); faultedTo is then the offset up to
	// which either of them has prefaulted it.
	warm      *warming
	faultedTo atomic.Int64
}

// NewAppender returns an Appender writing f, which must be empty, mapping
// segSize bytes at a time (DefaultSegmentSize if segSize <= 0), rounded up
// to a multiple of the page size: each segment is mapped at the offset
// where the previous one ended, and a mapping starts on a page. It does
// not take ownership of f.
func NewAppender(f File, segSize int64) *Appender {
	if segSize <= 0 {
		segSize = DefaultSegmentSize
	}
	page := int64(os.Getpagesize())
	segSize = (segSize + page - 1) / page * page
	_, ok := f.(Mapper)
	return &Appender{f: f, segSize: segSize, mapped: ok}
}

// Mapped reports whether the Appender writes through a mapping.
func (a *Appender) Mapped() bool { return a.mapped }

// Write implements io.Writer. A failure is sticky: what reached the file
// is then unknown to the caller, who must stop using it.
func (a *Appender) Write(p []byte) (int, error) {
	if a.err != nil {
		return 0, a.err
	}
	if !a.mapped {
		n, err := a.f.Write(p)
		if err == nil && n != len(p) {
			err = io.ErrShortWrite
		}
		a.off += int64(n)
		if err != nil {
			a.err = err
		}
		return n, err
	}
	written := 0
	for len(p) > 0 {
		if a.seg == nil || a.off == a.segOff+int64(len(a.seg.Bytes())) {
			if err := a.nextSegment(); err != nil {
				if errors.Is(err, ErrMapUnsupported) && a.off == 0 && a.seg == nil {
					// Nothing mapped yet: write(2) the whole log instead.
					a.mapped = false
					n, err := a.Write(p)
					return written + n, err
				}
				a.err = err
				return written, err
			}
		}
		at := int(a.off - a.segOff)
		if at+len(p) > a.touched {
			a.touchAhead(at)
		}
		n := copy(a.seg.Bytes()[at:], p)
		p = p[n:]
		a.off += int64(n)
		written += n
		a.dirty = true
	}
	return written, nil
}

// nextSegment maps the segment starting at a.off, keeping the previous one
// mapped until the new one exists so a failure leaves nothing half done.
func (a *Appender) nextSegment() error {
	seg, err := a.f.(Mapper).Map(a.off, a.segSize)
	if err != nil {
		return fmt.Errorf("vfs: map %d bytes at offset %d: %w", a.segSize, a.off, err)
	}
	if a.seg != nil {
		a.stopWarm()
		// Stores into the old segment stay in the page cache (and are
		// covered by the next Sync, which syncs the whole file) after it
		// is unmapped.
		if err := a.seg.Unmap(); err != nil {
			seg.Unmap()
			return fmt.Errorf("vfs: unmap segment at offset %d: %w", a.segOff, err)
		}
	}
	a.seg, a.segOff = seg, a.off
	a.faulted, a.touched = 0, 0
	return nil
}

// touchChunk is how far ahead of the write position, and how often, the
// writer stores into a mapped segment's pages (touchAhead): 4 pages, so
// that with the first store into a page costing 4.5 us on a virtual
// machine one commit in about 125 (0.8%, below the 99th percentile) pays
// about 18 us; 16 pages at once put 72 us into one commit in 500, the
// 99.9th percentile.
const touchChunk = 32 << 10

// touchAhead makes the pages from the segment offset at through the next
// touchChunk boundary present and written to, before the stores of the
// records that will fill them: prefault, then one store of a zero per page
// not yet written (at or past at, so every byte stored is one the file
// holds as a zero already, and the warming never stores). The stores are
// for virtual machines whose host backs a guest page only when the guest
// first writes it: on the 2026-12-06 test machine a page made present by
// MADV_POPULATE_WRITE (1.1 us) still took 4.5 us at its first store, so
// with the warming's or prefault's pages alone one NoSync commit in about
// 30 paid that, and a sequential fill's 99th percentile was 6.2 us against
// 1.5 us with the WAL off. Batched here, one commit in about 125 pays 4
// of them. Where the prefault made the pages writable, the stores cost a
// cache miss each.
func (a *Appender) touchAhead(at int) {
	if at+prefaultChunk > a.faulted && !a.noPrefault {
		a.prefault(at)
	}
	b := a.seg.Bytes()
	page := os.Getpagesize()
	to := min((at/touchChunk+2)*touchChunk, len(b))
	for q := max(a.touched, (at+page-1)&^(page-1)); q < to; q += page {
		b[q] = 0
	}
	a.touched = to
}

// prefault makes the pages from the segment offset at through the next
// prefaultChunk boundary present (Prefaulter), if the mapping can.
func (a *Appender) prefault(at int) {
	pf, ok := a.seg.(Prefaulter)
	if !ok {
		a.noPrefault = true
		return
	}
	if a.warm != nil {
		a.faulted = max(a.faulted, int(a.faultedTo.Load()))
	}
	from := max(a.faulted, at&^(os.Getpagesize()-1))
	to := min((at/prefaultChunk+2)*prefaultChunk, len(a.seg.Bytes()))
	if from >= to {
		return
	}
	if err := pf.Prefault(from, to-from); err != nil {
		// An old kernel: the stores fault page by page, as without it.
		a.noPrefault = true
		return
	}
	a.faulted = to
	if a.warm != nil {
		raiseTo(&a.faultedTo, to)
	}
}

// Sync makes everything written so far durable: one fdatasync of the file
// whatever the number of writes since the last Sync.
func (a *Appender) Sync() error {
	if a.err != nil {
		return a.err
	}
	var err error
	switch {
	case !a.mapped:
		err = a.f.Sync()
	case a.dirty:
		err = a.seg.Sync()
	}
	if err != nil {
		a.err = err
		return err
	}
	a.dirty = false
	return nil
}

// Size returns the bytes written so far (the file may be longer, V4).
func (a *Appender) Size() int64 { return a.off }

// Close unmaps the current segment; it neither syncs nor closes the file.
// Write and Sync fail afterwards, whether or not the Appender had mapped
// anything.
func (a *Appender) Close() error {
	if a.err == nil {
		a.err = errAppenderClosed
	}
	if a.seg == nil {
		return nil
	}
	a.stopWarm()
	err := a.seg.Unmap()
	a.seg = nil
	return err
}

var errAppenderClosed = errors.New("vfs: appender is closed")
