// Package manifest holds the engine's one model of the table set: the
// TableMetadata of each sorted table, the immutable Version that places
// tables in levels, the VersionEdit that changes it, the edit's byte
// encoding, the BulkVersionEdit fold that turns a version and edits into
// the next version, and Replay, which folds a MANIFEST's records with it. The engine (kv), the compaction picker and the MANIFEST
// writer and reader all use these types; none keeps its own shape of them.
//
// The encoding is a sequence of tagged fields (docs/format.md,
// "VersionEdit"); the CRC of the wal record that carries an edit is what
// catches damaged bytes, so Decode's job is to reject anything that is not
// a well-formed, self-consistent edit without panicking or over-allocating.
//
// # Invariants
//
//	V1 (immutable versions): a Version and the TableMetadata it holds do
//	   not change once the Version is published, except the atomic
//	   reference counts and obsolete marks, and the delete-aware estimates
//	   of deletes.go (advisory: readers treat them as hints); readers (Get,
//	   iterators, the compaction picker) use a published Version without copying it or
//	   holding the engine's lock while they read it.
//	V2 (ordered levels): a Version's L0 is ordered newest first (largest
//	   sequence number, then file number, both descending); every deeper
//	   level is ordered by smallest key, and no two of its tables share a
//	   user key.
//	M1 (canonical): Decode accepts only bytes Encode could have produced:
//	   tags in increasing order (scalar tags at most once), minimal varints,
//	   no unknown tag (the never-written tag 4 included), keys at least an
//	   internal-key trailer long, nothing left over. So
//	   Encode(Decode(b)) == b.
//	M2 (valid): an edit Decode accepts passes Validate: levels < NumLevels,
//	   file numbers non-zero, SmallestSeq <= LargestSeq, no file number
//	   deleted twice or added twice.
//	M3 (bounded): Decode allocates O(len(input)) bytes whatever the input.
//	M4 (consistent fold): BulkVersionEdit.Accumulate rejects an edit that
//	   deletes a table not present at that level or adds a file number
//	   already present, and leaves the fold unchanged when it does; scalar
//	   fields (log number, next file number, last sequence) never decrease.
//	M5 (checked result): Apply returns a Version that keeps V2, in which
//	   every table's smallest key is at most its largest, every file number
//	   (and the log number) is below NextFileNumber and every table's
//	   LargestSeq is at most LastSequence, when the folded edits set those,
//	   and LastSequence is at most base.SeqNumMax.
//
// # Concurrency
//
// A VersionEdit is a plain value: encode it from many goroutines only if none
// mutates it. A BulkVersionEdit is for one goroutine (the engine folds under
// its lock). A published Version may be read by any number of goroutines
// (V1); Ref and Unref are atomic.
package manifest
