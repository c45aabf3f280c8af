package memtable

import (
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/google/btree"

	"github.com/sievekv/sievekv/internal/base"
)

// item is one version of one user key as the B-tree holds it: where its
// key and value bytes sit in the arena, and its trailer (MT6). The key is at
// (chunk, off) and the value follows it. probe is set only on the search
// keys of Get and the iterators (chunk == probeChunk), never on an item in
// the tree, so the tree's nodes hold no pointer the GC has to follow.
//
// prefix is base.UserKeyPrefix of the key: ordering two items by prefix
// agrees with ordering their keys whenever the prefixes differ, so most
// comparisons of a descent are decided inside the node, without a load
// from the arena.
type item struct {
	trailer    uint64
	prefix     uint64
	chunk, off uint32
	klen, vlen uint32
	probe      unsafe.Pointer // a search key's bytes, klen of them
}

// probeChunk marks a search item: its key is at probe, not in the arena.
const probeChunk = ^uint32(0)

// btreeDegree 32 gives nodes of up to 63 items (2.5 KiB), google/btree's
// own benchmarks' sweet spot between depth and shifting cost on insert.
const btreeDegree = 32

// EntryOverhead is the bytes ApproximateSize charges per entry beyond the
// arena bytes of its key and value (MT4): the item itself (40 bytes on
// 64-bit) divided by an assumed B-tree node fill of 50% (nodes settle near
// 69% full under random inserts and at 50% under sequential ones, which
// split every node in half) and one child pointer's share.
// TestApproximateSizeTracksHeap measures the total against the Go heap
// (ratio 0.8-1.0 when written).
const EntryOverhead = int64(unsafe.Sizeof(item{}))*2 + 8

// LogicalEntryOverhead is the bytes LogicalSize charges per entry beyond
// its key and value: the 8-byte trailer every table entry carries and 32
// bytes for the index that finds it, about what a compact arena skiplist
// spends per node (Pebble's: a 24-byte header holding the offsets, sizes
// and trailer, and 8 bytes per tower level, 1.6 levels on average). The
// engine flushes on LogicalSize, so a memtable limit yields tables the
// size such a memtable's would (docs/design.md, "Flushes the size
// Pebble's are"); the B-tree's real cost, EntryOverhead, stays in
// ApproximateSize.
const LogicalEntryOverhead = 40

// MemTable is a sorted in-memory buffer of internal keys. The zero value is
// not usable; call New.
type MemTable struct {
	arena *arena

	mu sync.RWMutex
	// writerWaiting is raised by an Add spinning for mu, so that spinning
	// Gets stand back (lock_spin.go).
	writerWaiting atomic.Bool
	// tree is guarded by mu: written under Lock, read under RLock, and
	// Cloned under Lock (Clone mutates the receiver's copy-on-write state).
	// The arena's writer side is guarded by mu's write lock too.
	tree *btree.BTreeG[item]
	// snap is the last Clone snapshot handed to iterators, shared by every
	// iterator made until the next Add clears it (under mu's write lock,
	// with the insert, so no iterator made after an Add gets a tree
	// without it). Nothing writes a snapshot, and google/btree lets any
	// number of readers share a tree nothing writes.
	snap *btree.BTreeG[item]
	// frozen is set once by Freeze, released once by Release, both under
	// mu (MT10, MT9).
	frozen, released bool
	// pool is where Release puts the nodes; nil for a memtable of New.
	pool *NodePool
	// filter holds every user key in the tree (MT11), read with no lock;
	// Release sets it nil. A bigger one replaces it, under mu, when
	// filterKeys passes its capacity.
	filter     atomic.Pointer[keyFilter]
	filterKeys int // Adds into filter; guarded by mu

	size    atomic.Int64 // MT4; readable without mu
	logical atomic.Int64 // MT7; readable without mu
	count   atomic.Int64
	deletes atomic.Int64 // the Adds of point tombstones; readable without mu
}

// New returns an empty memtable whose nodes come from and return to the
// heap.
func New() *MemTable { return NewWithPool(nil) }

// NewWithPool returns an empty memtable that takes its B-tree nodes from
// pool and, on Release, gives them back (MT10). A nil pool is New's.
func NewWithPool(pool *NodePool) *MemTable { return NewSized(pool, 0) }

