// Package base holds the vocabulary every layer of sievekv shares: internal
// keys (a user key plus a sequence number and a kind), the one comparator
// that orders them, the iterator contract, and the corruption error class.
//
// # Concurrency
//
// Everything here is a value type or a pure function; there is no shared
// state. An InternalKey's UserKey aliases whatever buffer it was built from.
//
// # Invariants
//
//	B1 (one order): internal keys are ordered by user key ascending
//	   (bytes.Compare), then by trailer descending, i.e. sequence number
//	   descending and, for equal sequence numbers, kind descending. Compare
//	   is the only implementation of that order; every package uses it.
//	B2 (trailer layout): Trailer = seqnum<<8 | kind, seqnum < 2^56. The
//	   encoded form of an internal key is the user key followed by the
//	   trailer as 8 bytes little-endian; it is on disk (sstable/, WAL).
//	B3 (visibility): an entry with sequence number s is visible to a read at
//	   sequence number r iff s <= r (see Visible). Seeking to
//	   MakeSearchKey(k, r) lands on the newest visible version of k, because
//	   KindMax is the largest kind (B1 puts it first among equal seqnums).
//	B4 (corruption class): every error that reports damaged or malformed
//	   persistent data satisfies errors.Is(err, ErrCorruption).
package base
