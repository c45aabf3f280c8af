package sstable

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"

	"github.com/golang/snappy"

	"github.com/sievekv/sievekv/filters"
	"github.com/sievekv/sievekv/internal/base"
	"github.com/sievekv/sievekv/internal/rangedel"
	"github.com/sievekv/sievekv/vfs"
)

// Compression selects how data and index blocks are compressed.
type Compression uint8

const (
	// DefaultCompression is SnappyCompression.
	DefaultCompression Compression = iota
	// SnappyCompression compresses a block with snappy when that saves at
	// least 1/8 of its size (minSnappySaving).
	SnappyCompression
	// NoCompression stores every block as is.
	NoCompression
)

// minSnappySavingShift: a block is stored compressed only if snappy saves
// at least len>>3 bytes (12.5%), LevelDB's threshold; below it the CPU of
// decompressing on every cache miss is not worth the bytes.
const minSnappySavingShift = 3

// incompressibleBackoff is how many data blocks the writer stores without
// trying snappy after a block failed the 12.5% test. Measured with
// BenchmarkBuild (random 100-byte values): snappy found just enough short
// matches in the keys' trailers to be slow (~48% of build CPU) and never
// enough to pass the test. Retrying every 9th block keeps compressible
// tables fully compressed (every block passes, so no block is skipped) and
// costs an incompressible-then-compressible table at most 8 blocks.
const incompressibleBackoff = 8

// Defaults for WriterOptions.
const (
	// DefaultBlockSize is the target uncompressed data block size: 4 KiB
	// matches the page size, so a block read is one page read.
	DefaultBlockSize = 4096
	// DefaultRestartInterval is LevelDB's: 16 keys between full keys keeps
	// the prefix-compression savings while bounding a seek's linear scan.
	DefaultRestartInterval = 16
	// DefaultBloomBitsPerKey gives a ~0.8% FP rate for a standard Bloom
	// filter (fp = exp(-bits * ln2^2)), the value LevelDB and Pebble use.
	DefaultBloomBitsPerKey = 10
	// DefaultRibbonBits gives filters.TypeRibbon a 2^-7 = 0.78% FP rate, below
	// the 10-bit Bloom filter's 0.82%, at ~7.4 bits/key
	// (docs/filters.md, "Ribbon filter").
	DefaultRibbonBits = 7
)

// ErrOutOfOrder is returned by Writer.Add for a key that does not sort
// strictly after the previous one; the table is unchanged.
var ErrOutOfOrder = errors.New("sstable: key out of order")

// ErrBlockTooLarge is returned by Finish (and then every call) when a
// block would exceed what a reader accepts; nothing readable was written.
var ErrBlockTooLarge = errors.New("sstable: block too large")

// WriterOptions configure a table. The zero value is valid: 4 KiB blocks,
// restarts every 16 keys, snappy, a binary fuse 8 filter.
type WriterOptions struct {
	BlockSize            int
	BlockRestartInterval int
	Compression          Compression
	// Filter names the filter to build (default filters.TypeBinaryFuse8), with
	// the policy package filters registers for it.
	Filter filters.Type
	// FilterPolicy, when set, builds the filter instead, and Filter and
	// the sizing knobs below are ignored.
	FilterPolicy filters.Policy
	// FilterChooser, when set, picks the policy when the table is
	// finished, from its distinct key count, and overrides FilterPolicy
	// and Filter. The properties record the type it picked.
	FilterChooser filters.Chooser
	// BloomBitsPerKey sizes filters.TypeBloom and filters.TypeBlockedBloom (default 10).
	BloomBitsPerKey float64
	// RibbonBits is filters.TypeRibbon's result width, 1 to 16 (default 7): its
	// FP rate is 2^-RibbonBits.
	RibbonBits int
	// RangeFilterBitsPerKey, when not 0, gives the table a range filter
	// (filters.RangeFilter) of that budget, 3 to 48 bits per user key, so
	// bounded scans can skip it (range_filter.go).
	RangeFilterBitsPerKey float64
}

