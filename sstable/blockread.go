package sstable

import (
	"hash/crc32"

	"github.com/golang/snappy"

	"github.com/sievekv/sievekv/internal/base"
	"github.com/sievekv/sievekv/internal/invariants"
)

// checkHandle rejects a handle that reaches past the blocks region. The
// offset is bounded before end() is taken, so an offset near 2^64 cannot
// wrap the end back into the file.
func (r *Reader) checkHandle(h blockHandle, kind blockKind) error {
	if h.length > maxBlockLen || h.offset > r.size-FooterLen || h.end() > r.size-FooterLen {
		return base.CorruptionErrorf("sstable: %s: %s block handle (%d, %d) outside the table", r.name, blockKindNames[kind], h.offset, h.length)
	}
	return nil
}

// checkStored verifies a stored block (contents, tag, CRC32C of both) and
// returns its contents and compression tag (T1).
func (r *Reader) checkStored(h blockHandle, kind blockKind, stored []byte) (contents []byte, tag byte, err error) {
	contents, tail := stored[:h.length], stored[h.length:]
	want := uint32(tail[1]) | uint32(tail[2])<<8 | uint32(tail[3])<<16 | uint32(tail[4])<<24
	if got := crc32.Update(crc32.Checksum(contents, crcTable), crcTable, tail[:1]); got != want {
		return nil, 0, base.CorruptionErrorf("sstable: %s: %s block at offset %d: checksum mismatch (stored %#x, computed %#x)",
			r.name, blockKindNames[kind], h.offset, want, got)
	}
	if tail[0] != tagNone && tail[0] != tagSnappy {
		return nil, 0, base.CorruptionErrorf("sstable: %s: %s block at offset %d: unknown compression tag %d", r.name, blockKindNames[kind], h.offset, tail[0])
	}
	return contents, tail[0], nil
}

// maxSnappyExpansion bounds how many times its size a valid snappy stream
// decodes to: no element yields more than 64 bytes for the 3 it takes (a
// copy with a 2-byte offset), a ratio under 22. A header claiming more is
// a lie, and believing it would let a small block allocate up to
// maxBlockLen bytes before the decode fails.
const maxSnappyExpansion = 22

// decodedLen returns the size of a snappy block's decompressed contents.
func (r *Reader) decodedLen(h blockHandle, kind blockKind, contents []byte) (int, error) {
	n, err := snappy.DecodedLen(contents)
	if err != nil || n > maxBlockLen || n > maxSnappyExpansion*len(contents) {
		return 0, base.CorruptionErrorf("sstable: %s: %s block at offset %d: bad snappy header", r.name, blockKindNames[kind], h.offset)
	}
	return n, nil
}

// decompress decodes a snappy block into dst, which holds exactly its
// decodedLen bytes, so snappy never allocates.
func (r *Reader) decompress(h blockHandle, kind blockKind, contents, dst []byte) ([]byte, error) {
	out, err := snappy.Decode(dst, contents)
	if err != nil {
		return nil, base.CorruptionErrorf("sstable: %s: %s block at offset %d: snappy: %v", r.name, blockKindNames[kind], h.offset, err)
	}
	return out, nil
}

// readRaw reads a block into fresh memory the caller keeps (properties,
// filter and index at Open, VerifyBlocks), verifies its checksum and
// returns its decompressed contents (T1). gs, when not nil, also counts
// the read.
func (r *Reader) readRaw(h blockHandle, kind blockKind, gs *GetStats) ([]byte, error) {
	if err := r.checkHandle(h, kind); err != nil {
		return nil, err
	}
	stored := make([]byte, h.length+blockTrailerLen)
	if err := r.readFull(stored, h.offset); err != nil {
		return nil, err
	}
	r.countBlockRead(kind, gs)
	contents, tag, err := r.checkStored(h, kind, stored)
	if err != nil || tag == tagNone {
		return contents, err
	}
	n, err := r.decodedLen(h, kind, contents)
	if err != nil {
		return nil, err
	}
	return r.decompress(h, kind, contents, make([]byte, n))
}

