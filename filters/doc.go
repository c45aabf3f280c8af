// Package filters is sievekv's library of approximate-membership filters: the
// read guards that let a Get skip a table that definitely lacks a key.
//
// Every filter answers MayContain(key) with "definitely absent" (false) or
// "possibly present" (true). Keys are hashed exactly once, with xxhash, to a
// 64-bit value (see Hash); every position, fingerprint and probe sequence a
// filter needs is derived from that value, so callers that already hold the
// hash (the sstable writer does) use the ...Hash and ...FromHashes forms.
//
// # Families
//
//   - Bloom family (Bloom, BlockedBloom, CountingBloom, ScalableBloom): built
//     incrementally; counting supports Remove; scalable grows without bound.
//   - Static filters (Xor8, BinaryFuse8, BinaryFuse16, BinaryFuse, Ribbon):
//     built once from the complete key set; smallest and fastest per key.
//   - Dynamic fingerprint filters (Cuckoo, Quotient and their descendants):
//     support Add and Remove at high load.
//
// # Range filters
//
// RangeFilter (Grafite over an order-preserving key code) answers "might any
// key lie in [lo, hi)?", so a bounded scan can skip a table. It keeps F1 for
// point queries, F3 for its encoding, and four invariants of its own:
//
//	R1 (no false negatives for ranges): MayContainRange(lo, hi) is true
//	   whenever a key the filter was built from lies in [lo, hi), across
//	   marshal/unmarshal round trips.
//	R2 (codes keep order): the key coder maps built keys k1 <= k2 to codes
//	   c(k1) <= c(k2), and maps a query's bounds to the smallest and largest
//	   code any built key inside the bounds can have.
//	R3 (FP within the Grafite bound): an empty query of code width w is a
//	   false positive with probability at most n*w/r (w/2^(B-2) at B bits
//	   per key); exact-mode filters (small code universes) have none.
//	R4 (learnt alphabets are whole): while a RangeBuilder learns a sorted
//	   key set's shape, the alphabet of every position below its learnt
//	   end holds the byte of every key added at that position, and the
//	   coder reads no position at or past that end; learning up to a new
//	   end reads the stored keys again. A filter is therefore the same
//	   whatever end learning stopped at.
//
// # Types and table policies
//
// Type is the one name of a filter kind everywhere in sievekv: its value is
// the envelope's type byte, TableCode the byte tables and the manifest
// record, String the name tools print. A Policy builds the filter a table
// embeds from its key hashes; NewPolicy returns the registered policy of a
// Type, so a table format builds any filter without naming one.
//
// # Invariants
//
// Every filter in this package keeps these; tests cite them by name.
//
//	F1 (no false negatives): after a key is added (or a static filter is built
//	   from it), MayContain(key) returns true until the key is removed, across
//	   any sequence of other adds, failed adds, removes of other members and
//	   marshal/unmarshal round trips.
//	F2 (failed adds change nothing): an Add that returns an error leaves the
//	   filter exactly as it was.
//	F3 (bytes are checked): every encoding is self-describing (magic, type,
//	   version, body length) and ends with a CRC32C; decoding rejects any
//	   malformed input with an error wrapping ErrCorrupt, never panics, and never
//	   allocates more than the input's own length justifies.
//	F4 (measured FP matches the math): each filter's false-positive rate on
//	   absent keys stays within the bound its constructor documents; tests
//	   assert it on at least a million absent keys.
//
// # Removing from dynamic filters
//
// Counting Bloom, cuckoo and quotient filters support Remove, with one hazard
// shared by every fingerprint filter: removing a key that was never added may
// remove the fingerprint (or counter increments) of a different key that
// collides with it, creating a false negative for that other key. Callers must
// only remove keys they know to be members. CountingBloom refuses a Remove for
// a key it can prove absent, but a false positive still passes that check.
//
// # Concurrency
//
// Filters are not safe for concurrent mutation. Static filters and any filter
// no longer being mutated may be queried from many goroutines at once.
package filters
