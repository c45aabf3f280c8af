// Package kv is sievekv's public API and the engine that ties its parts
// together: a write-ahead log, B-tree memtables, immutable sorted tables
// each guarded by an approximate-membership filter, a manifest of the live
// tables, and compaction.
//
//	db, err := kv.Open("data", nil)
//	err = db.Set([]byte("k"), []byte("v"), kv.Sync)
//	v, err := db.Get([]byte("k"))
//
// # Concurrency
//
// A DB is safe for concurrent use by any number of goroutines. Iterators,
// batches and snapshots are each for one goroutine at a time. DB.mu guards
// the DB's mutable state (named on each field); the commit queue makes one
// writer at a time (the leader) the only writer of the mutable memtable and
// its WAL. The table set is a manifest.Version of manifest.TableMetadata,
// the one model the compaction picker and the MANIFEST share; a version is
// immutable once published (manifest's V1), so a read pins the published
// read state (memtables and version, K9) without taking DB.mu, and every change
// goes through one fold (manifest.BulkVersionEdit) that MANIFEST replay uses
// too.
//
// # Who owns the bytes
//
// Every slice the package hands out can be modified by the caller without
// touching the DB, and every slice it takes is copied before the call
// returns:
//
//   - DB.Get and Snapshot.Get return a fresh copy of the value, the
//     caller's to keep and modify.
//   - Iterator.Key and Iterator.Value return the iterator's own buffers:
//     modifiable, valid until the next positioning call or Close, which
//     reuse them. Copy to keep. They never alias the memtable or a cached
//     block, so no caller can corrupt those.
//   - Set, Delete, Batch.Set and Batch.Delete copy key and value: the
//     caller may reuse its buffers as soon as the call returns. A Batch
//     must not be modified while Apply runs; after it returns the batch
//     may be Reset and reused (the memtable copies what it keeps).
//   - IterOptions bounds are copied by NewIter.
//
// # Invariants
//
//	K1 (durability): a write acknowledged with Sync is in an fsynced WAL
//	   (and the WAL's directory entry is synced) before Apply returns.
//	K2 (atomic batches): a batch is one WAL record; recovery applies all
//	   of it or none of it.
//	K3 (visibility): the visible sequence number advances only after every
//	   write at or below it is in the memtable; reads at sequence s see
//	   exactly the writes numbered <= s.
//	K4 (newest first): for any user key, memtable versions are newer than
//	   table versions, L0 tables are searched newest first, and a level's
//	   versions are newer than those of deeper levels. A Get stops at the
//	   first source holding a visible version (value or tombstone).
//	K5 (manifest is truth): the live tables are exactly those the MANIFEST
//	   names; a table file is deleted only after an edit removing it is
//	   durable and no version in use still includes it.
//	K6 (WALs outlive their memtables): a WAL file is deleted only once the
//	   manifest's log number has passed it, i.e. its memtable is in a table.
//	K7 (tombstone index has no false negative): every tombstone in a live
//	   table is counted by the tombstone index, duplicates included; the
//	   index answers "no tombstone" for a key only when no live table holds
//	   one. Its growth is bounded, and when it cannot fit it saturates to
//	   answering "may have" for every key; while a growth (or the build
//	   Open starts, past a few MiB of tombstone tables) reads the tables
//	   in the background it answers "may have" too, and it installs the
//	   version it read plus the changes logged since. An edit's changes
//	   are queued at install (under DB.mu, behind a leaf lock that never
//	   waits for an update) and reach it after DB.mu is released, in the
//	   order the edits were installed; a lookup waits until the queue is
//	   empty (kv/tombstone_index_edit.go).
//	K8 (range tombstones before filters): a range tombstone [s, e)#t
//	   deletes every entry of a key in [s, e) older than t. Range
//	   tombstones are held beside the point entries of their source (a
//	   memtable's list, a table's range-deletion block, resident once the
//	   table is open) and point filters know nothing of them, so a Get asks
//	   each source, newest first in K4's order, for its newest visible
//	   tombstone covering the key before that source's filter-first point
//	   lookup; the first source with one decides: its point version newer
//	   than the tombstone, or "not found". For any key k and tombstone
//	   covering k in some source, no older source holds a version of k
//	   newer than that tombstone: tables are widened to their tombstones'
//	   ranges, a tombstone an output table ends inside is split at the
//	   bound, above every key the table holds and at or below the next
//	   table's first, and the rest begins the next table, so each key a tombstone covers lies in the table
//	   holding that part of it, and compactions pick by those widened
//	   bounds (docs/design.md, "Range tombstones sit beside the filters,
//	   not behind them").
//	K9 (published read state): after Open, every change of the memtables
//	   or the current version is followed, under DB.mu, by publishing a new
//	   readState; a read pins the published one lock-free, and a retired
//	   state drops its version reference exactly once, when its last reader
//	   is done (kv/read_state.go).
//	K10 (filter budget): with FilterAuto, each table's filter payload is at
//	   most its bits per key times its keys (filters.ChooseTableFilter
//	   checks the exact size); under FilterAllocationMonkey the payloads of
//	   the live and pending tables stay within FilterBitsPerKey times their
//	   keys when each is written (kv/filter_budget.go), plus
//	   filters.TableFilterHeaderBytes per table.
//	K11 (the WALs are one chain): the batches of the live WALs, in file
//	   order, carry consecutive sequence numbers. A rotation retires the
//	   old log to a background sync (kv/wal_sync.go); a Sync commit's own
//	   fsync waits until every older log is durable, so a log holding a
//	   synced mark (wal's W4) proves every older log whole. Recovery and
//	   Check read the logs as one chain, stop at the first break (a torn
//	   tail, an empty log before one with records, a sequence gap between
//	   logs) and drop everything after it: a prefix of the acknowledged
//	   writes, never a hole followed by later data. A break before a log
//	   holding a synced mark is corruption (kv/wal_replay.go).
//	K12 (memtable lifetime): a memtable's arena and B-tree nodes are handed
//	   back for reuse (memtable's MT9, MT10) only when the DB no longer queues it and no read
//	   state listing it is pinned: memTable.refs counts the DB's hold and
//	   one per read state (kv/memtable_release.go). Whatever reads a
//	   memtable outside a pinned read state holds a reference of its own.
//	   Rotation freezes the memtable (no commit writes it after), so its
//	   flush and readers share its tree instead of cloning it.
//	K13 (memtable range-tombstone index): a memtable's range tombstones
//	   are an append-only list in commit order and an index over a prefix
//	   of it: runs of consecutive tombstones, oldest first, that tile the
//	   prefix, each fragmented into a rangedel.Set (rangedel's R3) and
//	   more than twice the size of the next newer run, so there are at
//	   most log2(n)+1 and a lookup is O(log² n), never a scan. An index is
//	   immutable once published; the first reader to find it shorter than
//	   the list builds the next one (a run of the new tombstones, merged
//	   with older runs no more than twice its size) under the memtable's
//	   build lock, which the commit path never takes, and publishes it
//	   atomically. A read at s takes the index after s is visible, so it
//	   holds every tombstone at or below s (K3); newer ones in it are
//	   skipped by sequence number (kv/rangedel_mem.go). The list and the
//	   largest index built count in the memtable's size and rotation.
//	K14 (early drop of shadowed values): a compaction of inputs picked
//	   from version v into level L drops the first kept Set e of a user
//	   key k (compaction's C5) only when a table of v at a level above L,
//	   not an input, holds a point entry t of k (any kind) with
//	   e.seq < t.seq <= top, top being the newest sequence number of e's
//	   snapshot stripe. The lookup alone makes the drop safe, because:
//	   a. v is immutable and the compaction holds a reference to it until
//	      it is done (manifest's V1), so the lookup reads tables that
//	      exist and speaks of v.
//	   b. Until the compaction installs, no edit removes or moves a table
//	      of v: compactions (trivial moves and manual Compact included)
//	      run one at a time under compactMu, and the only edits beside
//	      them are flushes, which add L0 tables. So t's table is in the
//	      version the compaction installs, above e's output.
//	   c. t shadows e for every reader of that version and later ones:
//	      newer data for a key is never in a lower level than older data
//	      and L0 tables are searched newest first (K4), so a Get or an
//	      iterator reaches t before the place e would have been, and
//	      t.seq > e.seq (implied by K4 for tables above L; checked too).
//	   d. Snapshots: no open snapshot s has e.seq <= s < t.seq (t.seq <=
//	      top), so every snapshot that saw e sees t; a snapshot opened
//	      later reads at the visible sequence number, which was already
//	      past t.seq when v was current. The output is the one C1 would
//	      write had t's table been an input.
//	   e. t itself goes only as if e had gone with it: by C1 (a newer
//	      entry of its stripe, which shadows e as well) or by C2 at the
//	      bottom, which consults the version current then, where e no
//	      longer exists; it still reaches the bottom and is dropped there.
//	   f. Reads pinned to older read states (Gets, iterators, snapshots'
//	      iterators) keep their version's tables, e's included, until
//	      they finish (K5, K9): the drop is invisible to them.
//	   g. Range tombstones take no part: e is dropped on a confirmed
//	      point entry only, and removing an entry keeps K8.
//	   The tombstone index only chooses which Sets pay the lookup (those
//	   whose key it may hold a tombstone for, and, while such lookups
//	   keep finding newer Sets, the others inside an above table's
//	   range): its answer never drops a value by itself, so even a wrong
//	   negative would only keep garbage.
//	   It is consulted only when it holds a tombstone and is neither
//	   saturated nor growing, after waiting for the edits queued before
//	   the compaction began; later edits only add newer flushes'
//	   tombstones, since only compactions remove (kv/shadow_drop.go).
//	K15 (reading the latest state): a Get or iterator of the latest state
//	   pins the read state first and loads the visible sequence number
//	   after, again if a publish came between (loadLatestReadState). A
//	   compaction drops a version only for a newer entry already visible,
//	   so every version visible at the number is in the pinned state; in
//	   the other order a compaction between the loads could drop the
//	   version visible at the number and the read would return an older
//	   one, a value the key no longer held.
package kv
