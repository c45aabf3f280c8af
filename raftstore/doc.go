// Package raftstore stores a hashicorp/raft node's log and stable state in a
// sievekv database: *Store implements raft.LogStore, raft.StableStore and
// raft.MonotonicLogStore, so a raft.Raft can run on sievekv in place of
// raft-boltdb.
//
//	store, err := raftstore.Open("node1/raft", nil)
//	r, err := raft.NewRaft(conf, fsm, store, store, snaps, transport)
//
// The key layout and the log entry encoding are documented in
// docs/format.md, "raftstore".
//
// # Concurrency
//
// A Store is safe for concurrent use. Reads (GetLog, Get, GetUint64,
// FirstIndex, LastIndex) take no lock of the Store's own. Store.writeMu
// orders the log writes (StoreLog(s), DeleteRange) with the updates of the
// cached first and last index they make; stable-store writes need no
// ordering beyond the DB's.
//
// # Invariants
//
//	R1 (index order is key order): a log entry's key is logPrefix followed
//	   by its index as 8 big-endian bytes, so iterating the log range visits
//	   entries in index order and the first and last keys hold the first and
//	   last index.
//	R2 (cached bounds): Store.first and Store.last equal the smallest and
//	   largest index present (both 0 when the log is empty; nonEmpty tells
//	   that apart from a log of index 0 alone). Open recovers
//	   them by one bounded seek to each end of the log range; every log
//	   write updates them after its batch is committed, under writeMu. A
//	   DeleteRange whose seek of a moved bound fails after its deletion is
//	   committed sets boundsLost instead, and succeeds: the next
//	   FirstIndex, LastIndex or DeleteRange seeks both ends again before
//	   it answers, and fails if that seek does, so no caller is ever
//	   handed a bound naming a deleted entry.
//	R3 (durable on return): StoreLog, StoreLogs, DeleteRange, Set and
//	   SetUint64 commit one batch with kv.Sync: one WAL fsync per call, and
//	   all of the call or none of it survives a crash (kv's K1, K2).
//	R4 (exact round trip): GetLog returns every field StoreLog was given:
//	   Index, Term, Type, Data, Extensions and AppendedAt (the instant; the
//	   time zone comes back as UTC, and empty Data/Extensions as nil).
//	R5 (raft's not-found contract): a missing stable key is ErrNotFound,
//	   whose text is exactly "not found" because raft compares the text on
//	   a fresh node; a missing log index is raft.ErrLogNotFound.
package raftstore
