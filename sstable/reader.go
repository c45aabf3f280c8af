package sstable

import (
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"sort"
	"sync"

	"github.com/golang/snappy"

	"github.com/sievekv/sievekv/filters"
	"github.com/sievekv/sievekv/internal/base"
	"github.com/sievekv/sievekv/internal/invariants"
	"github.com/sievekv/sievekv/internal/rangedel"
	"github.com/sievekv/sievekv/vfs"
)

// ReaderOptions configure a Reader.
type ReaderOptions struct {
	// FileNum identifies the table in the block cache; it must be unique
	// among the tables sharing Cache.
	FileNum uint64
	// Name is used in error messages (default: the file number as
	// "%06d.sst").
	Name string
	// Cache holds decompressed data blocks; nil disables caching.
	Cache *Cache
	// Stats receives the reader's counters; nil gives the reader its own.
	Stats *Stats
}

// Reader reads one table. After Open, the index, filter and properties
// are resident in memory (T6), so a Get costs at most one data-block read
// from the file and none when the filter rules the key out. Safe for
// concurrent use; Close must not race with other calls.
type Reader struct {
	file    vfs.File
	name    string
	fileNum uint64
	size    uint64
	cache   *Cache
	stats   *Stats
	footer  footer
	props   Properties
	filter  filters.Filter // nil when the table has none
	// rangeFilter is nil when the table has none; rangeFilterStart is
	// where its block (or, without one, the next region) starts
	// (range_filter.go).
	rangeFilter      *filters.RangeFilter
	rangeFilterStart uint64
	index            []indexEntry
	// rangeDels holds the table's range tombstones, resident like the
	// index (rangedel.go); empty for a format 1 table.
	rangeDels     *rangedel.Set
	rangeDelsList []rangedel.Tombstone
	// memBytes is what the resident index and filter cost.
	memBytes int64
}

// indexEntry is one decoded index entry: block i holds the keys k with
// sep[i-1] < k <= sep[i] (T5).
type indexEntry struct {
	sep    base.InternalKey
	handle blockHandle
}

// blockKind tells readBlock which counter a file read goes to.
type blockKind uint8

const (
	dataBlock blockKind = iota
	indexBlock
	metaBlock
)

var blockKindNames = [...]string{"data", "index", "meta"}

// Open reads and verifies a table's footer, properties, index and filter
// (T2, T4), and that they agree on the filter (T9). size is the file's
// length. The Reader takes over f; Close closes it. On error f is left
// open for the caller.
func Open(f vfs.File, size int64, opts ReaderOptions) (*Reader, error) {
	r := &Reader{file: f, name: opts.Name, fileNum: opts.FileNum, cache: opts.Cache, stats: opts.Stats}
	if r.name == "" {
		r.name = fmt.Sprintf("%06d.sst", opts.FileNum)
	}
	if r.stats == nil {
		r.stats = &Stats{}
	}
	if size < FooterLen {
		return nil, base.CorruptionErrorf("sstable: %s: file of %d bytes is too short for a footer", r.name, size)
	}
	r.size = uint64(size)
	buf := make([]byte, FooterLen)
	if err := r.readFull(buf, r.size-FooterLen); err != nil {
		return nil, err
	}
	ft, err := decodeFooter(buf, r.size)
	if err != nil {
		return nil, fmt.Errorf("sstable: %s: footer at offset %d: %w", r.name, r.size-FooterLen, err)
	}
	r.footer = ft

	pb, err := r.readRaw(ft.props, metaBlock, nil)
	if err != nil {
		return nil, err
	}
	if r.props, err = decodeProperties(pb); err != nil {
		return nil, r.corrupt(ft.props.offset, "properties block", err)
	}
	if r.props.FilterSize != ft.filter.length {
		return nil, base.CorruptionErrorf("sstable: %s: properties say %d filter bytes, footer %d", r.name, r.props.FilterSize, ft.filter.length)
	}
	if err := r.openRangeFilter(); err != nil {
		return nil, err
	}

	if err := r.loadRangeDels(); err != nil {
		return nil, err
	}

	ib, err := r.readBlock(ft.index, indexBlock, nil)
	if err != nil {
		return nil, err
	}
	if err := r.loadIndex(ib); err != nil {
		return nil, r.corrupt(ft.index.offset, "index block", err)
	}
	if uint64(len(r.index)) != r.props.NumDataBlocks {
		return nil, base.CorruptionErrorf("sstable: %s: index has %d entries, properties %d data blocks", r.name, len(r.index), r.props.NumDataBlocks)
	}

	if ft.filter.length > 0 {
		fb, err := r.readRaw(ft.filter, metaBlock, nil)
		if err != nil {
			return nil, err
		}
		var encoded filters.Type
		if r.filter, encoded, err = filters.UnmarshalWithType(fb); err != nil {
			return nil, r.corrupt(ft.filter.offset, "filter block", err)
		}
		r.memBytes += int64(len(fb))
		if err := r.checkFilterAgreement(encoded); err != nil {
			return nil, err
		}
	} else if err := r.checkFilterAgreement(0); err != nil {
		return nil, err
	}
	return r, nil
}

