// Package sstable writes and reads sievekv's immutable sorted tables: data
// blocks of prefix-compressed internal keys, the range tombstones' block
// (format 2), an optional range filter, one whole-table filter over the
// user keys, an index, properties and a fixed footer (the byte layout is
// in docs/format.md, "Sorted table"). A Reader keeps index and filter in
// memory so a Get for an absent key usually costs no I/O at all.
//
// # Concurrency
//
// A Writer is single-goroutine. A Reader is safe for concurrent Get and
// NewIter calls once Open returns (all its state is immutable; counters
// are atomic); Close must not race with them. An Iter is single-goroutine.
// The Cache and Stats are safe for concurrent use and meant to be shared
// by all readers of an engine. Block memory is reference counted (BM1): a
// Get copies its value out before it lets go of the block, and an Iter's
// Key and Value stay valid until its next move or Close.
//
// # Invariants
//
//	T1 (checked blocks): every block is stored as contents, a 1-byte
//	   compression tag and the CRC32C of both; a reader verifies the CRC
//	   before it decompresses or parses a single byte.
//	T2 (footer): the last 64 bytes are the footer: handles, format
//	   version, its own CRC32C and Magic. Open rejects a file whose footer
//	   is wrong or whose handles do not tile the file in layout order.
//	T3 (restarts): the entry at each restart offset stores its full key
//	   (shared = 0); restart offsets start at 0 and strictly increase.
//	T4 (validated before use): parseBlock checks the restart array before
//	   any iterator or cache sees a block, and iterators check every
//	   varint, key and value length against the block bounds and every
//	   key's shape as they decode, so no block can make a read panic or
//	   return bytes from outside it. The full walk (each restart an entry
//	   boundary, strict key order) runs on index blocks at Open, on every
//	   block in invariants builds, and in VerifyBlocks (kv.Check).
//	T5 (separators): index entry i holds a separator s_i and the handle of
//	   data block i with s_{i-1} < every key of block i <= s_i; handles
//	   tile the data region in order. s_i is either the last key of block
//	   i or (u, TrailerMax) with u strictly between the user keys of block
//	   i's last and block i+1's first entry (the shortest such u). This is
//	   a format rule, not just a writer habit: it guarantees that if the
//	   block findBlock picks has no entry >= a Get's search key, no version
//	   of the searched user key exists, so a Get reads at most one block.
//	T6 (filter guard): after Open, index and filter are in memory. Get
//	   consults the filter first (with a hash the caller may compute once
//	   for many tables, GetHashed); on a negative it returns without any
//	   read, and otherwise reads exactly the one data block of T5 (or hits
//	   the cache). Stats count each outcome.
//	T7 (bounds): an Iter never yields an entry outside [lower, upper) and
//	   never loads a data block that T5 proves holds only keys outside.
//	T8 (corruption class): any damaged or malformed byte reached by an
//	   operation makes it fail with an error wrapping base.ErrCorruption
//	   that names the file and the offset, never a panic and never a
//	   wrong answer; I/O errors are wrapped as they are.
//	T9 (filter agreement): a table has a filter block exactly when its
//	   properties name a filter and it holds a key, and the block's envelope
//	   names the properties' filter type. Open checks it; a disagreement is
//	   a *FilterMismatchError (T8). The table builds its filter only
//	   through a filters.Policy and probes it only through filters.Filter,
//	   so it names no filter kind of its own.
//	T10 (range filter guard): a table written with a range filter budget
//	   carries a filters.RangeFilter over its distinct user keys in an
//	   optional block just before the point filter (range_filter.go). A
//	   bounded Iter may ask it once per SeekGE, SeekLT, First and Last:
//	   up front while the filter pays, else sampled, or just before the
//	   call's first data-block read while its last answer was "empty"
//	   (rangeFilterUse), and, when it proves the range
//	   empty, returns "no entry" without reading a block; since
//	   the filter has no false negatives, and a call that does not ask
//	   reads as without one, the iterator's answers are those of the same
//	   table without one.
//
// Block memory (blockbuf.go, cache.go, readahead.go):
//
//	BM1 (counted block memory): every data block a read uses lives in a
//	   blockBuf whose count includes the cache's entry (while cached) and
//	   each Get or Iter that reads it. Memory is recycled into the size-
//	   class pools only when the count reaches zero, never while anything
//	   may still read it; invariants builds poison it on recycling, so a
//	   read after release shows as wrong bytes or a corruption error.
//	   Nothing outside the package ever holds block memory past a call
//	   except through an Iter, whose Value is valid until its next move.
//	BM2 (cache bound): a shard evicts before it inserts, and SetCapacity
//	   evicts down to a lowered capacity before it returns, so the bytes
//	   it charges (buffer capacity plus cacheEntryOverhead per entry)
//	   never exceed its capacity; a block larger than a shard is not cached.
//	   Evicted blocks stay readable to those holding them (BM1). Blocks
//	   enter the cache only from reads that will come back to them: Gets
//	   and plain Iters; an Iter told SkipCacheFill (a compaction's, one
//	   pass over the table) uses cached blocks but caches none it reads.
//	BM3 (readahead only serves what it read): an Iter's readahead window
//	   holds stored bytes exactly as read from the file; a block copied
//	   from it is checksummed and parsed like any other (T1, T4), and a
//	   window never extends past the data blocks.
package sstable
