// Package manifest defines the VersionEdit — the unit of change to the set
// of tables that make up the database — its byte encoding, and the fold of a
// sequence of edits into the table set they describe. The engine appends
// encoded edits as records of a wal-framed MANIFEST and, on Open, replays
// them through a BulkVersionEdit to rebuild the exact table set.
//
// The encoding is a sequence of tagged fields (docs/format.md,
// "VersionEdit"); the CRC of the wal record that carries an edit is what
// catches damaged bytes, so Decode's job is to reject anything that is not
// a well-formed, self-consistent edit without panicking or over-allocating.
//
// # Invariants
//
//	M1 (canonical): Decode accepts only bytes Encode could have produced:
//	   tags in increasing order (scalar tags at most once), minimal varints,
//	   no unknown tag, nothing left over. So Encode(Decode(b)) == b.
//	M2 (valid): an edit Decode accepts passes Validate: levels < NumLevels,
//	   file numbers non-zero, SmallestSeq <= LargestSeq, no file number
//	   deleted twice or added twice, at most one compaction pointer per level.
//	M3 (bounded): Decode allocates O(len(input)) bytes whatever the input.
//	M4 (consistent fold): BulkVersionEdit.Accumulate rejects an edit that
//	   deletes a table not present at that level or adds a file number
//	   already present, and leaves the fold unchanged when it does; scalar
//	   fields (log number, next file number, last sequence) never decrease.
//	M5 (ordered levels): Apply returns L0 sorted by file number and every
//	   deeper level sorted by smallest key with no two tables overlapping;
//	   every file number (and the log number) is below NextFileNumber and
//	   every table's LargestSeq is at most LastSequence, when those are set.
//
// # Concurrency
//
// A VersionEdit is a plain value: encode it from many goroutines only if none
// mutates it. A BulkVersionEdit is for one goroutine (the engine replays the
// MANIFEST under its open lock). A State returned by Apply is not shared
// with the BulkVersionEdit and may be read concurrently.
package manifest