func (r *Reader) corrupt(off uint64, what string, err error) error {
	return base.CorruptionErrorf("sstable: %s: %s at offset %d: %w", r.name, what, off, err)
}

// loadIndex decodes every index entry and checks that the handles tile
// the data region in order and the separators strictly increase (T5).
func (r *Reader) loadIndex(b *block) error {
	var it blockIter
	it.init(b)
	next := uint64(0)
	for ok := it.first(); ok; ok = it.nextEntry() {
		h, ok := decodeHandle(it.value)
		if !ok {
			return malformed("index entry %d: bad block handle", len(r.index))
		}
		if h.offset != next || h.end() > r.dataEnd() {
			return malformed("index entry %d: handle (%d, %d) does not follow the previous block", len(r.index), h.offset, h.length)
		}
		next = h.end()
		r.index = append(r.index, indexEntry{sep: it.key.Clone(), handle: h})
		r.memBytes += int64(len(it.key.UserKey)) + 48
	}
	if it.err != nil {
		return it.err
	}
	if next != r.dataEnd() {
		return malformed("data blocks end at %d, the filter/index at %d", next, r.dataEnd())
	}
	return nil
}

// readFull reads exactly len(p) bytes at off; a short read means the file
// is shorter than its footer claims, which is corruption.
func (r *Reader) readFull(p []byte, off uint64) error {
	n, err := r.file.ReadAt(p, int64(off))
	r.stats.BytesRead.Add(int64(n))
	if n == len(p) {
		return nil
	}
	if err == nil || errors.Is(err, io.EOF) {
		return base.CorruptionErrorf("sstable: %s: short read of %d bytes at offset %d (got %d)", r.name, len(p), off, n)
	}
	return fmt.Errorf("sstable: %s: read at offset %d: %w", r.name, off, err)
}

// readRaw reads a block from the file, verifies its checksum and returns
// its decompressed contents (T1). gs, when not nil, also counts the read.
func (r *Reader) readRaw(h blockHandle, kind blockKind, gs *GetStats) ([]byte, error) {
	if h.end() > r.size-FooterLen || h.length > maxBlockLen {
		return nil, base.CorruptionErrorf("sstable: %s: %s block handle (%d, %d) outside the table", r.name, blockKindNames[kind], h.offset, h.length)
	}
	buf := make([]byte, h.length+blockTrailerLen)
	if err := r.readFull(buf, h.offset); err != nil {
		return nil, err
	}
	r.countBlockRead(kind, gs)
	contents, tail := buf[:h.length], buf[h.length:]
	stored := uint32(tail[1]) | uint32(tail[2])<<8 | uint32(tail[3])<<16 | uint32(tail[4])<<24
	if got := crc32.Update(crc32.Checksum(contents, crcTable), crcTable, tail[:1]); got != stored {
		return nil, base.CorruptionErrorf("sstable: %s: %s block at offset %d: checksum mismatch (stored %#x, computed %#x)",
			r.name, blockKindNames[kind], h.offset, stored, got)
	}
	switch tail[0] {
	case tagNone:
		return contents, nil
	case tagSnappy:
		n, err := snappy.DecodedLen(contents)
		if err != nil || n > maxBlockLen {
			return nil, base.CorruptionErrorf("sstable: %s: %s block at offset %d: bad snappy header", r.name, blockKindNames[kind], h.offset)
		}
		out, err := snappy.Decode(make([]byte, n), contents)
		if err != nil {
			return nil, base.CorruptionErrorf("sstable: %s: %s block at offset %d: snappy: %v", r.name, blockKindNames[kind], h.offset, err)
		}
		return out, nil
	}
	return nil, base.CorruptionErrorf("sstable: %s: %s block at offset %d: unknown compression tag %d", r.name, blockKindNames[kind], h.offset, tail[0])
}

// readBlock returns a parsed block, from the cache for data blocks when
// possible (T4: only parsed blocks enter the cache). Index blocks, read
// once per Open, are validated entry by entry; data blocks only in
// invariants builds, since a full walk of every block read would dominate
// a cold Get (the checksum already vouches for the bytes, and the
// iterators bounds-check every entry they decode). gs, when not nil,
// counts this call's cache lookup and file read.
func (r *Reader) readBlock(h blockHandle, kind blockKind, gs *GetStats) (*block, error) {
	if kind == dataBlock && r.cache != nil {
		b := r.cache.get(r.fileNum, h.offset)
		r.countCacheLookup(b != nil, gs)
		if b != nil {
			return b, nil
		}
	}
	contents, err := r.readRaw(h, kind, gs)
	if err != nil {
		return nil, err
	}
	b, err := parseBlock(contents)
	if err == nil && (kind == indexBlock || invariants.Enabled) {
		_, err = b.validate()
	}
	if err != nil {
		return nil, r.corrupt(h.offset, blockKindNames[kind]+" block", err)
	}
	if kind == dataBlock {
		r.cache.set(r.fileNum, h.offset, b)
	}
	return b, nil
}

