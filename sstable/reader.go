package sstable

import (
	"errors"
	"fmt"
	"io"

	"github.com/sievekv/sievekv/filters"
	"github.com/sievekv/sievekv/internal/base"
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
	rangeUse         rangeFilterUse // whether asking rangeFilter pays (range_filter.go)
	rangeFilterStart uint64
	index            []indexEntry
	// sepPrefixes[i] is base.UserKeyPrefix(index[i].sep.UserKey): findBlock
	// binary-searches this flat array, so most of its steps compare two
	// integers instead of loading a separator from wherever the heap put
	// it (a cache miss each, at a read of a cold table).
	sepPrefixes []uint64
	// rangeDels holds the table's range tombstones, resident like the
	// index (rangedel.go); empty for a format 1 table.
	rangeDels     *rangedel.Set
	rangeDelsList []rangedel.Tombstone
	// memBytes is what the resident index and filter cost.
	memBytes int64

	// decodedBlockHint is the mean decompressed size of the data blocks:
	// a raw read asks for a buffer at least this large, so that it comes
	// from the decoded blocks' size class (readUncachedDataBlock).
	decodedBlockHint int
}

// indexEntry is one decoded index entry: block i holds the keys k with
// sep[i-1] < k <= sep[i] (T5).
type indexEntry struct {
	sep    base.InternalKey
	handle blockHandle
}

// blockKind tells the block readers which counter a file read goes to.
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
	r.decodedBlockHint = decodedBlockHint(r.props)
	if r.props.FilterSize != ft.filter.length {
		return nil, base.CorruptionErrorf("sstable: %s: properties say %d filter bytes, footer %d", r.name, r.props.FilterSize, ft.filter.length)
	}
	if err := r.openRangeFilter(); err != nil {
		return nil, err
	}

	if err := r.loadRangeDels(); err != nil {
		return nil, err
	}

	ic, err := r.readRaw(ft.index, indexBlock, nil)
	if err != nil {
		return nil, err
	}
	ib, err := parseBlock(ic)
	if err == nil {
		// The index is read once per Open and decides every block a read
		// touches: it gets the full walk on every build (T4).
		_, err = ib.validate()
	}
	if err == nil {
		err = r.loadIndex(ib)
	}
	if err != nil {
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

// decodedBlockHint is the mean decoded size of a table's data blocks, or 0
// when that does not pay: past the stepped buffer size classes, where one
// class spans a power of two and a table whose properties claim huge
// blocks must not make every read of a small one allocate that much; and
// for a table stored mostly uncompressed, whose raw buffers are the
// cached blocks themselves, charged to the cache at their capacity.
func decodedBlockHint(p Properties) int {
	if p.NumDataBlocks == 0 || p.UncompressedDataSize/p.NumDataBlocks > bufStepLimit || p.DataSize >= p.UncompressedDataSize {
		return 0
	}
	return int(p.UncompressedDataSize / p.NumDataBlocks)
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
		r.sepPrefixes = append(r.sepPrefixes, base.UserKeyPrefix(it.key.UserKey))
		r.memBytes += int64(len(it.key.UserKey)) + 56
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

// findBlock returns the index of the first block whose separator is >= key
// (the only block that can hold the first entry >= key, T5), or
// len(r.index).
func (r *Reader) findBlock(key base.InternalKey) int {
	want := base.UserKeyPrefix(key.UserKey)
	lo, hi := 0, len(r.sepPrefixes)
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		p := r.sepPrefixes[mid]
		if p < want || (p == want && base.Compare(r.index[mid].sep, key) < 0) {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo
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