// NewSized is NewWithPool with its key filter (MT11) sized for
// expectedEntries Adds, so that a memtable expected to take as many
// entries as the one before it never rebuilds its filter on the way (the
// rebuild holds the write lock while it rehashes every key). The engine
// passes the previous memtable's Len; 0 means no hint, and a hint past 16M
// entries counts as 16M (keyFilterMaxHintKeys).
func NewSized(pool *NodePool, expectedEntries int) *MemTable {
	a := newArena()
	less := func(x, y item) bool {
		if x.prefix != y.prefix {
			return x.prefix < y.prefix
		}
		return base.Compare(a.key(x), a.key(y)) < 0
	}
	m := &MemTable{arena: a, pool: pool}
	f := newKeyFilter(min(expectedEntries, keyFilterMaxHintKeys))
	m.filter.Store(f)
	m.size.Store(f.bytes())
	if pool != nil {
		m.tree = btree.NewWithFreeListG(btreeDegree, less, pool.free)
	} else {
		m.tree = btree.NewG(btreeDegree, less)
	}
	return m
}

// key returns the internal key of an item (or search item).
func (a *arena) key(it item) base.InternalKey {
	if it.chunk == probeChunk {
		return base.InternalKey{UserKey: unsafe.Slice((*byte)(it.probe), it.klen), Trailer: it.trailer}
	}
	return base.InternalKey{UserKey: a.bytes(it.chunk, it.off, it.klen), Trailer: it.trailer}
}

// value returns the value bytes of an item in the tree.
func (a *arena) value(it item) []byte {
	return a.bytes(it.chunk, it.off+it.klen, it.vlen)
}

// probeFor is the search item of key, whose bytes stay the caller's and
// must not change while the item is in use.
func probeFor(key base.InternalKey) item {
	return item{trailer: key.Trailer, prefix: base.UserKeyPrefix(key.UserKey), chunk: probeChunk,
		klen: uint32(len(key.UserKey)), probe: unsafe.Pointer(unsafe.SliceData(key.UserKey))}
}

// Set records value for userKey at seq. The memtable copies both. Its
// errors are Add's.
func (m *MemTable) Set(userKey []byte, seq base.SeqNum, value []byte) error {
	return m.Add(base.MakeInternalKey(userKey, seq, base.KindSet), value)
}

// Delete records a tombstone for userKey at seq. Its errors are Add's.
func (m *MemTable) Delete(userKey []byte, seq base.SeqNum) error {
	return m.Add(base.MakeInternalKey(userKey, seq, base.KindDelete), nil)
}

var (
	// ErrEntryTooLarge is wrapped by Add's error for an entry whose key and
	// value together exceed MaxEntryBytes. The engine bounds entries far
	// below it; a program using the package directly gets this error, not
	// a truncated entry or a panic.
	ErrEntryTooLarge = errors.New("memtable: entry too large")
	// ErrFrozen is wrapped by Add's error on a memtable that Freeze or
	// Release has closed to writes.
	ErrFrozen = errors.New("memtable: frozen or released")
)

// errFrozen is Add's static error for a frozen memtable, so the refusal
// allocates nothing.
var errFrozen = fmt.Errorf("memtable: Add on a frozen or released memtable: %w", ErrFrozen)

// MaxEntryBytes bounds an entry's user key and value together: an item
// records their lengths and the value's arena offset in 32 bits (MT6).
// The engine's own limits keep entries far below it.
const MaxEntryBytes = math.MaxUint32