// findBlock returns the index of the first block whose separator is >= key
// (the only block that can hold the first entry >= key, T5), or
// len(r.index).
func (r *Reader) findBlock(key base.InternalKey) int {
	return sort.Search(len(r.index), func(i int) bool {
		return base.Compare(r.index[i].sep, key) >= 0
	})
}

// Get returns the newest version of userKey visible at seq (base B3): its
// value and kind; found is false if the table has none. A KindDelete
// result means the key is deleted as of seq. The filter answers first: a
// definite negative returns without touching index or data (T6). The value
// aliases a block and must not be modified; it stays valid (blocks are
// immutable and garbage collected).
func (r *Reader) Get(userKey []byte, seq base.SeqNum) (value []byte, kind base.Kind, found bool, err error) {
	return r.GetWithStats(userKey, seq, nil)
}

// GetWithStats is Get that also records, in gs when not nil, what this
// call alone did: the filter's answer, blocks read and cache lookups.
// The shared Stats are counted either way.
func (r *Reader) GetWithStats(userKey []byte, seq base.SeqNum, gs *GetStats) (value []byte, kind base.Kind, found bool, err error) {
	value, kind, _, found, err = r.GetVersion(userKey, seq, gs)
	return value, kind, found, err
}

// GetVersion is GetWithStats that also returns the sequence number of the
// version found, for a caller that must compare it with a range
// tombstone's.
func (r *Reader) GetVersion(userKey []byte, seq base.SeqNum, gs *GetStats) (value []byte, kind base.Kind, versionSeq base.SeqNum, found bool, err error) {
	if r.filter != nil {
		r.stats.FilterChecks.Add(1)
		mayContain := r.filter.MayContainHash(filters.Hash(userKey))
		gs.countFilter(mayContain)
		if !mayContain {
			r.stats.FilterNegatives.Add(1)
			return nil, 0, 0, false, nil
		}
	}
	value, kind, versionSeq, found, err = r.get(userKey, seq, gs)
	if r.filter != nil && err == nil {
		if found {
			r.stats.FilterTruePositives.Add(1)
		} else {
			r.stats.FilterFalsePositives.Add(1)
		}
	}
	return value, kind, versionSeq, found, err
}

// iterPool recycles block iterators, and with them their key buffers, so
// that a Get served from the cache allocates nothing.
var iterPool = sync.Pool{New: func() any { return new(blockIter) }}

func (r *Reader) get(userKey []byte, seq base.SeqNum, gs *GetStats) ([]byte, base.Kind, base.SeqNum, bool, error) {
	search := base.MakeSearchKey(userKey, seq)
	i := r.findBlock(search)
	if i == len(r.index) {
		return nil, 0, 0, false, nil // search key above the last separator
	}
	b, err := r.readBlock(r.index[i].handle, dataBlock, gs)
	if err != nil {
		return nil, 0, 0, false, err
	}
	// By T5 the first entry >= search is in block i if it has userKey at
	// all: when block i has no entry >= search, search lies between its
	// last key and a separator (u, TrailerMax) with u strictly below the
	// next block's first user key, so no version of userKey exists. The
	// Get never needs a second block.
	it := iterPool.Get().(*blockIter)
	it.init(b)
	found := it.seekGE(search) && base.CompareUserKeys(it.key.UserKey, userKey) == 0
	value, kind, vseq, itErr := it.value, it.key.Kind(), it.key.SeqNum(), it.err
	it.b, it.value = nil, nil // keep only keyBuf across uses
	iterPool.Put(it)
	switch {
	case itErr != nil:
		return nil, 0, 0, false, r.corrupt(r.index[i].handle.offset, "data block", itErr)
	case found:
		return value, kind, vseq, true, nil
	}
	return nil, 0, 0, false, nil
}

// Properties returns the table's properties.
func (r *Reader) Properties() Properties { return r.props }

// Size returns the table's file size.
func (r *Reader) Size() uint64 { return r.size }

// FileNum returns the file number given at Open.
func (r *Reader) FileNum() uint64 { return r.fileNum }

// Stats returns the counters this reader adds to.
func (r *Reader) Stats() *Stats { return r.stats }

// HasFilter reports whether the table carries a filter.
func (r *Reader) HasFilter() bool { return r.filter != nil }

// FilterSize returns the filter's encoded size in bytes (0 without one).
func (r *Reader) FilterSize() uint64 { return r.footer.filter.length }

// MemoryUsage approximates the bytes the resident index and filter hold.
func (r *Reader) MemoryUsage() int64 { return r.memBytes }

// Close closes the file and drops this table's blocks from the cache.
func (r *Reader) Close() error {
	r.cache.EvictFile(r.fileNum)
	return r.file.Close()
}
