// Package memtable is the in-memory sorted buffer of recent writes: a
// google/btree of internal keys (ordered by base.Compare) with their values,
// which the engine flushes to a table when LogicalSize passes its limit.
//
// # Concurrency
//
// One writer and any number of concurrent readers. Writes (Set, Delete, Add)
// take the write side of an RWMutex; Get takes the read side, unless the
// memtable's key filter rules the key out, when it takes no lock at all
// (MT11): beside a reader that Gets in a loop, Go's RWMutex made the
// writer and the reader take turns sleeping. A Get of a key the memtable
// holds and an Add still meet on the lock, and each first retries the
// non-blocking TryRLock or TryLock for about a critical section's length
// before it blocks, the Add keeping spinning Gets out meanwhile
// (lock_spin.go): the lock changes hands between cores without a sleep
// and a wake. btree.BTreeG
// is not safe for a concurrent read and write by itself, so an iterator does
// not read the live tree: NewIter takes the write lock just long enough for
// an O(1) copy-on-write Clone and then iterates that snapshot with no lock
// at all; iterators made before the next Add share it (a read lock finds
// it), since nothing writes a snapshot. Later writes copy the nodes they
// touch and are invisible to the iterator. Once Freeze has declared that nothing writes the
// memtable again, iterators share its tree with no Clone (google/btree's
// readers may run concurrently), so the nodes stay the tree's own and
// Release can recycle them (MT10). Concurrent writers are also serialised
// correctly by the mutex, but the engine never needs that.
//
// # Invariants
//
//	MT1 (sorted, unique): the tree holds at most one entry per internal key,
//	   in base.Compare order; adding an existing internal key replaces it.
//	MT2 (owned bytes): keys and values are copied on insert, into the arena;
//	   a slice returned by Get or an iterator is never modified afterwards
//	   and may be kept (read-only) for as long as the caller likes, until
//	   the memtable is released (MT9), provided the caller keeps the
//	   memtable itself reachable meanwhile: a slice into a mapped chunk
//	   (MT12) does not keep the chunk alive, so once the memtable is
//	   garbage the GC unmaps the bytes under any slice still held, and a
//	   read of it faults or returns another mapping's bytes.
//	MT3 (newest visible): Get(k, s) returns the entry with user key k and the
//	   largest seqnum <= s (base.Visible), tombstones included.
//	MT4 (honest size): ApproximateSize is the arena bytes handed out (keys,
//	   values, the bytes of replaced entries and the unused tails of full
//	   chunks) plus a fixed per-entry overhead that covers the B-tree item
//	   and its share of node slack; tests check it against the Go heap
//	   and the mapped chunks (MT12) within a factor.
//	MT5 (snapshot iterators): an iterator sees exactly the entries present
//	   when NewIter returned, regardless of later writes.
//	MT6 (arena): key and value bytes live in a few large arena chunks (a
//	   dozen for a 4 MiB memtable), never moved, reused only after Release
//	   (MT9) and kept outside the Go heap (MT12); a B-tree item is a
//	   position in the arena (its pointer is set only on search keys) plus
//	   the trailer and the key's
//	   first 8 bytes (which decide most comparisons), so an insert
//	   allocates nothing but the occasional chunk and node, and the GC has
//	   neither per-entry objects to mark nor pointers in the tree to follow.
//	   Readers resolve positions through an atomically published chunk
//	   directory, so they need no lock against the writer's new chunks.
//	MT7 (logical size): LogicalSize is the sum over every Add of the key's
//	   and value's lengths, plus LogicalEntryOverhead for each Add that did
//	   not replace an entry (so once per entry in the tree): what they
//	   amount to as table data, independent of the B-tree's node slack and
//	   the arena's chunking. It is at most ApproximateSize (the memory
//	   charge includes more per entry), and the engine flushes on it.
//	MT8 (touched ahead): the pages of the arena's current chunk are
//	   present through at least the bytes handed out, and are touched
//	   touchAhead bytes at a time ahead of the fill (arena_touch.go), so
//	   the copy of an entry does not take the page fault of a chunk the
//	   heap got fresh from the OS; an entry too large for such batches to
//	   stay rare touches only through the page it ends in.
//	MT9 (released arenas): Release hands a memtable's arena chunks to
//	   process-wide pools (arena_reuse.go), from which later memtables take
//	   their chunks of the same size. It is the one exception to MT2 and
//	   MT6's "never reused": the caller promises that no reader of the
//	   memtable, and no slice it handed out, is left. A chunk taken from a
//	   pool holds the old memtable's bytes beyond the fill; MT6 readers
//	   never look there. Get and NewIter on a released memtable panic.
//	MT10 (recycled nodes): a memtable made by NewWithPool takes its B-tree
//	   nodes from a NodePool and Release gives back every node its tree
//	   owns. A Clone makes all existing nodes owned by neither tree, so a
//	   memtable whose nodes are to be recycled must be frozen (Freeze)
//	   before it is iterated: a frozen memtable refuses writes (Add returns
//	   an error wrapping ErrFrozen) and its iterators read the tree itself. Nodes a Clone from before
//	   the freeze still shares are left to the GC.
//	MT11 (key filter): every user key in the tree is in the memtable's
//	   key filter (key_filter.go), a Bloom filter of atomic words, and a
//	   Get whose key it rules out returns not found without the lock. The
//	   writer sets a key's bits before the entry enters the tree, so a Get
//	   that begins after an Add returned sees them, and a Get that finds
//	   them unset is ordered before that Add, which had not inserted the
//	   entry yet. A filter grown past its capacity is replaced under the
//	   write lock by a bigger one filled from the whole tree, published
//	   before the next key's bits go into it; filters only move forward, so
//	   whichever a Get loads holds every key of every Add that returned
//	   before it loaded it. The engine reads its visible sequence number
//	   before it probes a memtable, and publishes it after the batch's Adds
//	   returned, so every entry a Get's sequence number covers is in the
//	   filter it loads. The filter's bytes count in ApproximateSize (MT4),
//	   not in LogicalSize (MT7).
//	MT12 (off-heap arena): on Linux, the arena's chunks of the shared sizes
//	   are anonymous mappings outside the Go heap (arena_chunk.go), so the
//	   arena does not raise the GC's heap goal; each has a heap handle
//	   held by its arena, then by the pool Release gives it to, whose
//	   collection unmaps it. An oversized entry's own chunk is on the heap,
//	   as is every chunk when mapping fails, past maxMappedChunks, or on
//	   other platforms.
//	   MappedBytes reports what is mapped.
package memtable