func (o WriterOptions) withDefaults() WriterOptions {
	if o.BlockSize <= 0 {
		o.BlockSize = DefaultBlockSize
	}
	if o.BlockRestartInterval <= 0 {
		o.BlockRestartInterval = DefaultRestartInterval
	}
	if o.Compression == DefaultCompression {
		o.Compression = SnappyCompression
	}
	if o.BloomBitsPerKey <= 0 {
		o.BloomBitsPerKey = DefaultBloomBitsPerKey
	}
	if o.RibbonBits <= 0 {
		o.RibbonBits = DefaultRibbonBits
	}
	if o.Filter == 0 {
		o.Filter = filters.TypeBinaryFuse8
	}
	return o
}

// Metadata describes a finished table.
type Metadata struct {
	Size       uint64 // file size in bytes
	Properties Properties
}

// Writer builds one table. Add keys in strictly increasing base.Compare
// order, then Finish. Not safe for concurrent use.
type Writer struct {
	f      vfs.File
	bw     *bufio.Writer
	opts   WriterOptions
	offset uint64
	// policy builds the filter; nil without one, or when policyErr says
	// why opts name no usable policy (reported by Finish).
	policy      filters.Policy
	policyErr   error
	rangeFilter rangeFilterBuilder
	// hashFilter: the table gets a filter, so Add collects key hashes.
	hashFilter bool

	data, index   blockWriter
	lastKey       []byte // encoded; valid when props.NumEntries > 0
	pendingIndex  bool   // a data block was flushed; its index entry waits for the next key (T5)
	pendingHandle blockHandle
	hashes        []uint64 // filters.Hash of each distinct user key
	props         Properties
	compressBuf   []byte
	skipSnappy    int // data blocks left to store raw (incompressibleBackoff)
	keyBuf        []byte
	rangeDels     []rangedel.Tombstone // written by Finish (rangedel.go)
	rangeDelBytes uint64               // their keys' bytes, for MetadataSize
	err           error                // sticky I/O error
	done          bool
}

// NewWriter returns a writer that writes a table into f, which it takes
// over: Finish syncs and closes it, Abort closes it.
func NewWriter(f vfs.File, opts WriterOptions) *Writer {
	opts = opts.withDefaults()
	w := &Writer{f: f, bw: getWriteBuf(f), opts: opts, hashes: getHashes()}
	w.data.restartInterval = opts.BlockRestartInterval
	w.index.restartInterval = 1 // index entries are binary searched one by one
	w.rangeFilter = newRangeFilterBuilder(opts.RangeFilterBitsPerKey)
	w.props.FilterType = filters.TypeNone
	if opts.FilterChooser != nil {
		// Finish asks the chooser; an empty table records no filter.
		w.hashFilter = true
		return w
	}
	w.policy, w.policyErr = opts.filterPolicy()
	if w.policy != nil {
		w.props.FilterType = w.policy.Type()
		w.hashFilter = true
	}
	return w
}

