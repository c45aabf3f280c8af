package kv

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/sievekv/sievekv/compaction"
	"github.com/sievekv/sievekv/filters"
	"github.com/sievekv/sievekv/vfs"
)

// FilterType selects the approximate-membership filter embedded in every
// table the DB writes. It is the one filter vocabulary, filters.Type: its
// String is the canonical name, ParseFilterType reads it. Tables written
// earlier keep the filter they were built with; each table's properties
// record its own.
type FilterType = filters.Type

// The filters a table may embed.
const (
	// FilterBinaryFuse8 is a binary fuse filter with 8-bit fingerprints:
	// ~9 bits per key for a 0.39% false-positive rate.
	FilterBinaryFuse8 = filters.TypeBinaryFuse8
	// FilterBinaryFuse16 trades ~18 bits per key for a 0.0015% FP rate.
	FilterBinaryFuse16 = filters.TypeBinaryFuse16
	// FilterXor8 is the XOR filter, ~9.84 bits per key at 0.39%.
	FilterXor8 = filters.TypeXor8
	// FilterBloom is a standard Bloom filter of BloomBitsPerKey bits per key.
	FilterBloom = filters.TypeBloom
	// FilterBlockedBloom is a cache-line blocked Bloom filter of
	// BloomBitsPerKey bits per key: faster queries, slightly more FPs.
	FilterBlockedBloom = filters.TypeBlockedBloom
	// FilterNone writes tables without a filter: every Get of a key inside a
	// table's range reads a data block.
	FilterNone = filters.TypeNone
	// FilterBinaryFuse is a 3-wise binary fuse filter with the widest
	// fingerprint that fits FilterBitsPerKey at large n (8 bits at 10).
	FilterBinaryFuse = filters.TypeBinaryFuse
	// FilterRibbon is a standard Ribbon filter of RibbonBits result bits:
	// ~7.4 bits per key for a 0.78% FP rate at the default 7.
	FilterRibbon = filters.TypeRibbon
)

// FilterAuto gives each table the filter family and width with the lowest
// expected cost (probe time plus false-positive reads) that fits its share
// of FilterBitsPerKey, chosen when the table is written from its key count
// (filters.ChooseTableFilter); FilterAllocation says how the share is
// set. The default. It is a choice of the DB, not a filter kind: each
// table records the concrete filter it got, so reading needs nothing new.
// Its value lies outside the filters.Type vocabulary; FilterName prints it.
const FilterAuto FilterType = 254

const filterAutoName = "auto"

// FilterTypes lists every filter Options.Filter accepts: FilterAuto, then
// FilterNone and each filter with a table policy, in table-code order (the
// filters in the order they joined).
func FilterTypes() []FilterType {
	ts := append(filters.PolicyTypes(), FilterNone)
	slices.SortFunc(ts, func(a, b FilterType) int { return int(filterTableCode(a)) - int(filterTableCode(b)) })
	return append([]FilterType{FilterAuto}, ts...)
}

// FilterName is f's name for flags and tools: "auto" for FilterAuto, the
// canonical filters.Type name otherwise.
func FilterName(f FilterType) string {
	if f == FilterAuto {
		return filterAutoName
	}
	return f.String()
}

// FilterTypeNames lists the names of FilterTypes, for flag help.
func FilterTypeNames() []string {
	var names []string
	for _, f := range FilterTypes() {
		names = append(names, FilterName(f))
	}
	return names
}

// ParseFilterType reads a filter name for Options.Filter ("auto", a
// canonical name or an alias filters.ParseType accepts, such as
// "binaryfuse8"), for flags.
func ParseFilterType(s string) (FilterType, error) {
	if strings.EqualFold(strings.TrimSpace(s), filterAutoName) {
		return FilterAuto, nil
	}
	f, err := filters.ParseType(s)
	if err == nil && !slices.Contains(FilterTypes(), f) {
		err = fmt.Errorf("%s cannot be built into a table", f)
	}
	if err != nil {
		return 0, fmt.Errorf("%w: filter type %q: %v (want one of %s)", ErrInvalidOptions, s, err,
			strings.Join(FilterTypeNames(), ", "))
	}
	return f, nil
}

