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
// its lock while the picker reads one. The Picker itself keeps no state
// between picks.
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
//	C4 (zero sequence numbers at the bottom): in an output with nothing
//	   below it, a kept Set of the oldest stripe is written with sequence
//	   number 0. Every open snapshot already sees it (stripe 0); no older
//	   version of its key exists (C1 kept one per stripe, nothing lies
//	   below); whatever was newer than it stays newer (real sequence
//	   numbers start at 1); and a range tombstone older than it is in
//	   stripe 0 too, which the engine never keeps at the bottom. So every
//	   read answers as before, and C3 holds since the entry is its key's
//	   oldest. RocksDB and Pebble do the same; the constant trailers let
//	   snappy shrink the bottom level's data blocks.
//	C5 (values shadowed from outside): the Iter asks its Shadowed hook
//	   about the first Set it would keep for each user key, with the
//	   newest sequence number of that Set's stripe (top); when the engine
//	   answers that an entry of the key with a sequence number in
//	   (Set's, top] lies outside the inputs and outlives the output, the
//	   Set is dropped, and with it (by C1) the older versions of its
//	   stripe. No snapshot lies between the two (the stripe has none
//	   below top), so the output is what C1 would write had the
//	   shadowing entry's table been an input. Older stripes are not
//	   asked about: their snapshots read them. Why the engine's answer
//	   is safe: kv's K14.
//	P1 (dynamic targets): level targets are derived from the data in the
//	   tree (every size the picker weighs, here and in P2-P4, is a table's
//	   DataSize: its file less its filter blocks, so the engine's filter
//	   budget and allocation never move a compaction): the bottom level is sized to hold (1 - 1/multiplier) of it;
//	   the base level is the deepest level whose share in a tree of ratio
//	   multiplier is at most BaseBytes (so a new base level starts small
//	   and L0 merges into little data), never deeper than the shallowest
//	   level holding data, so L0 never skips over data. The base target
//	   is BaseBytes and the levels below it grow by a common ratio.
//	P2 (most urgent first): a level is due when its score (L0: table count
//	   over the trigger, or over twice the trigger while merging L0 would
//	   rewrite more than 4 base bytes per L0 byte; L1+: compensated bytes
//	   over target) is at least 1; among due levels the picker takes the highest score divided by
//	   the score of the level it compacts into when that one is due too
//	   (room is made below first). L0 goes with all its tables (they
//	   overlap); a deeper level one table at a time, the one with the
//	   least overlap below per compensated byte (kMinOverlappingRatio).
//	P3 (bounded outputs): outputs split at the target file size and before
//	   overlapping more than MaxGrandparentOverlap bytes of the next level,
//	   and never inside one user key's versions (the engine's rule), so the
//	   next compaction of any output stays bounded.
//	P4 (purge when worth it): with no level due, the picker takes the
//	   compaction whose inputs' tombstones shadow the largest share of the
//	   bytes it rewrites (the shadowed bytes are the engine's estimate),
//	   if that share is at least PurgeRatio.
//	P5 (tombstones reach the bottom): with nothing else to do, a table
//	   above the bottom whose oldest tombstone is older than
//	   TombstoneMaxAge is compacted one level down; outputs inherit the
//	   oldest tombstone time, so within about (levels x check interval)
//	   past the bound the tombstone is at the bottom, where C2 drops it.
//	   A tombstone a snapshot kept at the bottom (the value beneath it
//	   still visible to the snapshot) is dropped once no open snapshot is
//	   older than any entry of its table: the table is compacted into
//	   itself (OldestSnapshot), and its output holds no tombstone.
//	P6 (an idle DB keeps no garbage): asked with PickIdle, which the
//	   engine does only once it took no write for a while, the picker
//	   takes what Pick would, or else the purge candidate of P4 that frees
//	   the largest share of its rewrite among those whose tombstones
//	   shadow at least IdleRatio of the tree's bytes. Each idle purge
//	   frees that much, so idle purges rewrite at most 1/IdleRatio bytes
//	   per byte deleted, and only while no write competes for the disk.
//	P7 (manual compactions rewrite their range): DB.Compact(start, end)
//	   runs ManualStep for each level from L0 down on the version then
//	   current. A step merges the level's tables that overlap the range
//	   (at L0, closed under overlap among L0 tables) into the first level
//	   below that overlaps them, or the bottom (straight into the bottom,
//	   with every table below that their key range reaches, widened by
//	   each table taken, when all of those overlap the range: the steps
//	   would rewrite each of them anyway, and once more at every level
//	   they stop at), and at
//	   the bottom rewrites
//	   in place the tables in range holding tombstones or entries numbered
//	   above 0 (versions a snapshot kept apart), other than the earlier
//	   steps' outputs (a rewrite of those drops nothing). So every version
//	   in the range ends at the bottom with what C1 and C2 drop dropped,
//	   and what is rewritten is the range's overlap at each level, never
//	   the tables beyond it that only an earlier step's wide inputs touch.
package compaction