// Add appends an entry. key must sort strictly after the previous key
// (ErrOutOfOrder otherwise) and have a valid kind. Key and value are copied.
func (w *Writer) Add(key base.InternalKey, value []byte) error {
	if w.err != nil {
		return w.err
	}
	if w.done {
		return errors.New("sstable: Add after Finish or Abort")
	}
	if !key.Kind().Valid() || key.SeqNum() > base.SeqNumMax {
		return fmt.Errorf("sstable: Add %v: invalid kind or seqnum", key)
	}
	newUserKey := true
	shared := 0 // bytes key's user key shares with the last entry's
	if w.props.NumEntries > 0 {
		last, _ := base.DecodeInternalKey(w.lastKey)
		if base.Compare(last, key) >= 0 {
			return fmt.Errorf("%w: %v after %v", ErrOutOfOrder, key, last)
		}
		// One compare finds both the repeat and what the range filter
		// needs (user keys compare bytewise, base.CompareUserKeys).
		shared = filters.SharedPrefixLen(last.UserKey, key.UserKey)
		newUserKey = shared < len(last.UserKey) || shared < len(key.UserKey)
		if w.pendingIndex {
			w.addIndexEntry(separator(last, key))
		}
	} else {
		w.props.SmallestKey = key.Clone()
		w.props.SmallestSeqNum, w.props.LargestSeqNum = key.SeqNum(), key.SeqNum()
	}
	if newUserKey && w.hashFilter {
		w.hashes = append(w.hashes, filters.Hash(key.UserKey))
	}
	if newUserKey {
		w.rangeFilter.add(key.UserKey, shared)
	}
	if w.data.entries > 0 && w.data.estimatedSize()+maxEntryEncoding(key, value) > dataBlockLimit {
		// A block is cut only once it reaches BlockSize (up to 1 MiB),
		// so a large entry added to a nearly full one would make a
		// block past what a reader accepts (maxBlockLen): every entry
		// in it lost. Cut first; the entry, within the callers' limit,
		// fits a block of its own.
		if err := w.flushDataBlock(); err != nil {
			return err
		}
		last, _ := base.DecodeInternalKey(w.lastKey)
		w.addIndexEntry(separator(last, key))
	}
	w.keyBuf = key.Encode(w.keyBuf[:0])
	w.data.add(w.keyBuf, value)
	w.lastKey = append(w.lastKey[:0], w.keyBuf...)

	p := &w.props
	p.NumEntries++
	if key.Kind() == base.KindDelete {
		p.NumDeletions++
	}
	p.RawKeySize += uint64(len(w.keyBuf))
	p.RawValueSize += uint64(len(value))
	p.SmallestSeqNum = min(p.SmallestSeqNum, key.SeqNum())
	p.LargestSeqNum = max(p.LargestSeqNum, key.SeqNum())

	if w.data.estimatedSize() >= w.opts.BlockSize {
		return w.flushDataBlock()
	}
	return nil
}

// writeBlockLimit is maxBlockLen, a variable so that tests can reach it.
var writeBlockLimit = maxBlockLen

// dataBlockLimit is the most a data block may hold: maxBlockLen, less the
// restart array's room. A variable so that tests can reach it with small
// entries.
var dataBlockLimit = maxBlockLen - 64<<10

// maxEntryEncoding bounds the bytes key and value take in a block: the
// encoded key, the value, three length varints and a restart point.
func maxEntryEncoding(key base.InternalKey, value []byte) int {
	return len(key.UserKey) + 8 + len(value) + 3*binary.MaxVarintLen32 + 4
}

// LastUserKeyHash returns filters.Hash of the user key of the last entry
// added, and true, when the writer hashes its keys for a filter; false when
// it does not (no filter), and the caller hashes the key itself. A caller
// needing the hash of each key it writes (kv's tombstone index) thus pays
// for one xxhash per key, not two.
func (w *Writer) LastUserKeyHash() (uint64, bool) {
	if !w.hashFilter || len(w.hashes) == 0 || w.props.NumEntries == 0 {
		return 0, false
	}
	return w.hashes[len(w.hashes)-1], true
}

func (w *Writer) addIndexEntry(sep base.InternalKey) {
	var hb [2 * 10]byte
	w.index.add(sep.Encode(nil), appendHandle(hb[:0], w.pendingHandle))
	w.pendingIndex = false
}

func (w *Writer) flushDataBlock() error {
	contents := w.data.finish()
	try := w.skipSnappy == 0
	if !try {
		w.skipSnappy--
	}
	h, err := w.writeBlock(contents, try)
	if err != nil {
		return err
	}
	if try && w.opts.Compression == SnappyCompression && h.length == uint64(len(contents)) {
		w.skipSnappy = incompressibleBackoff
	}
	w.props.NumDataBlocks++
	w.props.DataSize += h.length + blockTrailerLen
	w.props.UncompressedDataSize += uint64(len(contents))
	w.pendingHandle, w.pendingIndex = h, true
	w.data.reset()
	return nil
}