// FilterAllocation says how FilterAuto shares the FilterBitsPerKey budget
// among tables.
type FilterAllocation uint8

const (
	// FilterAllocationMonkey gives each table bits per key from the LSM's
	// shape when it is written, so that the sum of FP rates over the runs
	// an absent-key Get probes is least for the memory (Monkey, Dayan et
	// al., SIGMOD 2017): small runs (L0 tables, upper levels) get more
	// bits per key, the bottom level fewer; docs/design.md, "Filter
	// budget", has the derivation. The default.
	FilterAllocationMonkey FilterAllocation = 1
	// FilterAllocationUniform gives every table FilterBitsPerKey.
	FilterAllocationUniform FilterAllocation = 2
)

func (a FilterAllocation) String() string {
	switch a {
	case FilterAllocationMonkey:
		return "monkey"
	case FilterAllocationUniform:
		return "uniform"
	}
	return fmt.Sprintf("allocation(%d)", uint8(a))
}

// ParseFilterAllocation reads "monkey" or "uniform", for flags.
func ParseFilterAllocation(s string) (FilterAllocation, error) {
	for _, a := range []FilterAllocation{FilterAllocationMonkey, FilterAllocationUniform} {
		if strings.EqualFold(strings.TrimSpace(s), a.String()) {
			return a, nil
		}
	}
	return 0, fmt.Errorf("%w: filter allocation %q (want monkey or uniform)", ErrInvalidOptions, s)
}

// filterPolicy maps o's filter choice to the policy the table writer
// builds with: nil for FilterNone and FilterAuto (whose tables get a
// chooser, filter_budget.go). o has its defaults filled in.
func (o *Options) filterPolicy() (filters.Policy, error) {
	if o.Filter == FilterNone || o.Filter == FilterAuto {
		return nil, nil
	}
	p, err := filters.NewPolicy(o.Filter, filters.PolicyParams{
		BloomBitsPerKey: float64(o.BloomBitsPerKey), RibbonBits: o.RibbonBits, Fuse: o.fuseOptions()})
	if err != nil {
		return nil, fmt.Errorf("%w: Filter %s: %v", ErrInvalidOptions, o.Filter, err)
	}
	return p, nil
}

// fuseOptions size FilterBinaryFuse: 3-wise, with the widest fingerprint
// whose 1.13 slots per key (large n) fit FilterBitsPerKey.
func (o *Options) fuseOptions() filters.FuseOptions {
	return filters.FuseOptions{Arity: 3, FingerprintBits: min(32, max(1, int(o.FilterBitsPerKey/1.13)))}
}

// filterTableCode converts a table's filter to the byte the manifest
// records (filters.Type.TableCode). The manifest's copy is informational
// (TableInfo.Filter); the table's own properties decide.
func filterTableCode(f FilterType) byte {
	code, _ := f.TableCode()
	return code
}

