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
// its WAL.
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
package kv
