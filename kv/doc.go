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
// immutable once published (manifest's V1), so a read takes a reference to
// d.current under DB.mu and then reads it without the lock, and every change
// goes through one fold (manifest.BulkVersionEdit) that MANIFEST replay uses
// too.
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
//	   answering "may have" for every key (kv/tombstone_index.go).
//	K8 (filter budget): with FilterAuto, each table's filter payload is at
//	   most its bits per key times its keys (filters.ChooseTableFilter
//	   checks the exact size); under FilterAllocationMonkey the payloads of
//	   the live and pending tables stay within FilterBitsPerKey times their
//	   keys when each is written (kv/filter_budget.go), plus
//	   filters.TableFilterHeaderBytes per table.
package kv