// Options configure a DB. The zero value of every field means its default;
// a nil *Options means all defaults.
type Options struct {
	// MemTableSize is the size in bytes at which the mutable memtable is
	// frozen and flushed to an L0 table, counting its keys and values and
	// 40 bytes per entry (memtable.LogicalEntryOverhead), about what an
	// arena skiplist spends: the L0 tables come out the size such a
	// memtable's would. Its Go heap footprint is larger, by the B-tree's
	// nodes, the arena's spare chunk space and the key filter that lets a
	// Get of a key it lacks skip its lock (1.5 bytes per entry, at least
	// 6 KiB per memtable) (Metrics.MemTable.Size
	// reports it): measured for 16-byte keys and 100-byte values, 1.15x
	// MemTableSize (random keys) to 1.3x (sequential) at the default size,
	// 1.35x to 1.55x at 1 MiB. Default 4 MiB; 1 KiB to 1 GiB.
	MemTableSize int
	// BlockSize is the target uncompressed size of a table data block.
	// Default 4 KiB; 256 bytes to 1 MiB.
	BlockSize int
	// BlockCacheSize is the byte capacity of the shared cache of
	// decompressed blocks. Default 8 MiB; negative disables the cache.
	// The cache also borrows the memory of two memtables (2 x
	// MemTableSize) while the memtables leave it unused, and gives it
	// back as they fill: the cache and the memtables together stay within
	// BlockCacheSize + 2 x MemTableSize, as Pebble's cache, which counts
	// its memtables, does within its size (NoCacheLoan turns this off).
	BlockCacheSize int64
	// Filter is the filter built into every new table. Default FilterAuto.
	Filter FilterType
	// FilterBitsPerKey is FilterAuto's filter memory budget in bits per
	// key, averaged over the DB's tables. Default 10; 1 to 64.
	FilterBitsPerKey float64
	// FilterAllocation is how FilterAuto shares the budget among tables.
	// Default FilterAllocationMonkey.
	FilterAllocation FilterAllocation
	// BloomBitsPerKey sizes FilterBloom and FilterBlockedBloom. Default 10;
	// 1 to 64.
	BloomBitsPerKey int
	// RibbonBits is FilterRibbon's result width, 1 to 16: the FP rate is
	// 2^-RibbonBits. Default 7.
	RibbonBits int
	// RangeFilterBitsPerKey, when not 0, gives every table written a range
	// filter of that many bits per key (3 to 48) beside its point filter,
	// so bounded iterators skip tables holding nothing in their range
	// (filters.RangeFilter; an empty range of w ids is a false positive
	// with probability at most w/2^(bits-2)). Default 0: no range filter.
	// Tables written without one read as before.
	RangeFilterBitsPerKey float64
	// FS is the file system the DB lives on. Default the OS file system.
	FS vfs.FS
	// DisableWAL skips the write-ahead log: faster writes, and every write
	// since the last flush is lost on a crash (Sync then only orders).
	DisableWAL bool
	// ReadOnly opens an existing DB for reads only: no recovery writes, no
	// flushes, and every write returns ErrReadOnly. It writes nothing to
	// the directory (so it works on a read-only mount) and takes a shared
	// lock: read-only opens coexist, and exclude a writer (ErrLocked).
	ReadOnly bool
	// ErrorIfNotExists makes Open fail with ErrDBDoesNotExist, creating
	// nothing (no directory, no LOCK), when dirname holds no DB, rather
	// than create one there: for a caller that means to open an existing
	// DB and could be handed the wrong path, such as a home directory full
	// of other files, where Open would otherwise write a new DB's LOCK,
	// CURRENT, MANIFEST and WAL among them (LevelDB's create_if_missing
	// turned off, Pebble's ErrorIfNotExists).
	ErrorIfNotExists bool
	// ErrorIfExists makes Open fail with ErrDBExists when dirname already
	// holds a DB: for a caller that means to create a fresh one (LevelDB's
	// error_if_exists, Pebble's ErrorIfExists).
	ErrorIfExists bool
	// Logger receives warnings such as a truncated WAL tail. Default: none.
	// It is called on the engine's own goroutines, some while the DB holds
	// its internal mutex, so it must return promptly and must not call
	// the DB (not even Metrics), which would wait on that mutex for ever:
	// a Logger that wants figures records the message and reads them
	// after it returns.
	Logger func(format string, args ...any)

	// L0CompactionThreshold is the L0 table count that makes L0 due for
	// compaction. Default 4; at most 1000 (a Get probes every L0 table,
	// and filter sizing plans for that many; DisableAutomaticCompactions
	// is the way to never compact).
	L0CompactionThreshold int
	// L0SlowdownWritesThreshold is the L0 table count at which each
	// commit group is delayed once (1 ms) to let compaction catch up. Default: the
	// stop threshold, i.e. no slowdowns. L0 itself waits for up to twice
	// L0CompactionThreshold tables while merging it is expensive
	// (compaction's P2), and slowdowns at 8 then only throttled writes
	// that compaction was keeping up with (docs/design.md, "Compaction
	// that writes less").
	L0SlowdownWritesThreshold int
	// L0StopWritesThreshold is the L0 table count at which writes wait
	// for compaction. Default 12, or 2 x L0CompactionThreshold + 4 when
	// that is more (20 for a threshold of 8), and never below
	// L0SlowdownWritesThreshold.
	L0StopWritesThreshold int
	// LBaseMaxBytes is the target size of the level L0 compacts into;
	// the levels below it grow by one common ratio, set from the data so
	// that the bottom level holds about 90% of it (10 at most, unless the
	// base is already L1: compaction's P1). Default 16 x MemTableSize
	// (64 MiB for the default 4 MiB memtable).
	LBaseMaxBytes int64
	// TargetFileSize is where compaction splits its output tables.
	// Default MemTableSize / 2, or 16 KiB if that is more (2 MiB for the
	// default memtable); any positive size may be set.
	TargetFileSize int64
	// DisableAutomaticCompactions turns the background compactions off
	// (Compact still works). Writes are then never stalled on L0.
	DisableAutomaticCompactions bool
	// MaxOpenFiles bounds the file descriptors the DB keeps open. The
	// table cache keeps the readers of at most MaxOpenFiles-8 tables open
	// (8 are left for the WALs, the MANIFEST, CURRENT, LOCK and directory
	// syncs), closing the least recently used first; a table in use by a
	// read or an open iterator stays open until released, so iterators
	// held over many L0 tables can exceed the bound for their lifetime;
	// a compaction holds one table of each input level open at a time,
	// and each of its L0 inputs. Default 1000 (as Pebble and LevelDB), minimum 16.
	MaxOpenFiles int
	// TombstoneMaxAge bounds how long a deleted key's tombstone (and the
	// data it hides) stays above the bottom level when no compaction is
	// due by size or worth it for the space it frees: once a table's oldest
	// tombstone is older, background compactions move it down, level by
	// level, until it is dropped at the bottom and the shadowed data is
	// gone (Lethe's persistence latency; compaction's P5). A tombstone an
	// open snapshot keeps at the bottom (the snapshot still sees the
	// value beneath it) goes once no snapshot older than its table's
	// entries is open. The clock survives restarts: each table's oldest
	// tombstone time is in the MANIFEST (by the wall clock; one ahead of
	// the clock at Open counts from the Open). Default 1 hour;
	// negative disables the bound (purge compactions, which run when they
	// free at least a quarter of what they rewrite, stay on, and so do
	// idle purges, which a DB that took no write for a second or two runs
	// when they free at least IdlePurgeMinShare of its table bytes).
	TombstoneMaxAge time.Duration
	// IdlePurgeMinShare makes a DB that took no write for a whole
	// background tick (about a second) compact away tombstones that shadow
	// at least this share of its table bytes, however much the compaction
	// rewrites to do it (compaction's P6): a delete burst's last flush can
	// leave a table whose purge is never worth it by PurgeRatio's measure
	// and whose garbage would otherwise wait for TombstoneMaxAge. Such a
	// purge may write up to 1/IdlePurgeMinShare bytes per byte it frees,
	// and only while the DB is idle. Default 0.01 (1%); at most 1;
	// negative disables idle purges.
	IdlePurgeMinShare float64
	// NoCacheLoan keeps the block cache at BlockCacheSize, lending it
	// none of the memtables' idle memory: for a program that wants its
	// memory to fall once its memtables are flushed (after a bulk load
	// with large memtables, say) more than it wants reads cached.
	NoCacheLoan bool
	// DisableTombstoneIndex turns off the cuckoo-filter index of deleted
	// keys (docs/design.md), for measuring what it costs and buys.
	DisableTombstoneIndex bool
}