// Add inserts an internal key with its value, copying both into the arena
// (MT2). An entry with the same internal key is replaced (MT1); its bytes
// stay in the arena and in ApproximateSize (MT4).
//
// An entry longer than MaxEntryBytes, which its 32-bit lengths would
// truncate into a wrong answer, is refused with an error wrapping
// ErrEntryTooLarge; an Add after Freeze or Release with one wrapping
// ErrFrozen. A refused Add copies nothing and leaves the memtable as it
// was. Both are errors rather than panics because a program using the
// package directly can reach them with its own input.
func (m *MemTable) Add(key base.InternalKey, value []byte) error {
	klen, vlen := len(key.UserKey), len(value)
	if uint64(klen)+uint64(vlen) > MaxEntryBytes {
		return fmt.Errorf("%w: a %d-byte key and %d-byte value exceed the %d-byte limit",
			ErrEntryTooLarge, klen, vlen, uint64(MaxEntryBytes))
	}
	m.lock()
	if m.frozen || m.released {
		m.mu.Unlock()
		return errFrozen
	}
	m.addToFilter(key.UserKey)
	before := m.arena.used
	chunk, off, b := m.arena.alloc(klen + vlen)
	copy(b, key.UserKey)
	copy(b[klen:], value)
	grown := m.arena.used - before
	it := item{trailer: key.Trailer, prefix: base.UserKeyPrefix(key.UserKey), chunk: chunk, off: off, klen: uint32(klen), vlen: uint32(vlen)}
	_, replaced := m.tree.ReplaceOrInsert(it)
	m.snap = nil
	m.mu.Unlock()
	if key.Kind() == base.KindDelete {
		m.deletes.Add(1)
	}
	if replaced {
		m.size.Add(grown)
		m.logical.Add(int64(klen + vlen))
		return nil
	}
	m.size.Add(grown + EntryOverhead)
	m.logical.Add(int64(klen+vlen) + LogicalEntryOverhead)
	m.count.Add(1)
	return nil
}

// Get returns the newest version of userKey visible at seq (MT3): its value
// and kind. found is false if no version is visible. A KindDelete result
// means the key is deleted as of seq; the caller must stop looking in older
// sources. The value must not be modified, and stays valid only while m is
// reachable and not released (MT2).
func (m *MemTable) Get(userKey []byte, seq base.SeqNum) (value []byte, kind base.Kind, found bool) {
	return m.GetHashed(userKey, keyHash(userKey), seq)
}

// GetHashed is Get for a caller that has hashed userKey already: hash must
// be xxhash.Sum64(userKey) (filters.Hash). A key the memtable's filter
// rules out is answered without the lock (MT11).
func (m *MemTable) GetHashed(userKey []byte, hash uint64, seq base.SeqNum) (value []byte, kind base.Kind, found bool) {
	f := m.filter.Load()
	if f == nil {
		panic(errReleased)
	}
	if !f.mayContain(hash) {
		return nil, 0, false
	}
	pivot := probeFor(base.MakeSearchKey(userKey, seq))
	m.rlock()
	if m.released {
		m.mu.RUnlock()
		panic(errReleased)
	}
	m.tree.AscendGreaterOrEqual(pivot, func(it item) bool {
		k := m.arena.key(it)
		if base.CompareUserKeys(k.UserKey, userKey) == 0 {
			value, kind, found = m.arena.value(it), k.Kind(), true
		}
		return false // only the first entry >= pivot can be the answer
	})
	m.mu.RUnlock()
	return value, kind, found
}

// ApproximateSize returns the memory the entries account for (MT4). It
// takes no lock.
func (m *MemTable) ApproximateSize() int64 { return m.size.Load() }

// LogicalSize returns the bytes the entries added so far amount to as
// table data: their keys and values, and LogicalEntryOverhead for each
// entry in the tree; the bytes of a replaced entry count too, as in
// ApproximateSize (MT7). It takes no lock.
func (m *MemTable) LogicalSize() int64 { return m.logical.Load() }

// Len returns the number of entries (versions, not distinct user keys).
func (m *MemTable) Len() int { return int(m.count.Load()) }

// Deletes returns the number of point tombstones added (a replaced one
// counts too): at most the tombstones a flush of m writes, for the flush
// to size its bookkeeping of them once.
func (m *MemTable) Deletes() int { return int(m.deletes.Load()) }

// Empty reports whether the memtable holds no entry.
func (m *MemTable) Empty() bool { return m.count.Load() == 0 }

// NewIter returns an iterator over a snapshot of the memtable (MT5),
// restricted to user keys in [lower, upper); nil means unbounded. The
// bounds are not copied and must stay unchanged while the iterator is used.
func (m *MemTable) NewIter(lower, upper []byte) *Iter {
	it := new(Iter)
	m.InitIter(it, lower, upper)
	return it
}

// InitIter makes it an iterator over a snapshot of m, as NewIter does,
// reusing the entry buffer a previous use grew, so an engine that keeps its
// iterators' memory between scans allocates only the snapshot here.
func (m *MemTable) InitIter(it *Iter, lower, upper []byte) {
	*it = Iter{tree: m.snapshot(), arena: m.arena, lower: lower, upper: upper, buf: it.buf[:0], pos: -1}
}
