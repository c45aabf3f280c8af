// Package rangedel holds range tombstones: the deletion of every user key
// in [Start, End) written at or below a sequence number. It encodes them
// into a table's range-deletion block (docs/format.md, "Range-deletion
// block"), decodes that block as untrusted bytes, and fragments a list of
// possibly overlapping tombstones into a Set that answers, for one key, the
// newest tombstone covering it that a read can see.
//
// # Concurrency
//
// Tombstones and Sets are immutable once built and safe for concurrent
// reads. Their byte slices alias whatever they were built from unless
// documented otherwise.
//
// # Invariants
//
//	R1 (coverage): a tombstone [s, e)#t deletes a point entry k#p exactly
//	   when s <= k < e and p < t, for every read at sequence number r >= t;
//	   reads below t do not see the tombstone (base's B3).
//	R2 (canonical block): a range-deletion block lists its tombstones in
//	   Less order, each with Start < End and 0 < Seq <= base.SeqNumMax;
//	   Decode rejects any other byte string, so a block has one encoding.
//	R3 (fragments): a Set's fragments are sorted by Start, pairwise
//	   disjoint, and the tombstones covering all of one are those listed
//	   on the path from its leaf to the root of a segment tree over the
//	   fragments, each tombstone at O(log n) nodes, so n nested ones cost
//	   O(n log n) memory, not n²; Cover(k, r) is the largest sequence
//	   number at or below r of a tombstone covering the fragment holding
//	   k, 0 if none.
package rangedel