// writeBlock writes contents (compressed if allowed and worth it) with its
// tag and CRC32C trailer (T1).
func (w *Writer) writeBlock(contents []byte, compress bool) (blockHandle, error) {
	if len(contents) > writeBlockLimit {
		// Every block a reader would refuse is one the writer must never
		// write: the data block cut (Add) and the engine's cut on
		// MetadataSize keep tables clear of this, and the error keeps the
		// entries where they came from (a memtable and its WAL, or a
		// compaction's inputs) should anything still reach it.
		w.err = fmt.Errorf("%w: a %d-byte block exceeds the %d-byte limit readers accept", ErrBlockTooLarge, len(contents), writeBlockLimit)
		return blockHandle{}, w.err
	}
	out, tag := contents, tagNone
	if compress && w.opts.Compression == SnappyCompression {
		w.compressBuf = snappy.Encode(w.compressBuf[:cap(w.compressBuf)], contents)
		if len(contents)-len(w.compressBuf) >= len(contents)>>minSnappySavingShift && len(w.compressBuf) < len(contents) {
			out, tag = w.compressBuf, tagSnappy
		}
	}
	var trailer [blockTrailerLen]byte
	trailer[0] = tag
	crc := crc32.Update(crc32.Checksum(out, crcTable), crcTable, trailer[:1])
	trailer[1], trailer[2], trailer[3], trailer[4] = byte(crc), byte(crc>>8), byte(crc>>16), byte(crc>>24)
	h := blockHandle{offset: w.offset, length: uint64(len(out))}
	if _, err := w.bw.Write(out); err != nil {
		w.err = fmt.Errorf("sstable: write: %w", err)
		return h, w.err
	}
	if _, err := w.bw.Write(trailer[:]); err != nil {
		w.err = fmt.Errorf("sstable: write: %w", err)
		return h, w.err
	}
	w.offset += uint64(len(out)) + blockTrailerLen
	return h, nil
}

// EstimatedSize is the file size if Finish were called now, less filter,
// index and properties: what the engine compares with its target size.
func (w *Writer) EstimatedSize() uint64 {
	return w.offset + uint64(w.data.estimatedSize())
}

// MetadataSize bounds the largest block other than a data block that
// Finish would write now, before compression: the index with the entry
// it still owes the last data block, the range deletions, or the
// properties with their smallest and largest keys. These grow with key
// length, not value length, and EstimatedSize leaves them out, so a table
// of long keys may be far below its target size while one of them nears
// what a reader accepts (maxBlockLen). The engine cuts its output on this
// figure (kv's table_writer.go); Finish refuses a block past the limit
// instead of writing a table no reader opens.
func (w *Writer) MetadataSize() uint64 {
	// An index entry is an internal key of at most the last key's length
	// (a separator or successor, T5) and a handle; the properties' fixed
	// fields are a few hundred bytes.
	const fixedProps = 1 << 10
	props := uint64(len(w.props.SmallestKey.UserKey)) + uint64(len(w.lastKey)) + fixedProps
	return max(w.IndexSize(), props, w.rangeDelBytes)
}

// IndexSize bounds the index block Finish would write now (MetadataSize's
// index term): its entries and the one it still owes the last data block.
func (w *Writer) IndexSize() uint64 {
	const entryOverhead = 3*binary.MaxVarintLen32 + 2*binary.MaxVarintLen64 + 4
	return uint64(w.index.estimatedSize()) + uint64(len(w.lastKey)) + entryOverhead
}