const (
	defaultMemTableSize    = 4 << 20
	defaultBlockSize       = 4 << 10
	defaultBlockCacheSize  = 8 << 20
	defaultBloomBitsPerKey = 10
	// defaultFilterBitsPerKey is the budget Pebble and RocksDB users know
	// as "10 bits per key".
	defaultFilterBitsPerKey = 10
	defaultRibbonBits       = 7
	defaultMaxOpenFiles     = 1000
	minMaxOpenFiles         = 16
	// nonTableFiles is what MaxOpenFiles keeps for files other than
	// tables: the WAL being written and one being replayed, the MANIFEST,
	// CURRENT or its temp file, LOCK, a directory sync, and slack.
	nonTableFiles   = 8
	minMemTableSize = 1 << 10
	maxMemTableSize = 1 << 30
	// maxL0CompactionThreshold bounds L0CompactionThreshold: Monkey's
	// filter sizing lists that many L0 runs per table written, so
	// math.MaxInt was an out-of-memory crash at the first flush.
	maxL0CompactionThreshold = 1000
	// defaultTombstoneMaxAge: deletes leave the disk within about an hour
	// even on a DB that never compacts by size; short enough for "deleted
	// means gone" expectations, long enough that a trickle of deletes
	// costs at most one extra compaction per level per hour.
	defaultTombstoneMaxAge = time.Hour
)

