// Package compaction holds the engine-independent logic of merging tables:
// which versions of a key an output must keep, and (with the leveled picker)
// which tables to merge next. The kv package drives it; this package does no
// I/O of its own.
//
// # Concurrency
//
// Values here are used by one goroutine at a time. The picker reads the
// engine's published manifest.Version directly: versions are immutable once
// published (manifest's V1), so the engine needs neither a copy nor to hold
// its lock while the picker reads one (the Picker's own round-robin
// pointers are guarded by the engine's DB.mu).
//
// # Invariants
//
//	C1 (snapshot stripes): with snapshots s1 < s2 < ... < sn, the sequence
//	   numbers fall into stripes (0, s1], (s1, s2], ..., (sn, inf). A reader
//	   at any snapshot sees, for each user key, only the newest version in
//	   its stripe or an older stripe. So an output keeps, per user key, the
//	   newest version of each stripe and drops every other version.
//	C2 (tombstones at the bottom): a tombstone in the oldest stripe whose
//	   key can have no older version outside the compaction's inputs (the
//	   output is the bottom of the tree for that key) hides nothing and is
//	   dropped, together with the versions it shadows (by C1).
//	C3 (order preserved): kept entries come out in the input's order, which
//	   is base.Compare order.
//	P1 (dynamic targets): level targets are derived from the data in the
//	   tree: the bottom level is sized to hold (1 - 1/multiplier) of it, the
//	   levels above shrink by a common ratio down to the base level, whose
//	   target is at least BaseBytes. The base level is never deeper than the
//	   shallowest level holding data, so L0 never skips over data.
//	P2 (most urgent first): a level is due when its score (L0: table count
//	   over the trigger; L1+: bytes over target) is at least 1; the picker
//	   takes the highest score, L0 with all its tables (they overlap), a
//	   deeper level one table at a time, round-robin over the key space.
//	P3 (bounded outputs): outputs split at the target file size and before
//	   overlapping more than MaxGrandparentOverlap bytes of the next level,
//	   and never inside one user key's versions (the engine's rule), so the
//	   next compaction of any output stays bounded.
package compaction