// Finish writes the last data block, the filter, index, properties and
// footer, then syncs and closes the file. It closes the file on failure
// too, a write error an earlier Add met included; Abort afterwards does
// nothing.
func (w *Writer) Finish() (Metadata, error) {
	if w.err != nil {
		if !w.done {
			// An Add met a write error: the table is lost, but the file
			// is closed all the same, as NewWriter promises.
			w.done = true
			w.release()
			w.f.Close()
		}
		return Metadata{}, w.err
	}
	if w.done {
		return Metadata{}, errors.New("sstable: Finish after Finish or Abort")
	}
	w.done = true
	defer w.release()
	fail := func(err error) (Metadata, error) {
		w.err = err
		w.f.Close()
		return Metadata{}, err
	}
	if w.data.entries > 0 {
		if err := w.flushDataBlock(); err != nil {
			return fail(err)
		}
	}
	var ft footer
	ft.version = formatVersionPointsOnly
	if err := w.writeRangeDels(&ft); err != nil {
		return fail(err)
	}
	if w.pendingIndex {
		last, _ := base.DecodeInternalKey(w.lastKey)
		w.addIndexEntry(successor(last))
	}
	if w.policyErr != nil {
		return fail(fmt.Errorf("sstable: building %s filter: %w", w.opts.Filter, w.policyErr))
	}
	if err := w.writeRangeFilter(); err != nil {
		return fail(err)
	}
	if w.opts.FilterChooser != nil && len(w.hashes) > 0 {
		p, err := w.opts.FilterChooser.Choose(len(w.hashes))
		if err != nil {
			return fail(fmt.Errorf("sstable: choosing a filter for %d keys: %w", len(w.hashes), err))
		}
		w.policy, w.props.FilterType = p, p.Type()
	}
	if w.policy != nil && len(w.hashes) > 0 {
		enc, err := buildFilter(w.policy, w.hashes)
		if err != nil {
			return fail(fmt.Errorf("sstable: building %s filter: %w", w.policy.Type(), err))
		}
		nkeys := len(w.hashes)
		if ft.filter, err = w.writeBlock(enc, false); err != nil {
			return fail(err)
		}
		w.props.FilterSize, w.props.FilterKeys = uint64(len(enc)), uint64(nkeys)
	}
	indexContents := w.index.finish()
	var err error
	if ft.index, err = w.writeBlock(indexContents, true); err != nil {
		return fail(err)
	}
	w.props.IndexSize = uint64(len(indexContents))
	if w.props.NumEntries > 0 {
		last, _ := base.DecodeInternalKey(w.lastKey)
		w.props.LargestKey = last.Clone()
	}
	if ft.props, err = w.writeBlock(w.props.encode(), false); err != nil {
		return fail(err)
	}
	if _, err := w.bw.Write(ft.encode()); err != nil {
		return fail(fmt.Errorf("sstable: write footer: %w", err))
	}
	if err := w.bw.Flush(); err != nil {
		return fail(fmt.Errorf("sstable: write: %w", err))
	}
	if err := w.f.Sync(); err != nil {
		return fail(fmt.Errorf("sstable: sync: %w", err))
	}
	if err := w.f.Close(); err != nil {
		w.err = fmt.Errorf("sstable: close: %w", err)
		return Metadata{}, w.err
	}
	return Metadata{Size: w.offset + FooterLen, Properties: w.props}, nil
}

// Abort closes the file without finishing the table; the caller removes it.
func (w *Writer) Abort() error {
	if w.done {
		return nil
	}
	w.done = true
	w.release()
	return w.f.Close()
}

// separator returns a key s with a <= s < b, as short as possible, for the
// index entry between two data blocks (T5). If a user key strictly between
// a's and b's exists that is shorter, it is used with TrailerMax (the
// smallest internal key of that user key, hence > a and < b); otherwise a
// itself.
func separator(a, b base.InternalKey) base.InternalKey {
	x := base.ShortSeparator(a.UserKey, b.UserKey)
	if base.CompareUserKeys(a.UserKey, x) < 0 && base.CompareUserKeys(x, b.UserKey) < 0 {
		return base.InternalKey{UserKey: x, Trailer: base.TrailerMax}
	}
	return a
}

// successor returns a short key >= a for the last index entry.
func successor(a base.InternalKey) base.InternalKey {
	for i, c := range a.UserKey {
		if c != 0xff {
			x := append(append([]byte(nil), a.UserKey[:i]...), c+1)
			return base.InternalKey{UserKey: x, Trailer: base.TrailerMax}
		}
	}
	return a
}