// withDefaults validates o and returns a copy with every default filled in.
func (o *Options) withDefaults() (Options, error) {
	var r Options
	if o != nil {
		r = *o
	}
	// Pairs no directory could satisfy: said as the caller's mistake, not
	// as whichever "exists" error the directory happened to give.
	switch {
	case r.ErrorIfExists && r.ErrorIfNotExists:
		return r, fmt.Errorf("%w: ErrorIfExists and ErrorIfNotExists together refuse every directory", ErrInvalidOptions)
	case r.ErrorIfExists && r.ReadOnly:
		return r, fmt.Errorf("%w: ErrorIfExists with ReadOnly refuses every directory (read-only creates nothing)", ErrInvalidOptions)
	}
	switch {
	case r.MemTableSize == 0:
		r.MemTableSize = defaultMemTableSize
	case r.MemTableSize < minMemTableSize || r.MemTableSize > maxMemTableSize:
		return r, fmt.Errorf("%w: MemTableSize %d outside [%d, %d]", ErrInvalidOptions, r.MemTableSize, minMemTableSize, maxMemTableSize)
	}
	switch {
	case r.BlockSize == 0:
		r.BlockSize = defaultBlockSize
	case r.BlockSize < 256 || r.BlockSize > 1<<20:
		return r, fmt.Errorf("%w: BlockSize %d outside [256, 1 MiB]", ErrInvalidOptions, r.BlockSize)
	}
	switch {
	case r.BlockCacheSize == 0:
		r.BlockCacheSize = defaultBlockCacheSize
	case r.BlockCacheSize < 0:
		r.BlockCacheSize = 0
	}
	if r.Filter == 0 {
		r.Filter = FilterAuto
	}
	if !slices.Contains(FilterTypes(), r.Filter) {
		return r, fmt.Errorf("%w: unknown Filter %d", ErrInvalidOptions, int(r.Filter))
	}
	switch {
	case r.FilterBitsPerKey == 0:
		r.FilterBitsPerKey = defaultFilterBitsPerKey
	case !(r.FilterBitsPerKey >= 1 && r.FilterBitsPerKey <= 64): // also NaN
		return r, fmt.Errorf("%w: FilterBitsPerKey %v outside [1, 64]", ErrInvalidOptions, r.FilterBitsPerKey)
	}
	switch r.FilterAllocation {
	case 0:
		r.FilterAllocation = FilterAllocationMonkey
	case FilterAllocationMonkey, FilterAllocationUniform:
	default:
		return r, fmt.Errorf("%w: unknown FilterAllocation %d", ErrInvalidOptions, int(r.FilterAllocation))
	}
	switch {
	case r.BloomBitsPerKey == 0:
		r.BloomBitsPerKey = defaultBloomBitsPerKey
	case r.BloomBitsPerKey < 1 || r.BloomBitsPerKey > 64:
		return r, fmt.Errorf("%w: BloomBitsPerKey %d outside [1, 64]", ErrInvalidOptions, r.BloomBitsPerKey)
	}
	switch {
	case r.RibbonBits == 0:
		r.RibbonBits = defaultRibbonBits
	case r.RibbonBits < 1 || r.RibbonBits > 16:
		return r, fmt.Errorf("%w: RibbonBits %d outside [1, 16]", ErrInvalidOptions, r.RibbonBits)
	}
	if b := r.RangeFilterBitsPerKey; b != 0 && !(b >= 3 && b <= 48) {
		return r, fmt.Errorf("%w: RangeFilterBitsPerKey %v outside [3, 48] (or 0 for none)", ErrInvalidOptions, b)
	}
	if r.FS == nil {
		r.FS = vfs.Default
	}
	if r.L0CompactionThreshold == 0 {
		r.L0CompactionThreshold = 4
	}
	if r.L0StopWritesThreshold == 0 {
		r.L0StopWritesThreshold = max(12, r.L0SlowdownWritesThreshold, 2*r.L0CompactionThreshold+4)
	}
	if r.L0SlowdownWritesThreshold == 0 {
		r.L0SlowdownWritesThreshold = r.L0StopWritesThreshold
	}
	if r.L0CompactionThreshold > maxL0CompactionThreshold {
		return r, fmt.Errorf("%w: L0CompactionThreshold %d above %d (DisableAutomaticCompactions turns compactions off)",
			ErrInvalidOptions, r.L0CompactionThreshold, maxL0CompactionThreshold)
	}
	if r.L0CompactionThreshold < 1 || r.L0SlowdownWritesThreshold < r.L0CompactionThreshold || r.L0StopWritesThreshold < r.L0SlowdownWritesThreshold {
		return r, fmt.Errorf("%w: L0 thresholds must satisfy 1 <= compaction (%d) <= slowdown (%d) <= stop (%d)",
			ErrInvalidOptions, r.L0CompactionThreshold, r.L0SlowdownWritesThreshold, r.L0StopWritesThreshold)
	}
	if r.LBaseMaxBytes == 0 {
		r.LBaseMaxBytes = 16 * int64(r.MemTableSize)
	}
	if r.TargetFileSize == 0 {
		r.TargetFileSize = max(int64(r.MemTableSize)/2, 16<<10)
	}
	if r.LBaseMaxBytes < 1 || r.TargetFileSize < 1 {
		return r, fmt.Errorf("%w: LBaseMaxBytes and TargetFileSize must be positive", ErrInvalidOptions)
	}
	switch {
	case r.MaxOpenFiles == 0:
		r.MaxOpenFiles = defaultMaxOpenFiles
	case r.MaxOpenFiles < minMaxOpenFiles:
		return r, fmt.Errorf("%w: MaxOpenFiles %d below %d", ErrInvalidOptions, r.MaxOpenFiles, minMaxOpenFiles)
	}
	switch {
	case r.TombstoneMaxAge == 0:
		r.TombstoneMaxAge = defaultTombstoneMaxAge
	case r.TombstoneMaxAge < 0:
		r.TombstoneMaxAge = 0
	}
	switch {
	case r.IdlePurgeMinShare == 0:
		r.IdlePurgeMinShare = compaction.DefaultOptions().IdleRatio
	case r.IdlePurgeMinShare < 0:
		r.IdlePurgeMinShare = 0 // off: the picker's 0
	case !(r.IdlePurgeMinShare <= 1): // also NaN
		return r, fmt.Errorf("%w: IdlePurgeMinShare %v above 1 (negative disables idle purges)", ErrInvalidOptions, r.IdlePurgeMinShare)
	}
	if r.Logger == nil {
		r.Logger = func(string, ...any) {}
	}
	return r, nil
}

// WriteOptions control the durability of one write.
type WriteOptions struct {
	// Sync makes the write durable before it returns: its WAL record is
	// fsynced (shared with concurrent syncing writers by group commit).
	Sync bool
}

var (
	// Sync is the WriteOptions of a write that survives a crash once acked.
	Sync = &WriteOptions{Sync: true}
	// NoSync is the WriteOptions of a write that a crash may lose (a process
	// crash does not, since the WAL is written before the write returns;
	// a power loss may).
	NoSync = &WriteOptions{Sync: false}
)

// IterOptions bound an iterator to [LowerBound, UpperBound); nil means
// unbounded on that side.
type IterOptions struct {
	LowerBound []byte
	UpperBound []byte
	// SkipCacheFill keeps the table blocks the iterator reads from disk out
	// of the block cache; it still uses the blocks the cache holds. For a
	// scan that passes over much of the DB once (an export, a backup, a
	// replica's snapshot), whose blocks would otherwise evict the ones
	// Gets and shorter scans come back to. Compactions always read this
	// way. (RocksDB's ReadOptions.fill_cache = false.)
	SkipCacheFill bool
}