// readDataBlock returns data block h with a reference the caller must
// release: from the cache, or read into a pooled buffer, checked,
// decompressed into another pooled buffer and parsed (T1, T4), then
// offered to the cache (BM1). Only parsed blocks enter the cache. Data
// blocks get the full entry walk only in invariants builds: the checksum
// already vouches for the bytes and the iterators bounds-check every entry
// they decode, while a walk of every block read would dominate a cold Get.
// ra, when not nil, is the calling iterator's readahead window. gs, when
// not nil, counts this call's cache lookup and file read.
func (r *Reader) readDataBlock(h blockHandle, gs *GetStats, ra *readahead) (*blockBuf, error) {
	if b := r.cachedDataBlock(h, gs, ra); b != nil {
		return b, nil
	}
	return r.readUncachedDataBlock(h, gs, ra, true)
}

// cachedDataBlock is readDataBlock's first half: data block h from the
// cache with a reference the caller must release, or nil. An iterator
// calls the halves apart to ask its range filter only before a real read
// (range_filter.go).
func (r *Reader) cachedDataBlock(h blockHandle, gs *GetStats, ra *readahead) *blockBuf {
	if ra != nil {
		ra.note(h)
	}
	if r.cache == nil {
		return nil
	}
	b := r.cache.get(r.fileNum, h.offset)
	r.countCacheLookup(b != nil, gs)
	return b
}

// readUncachedDataBlock is readDataBlock's second half, after a cache miss.
// fill offers the block to the cache (Iter.SkipCacheFill turns it off).
//
// The order of its buffers is chosen for the CPU cache. A miss on a full
// block cache frees two buffers: the block the cache evicts, untouched
// since it was read long ago, and this read's raw buffer, just written by
// the read and the checksum. The raw buffer is asked for in the decoded
// blocks' size class and released after the eviction, so sync.Pool's
// per-P LIFO hands the next miss the evicted buffer for its file read
// (the kernel's copy fills cold memory cheaply) and the hot one for the
// snappy decode, whose scattered writes into cold memory would cost a
// cache miss per line: about 8% of a 1M-key random Get in kvbench.
func (r *Reader) readUncachedDataBlock(h blockHandle, gs *GetStats, ra *readahead, fill bool) (*blockBuf, error) {
	if err := r.checkHandle(h, dataBlock); err != nil {
		return nil, err
	}
	storedLen := int(h.length) + blockTrailerLen
	raw := newBlockBuf(max(storedLen, r.decodedBlockHint))
	stored := raw.buf[:storedLen]
	if err := r.readStored(h, stored, ra); err != nil {
		raw.release()
		return nil, err
	}
	r.countBlockRead(dataBlock, gs)
	b, err := r.decodeDataBlock(h, raw, stored)
	if err != nil {
		raw.release()
		return nil, err
	}
	if fill {
		r.cache.set(r.fileNum, h.offset, b)
	}
	if b != raw {
		raw.release()
	}
	return b, nil
}

// decodeDataBlock turns the stored bytes held by raw into a parsed block:
// raw itself when the block is stored uncompressed, else a second buffer
// holding its decoded contents. It leaves raw's reference to the caller.
func (r *Reader) decodeDataBlock(h blockHandle, raw *blockBuf, stored []byte) (*blockBuf, error) {
	contents, tag, err := r.checkStored(h, dataBlock, stored)
	if err != nil {
		return nil, err
	}
	b := raw
	if tag == tagSnappy {
		n, err := r.decodedLen(h, dataBlock, contents)
		if err != nil {
			return nil, err
		}
		b = newBlockBuf(n)
		if contents, err = r.decompress(h, dataBlock, contents, b.buf[:n]); err != nil {
			b.release()
			return nil, err
		}
	}
	err = b.blk.parse(contents)
	if err == nil && invariants.Enabled {
		_, err = b.blk.validate()
	}
	if err != nil {
		if b != raw {
			b.release()
		}
		return nil, r.corrupt(h.offset, "data block", err)
	}
	return b, nil
}
