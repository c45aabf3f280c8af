package kv

import (
	"sync/atomic"

	"github.com/sievekv/sievekv/filters"
	"github.com/sievekv/sievekv/internal/base"
	"github.com/sievekv/sievekv/internal/manifest"
)

// Early drop of shadowed values (K14 in kv/doc.go, compaction's C5). A
// compaction that writes the newest Set v of a key k among its inputs may
// find k deleted (or overwritten) by an entry t in a table outside the
// compaction, above its output: v is garbage that every compaction would
// otherwise rewrite until t reaches it. Looking for such a t in the upper
// levels' filters for every value a compaction writes would cost more than
// the rewrite; the tombstone index says "no tombstone anywhere" for all
// but the deleted keys (and its ~0.4% false positives), so only those pay
// a lookup, and a lookup that finds nothing keeps v. When the tables above
// hold few entries, a set of their keys answers instead of the index
// (shadow_drop_local.go).
//
// A newer Set above shadows a value as a tombstone does, and the index
// knows nothing of it: the values whose key it rules out but that lie
// inside an above table's range are looked up too (their share is small,
// since tables above a compaction's output rarely span its inputs), as
// long as enough of those lookups find a newer entry to pay for them
// (overwriteWorthLookup). In kvbench's deletechurn at -quick the range
// check leaves 6% of the values written, and these lookups nearly double
// the values dropped (docs/design.md, "Early drop of shadowed values").

// shadowCheck is one compaction's early-drop decision (compaction.Iter's
// Shadowed) and its tally. It runs on the compaction's goroutine only.
type shadowCheck struct {
	d *DB
	// above are the tables of the compaction's version v (referenced by
	// the compaction until it is done, K14a) that may hold an entry
	// shadowing an input's value and that the index can lead to: above
	// the output level, not inputs, overlapping the inputs' key range,
	// and holding point tombstones (or not known not to). In K4's search
	// order: L0 newest first, then level by level.
	above []*manifest.TableMetadata
	// local, when not nil, is the sorted set of the hashes of above's
	// point keys that the check asks instead of the index, because above
	// holds few entries against the inputs (shadow_drop_local.go).
	local []uint64
	// shadowedBy sums, per table holding a confirmed shadowing tombstone,
	// the bytes of the values that tombstone made the compaction drop: they
	// no longer count in that table's ShadowedBytes once the compaction
	// installs. A drop under a newer Set is not summed: the estimate counts
	// only what the table's tombstones shadow (delete_aware.go), so
	// subtracting it would understate them and the picker would leave
	// those tombstones, and the values beneath them, to be rewritten longer.
	shadowedBy map[*manifest.TableMetadata]uint64
	// probes counts index lookups, positives those answering "may have",
	// dropped and droppedBytes the values dropped.
	probes, positives, dropped, droppedBytes uint64
	// overwriteLookups counts the lookups of values the index ruled out,
	// overwriteDrops those that found a newer entry (overwriteWorthLookup).
	overwriteLookups, overwriteDrops uint64
}

// A compaction looks up the values the index rules out while at least one
// in shadowOverwriteYield of those lookups drops a value, judged once
// shadowOverwriteTrial of them have run; below that it stops for the rest
// of the compaction. Such a lookup costs a filter probe per above table
// holding the key in its range (and a data block when the filter says
// yes); a drop saves writing the value in this compaction and in the
// later ones until its shadowing entry reaches it. In the churn benchmark
// (docs/design.md, "Overwrites above") these lookups raise the values
// dropped per round from 6-9k to 12-15k and cut the compactions' bytes by
// about 8%, for the check's CPU growing from 0.5% to 2.0% of the samples;
// a gate of one drop in 8 dropped 8-12k for 1.2%. The CPU ratio on/off
// stays inside the A/A's spread with either, so the gate is set for the
// bytes written and only stops lookups that almost never drop.
// Variables so tests can set them.
var (
	shadowOverwriteTrial uint64 = 256
	shadowOverwriteYield uint64 = 32
)

// overwriteWorthLookup reports whether c should look up a value the index
// ruled out.
func (c *shadowCheck) overwriteWorthLookup() bool {
	return c.overwriteLookups < shadowOverwriteTrial || c.overwriteDrops*shadowOverwriteYield >= c.overwriteLookups
}

// newShadowCheck returns the early-drop check for a compaction of inputs
// from v into outputLevel, or nil when it could drop nothing or nothing
// can narrow the lookups: the index is disabled, or no table of v outside
// the inputs above outputLevel overlaps them with point tombstones (a
// table without any is found only through the index's false positives),
// or the check would ask the index (the above tables are not few enough
// for a set of their keys, aboveKeyHashes) and the index holds no
// tombstone or is saturated or growing (it then answers "may have" for
// every key, and a lookup per value written is what it exists to avoid).
// REQUIRES: d.compactMu held (K14b); v referenced by the caller until the
// compaction is done.
func (d *DB) newShadowCheck(v *manifest.Version, outputLevel int, inputs []levelTable) *shadowCheck {
	if v == nil || !d.tombstones.on || d.noShadowDrop || len(inputs) == 0 {
		return nil
	}
	in := make(map[*manifest.TableMetadata]bool, len(inputs))
	lo, hi := inputs[0].meta.Smallest.UserKey, inputs[0].meta.Largest.UserKey
	for _, t := range inputs {
		in[t.meta] = true
		if base.CompareUserKeys(t.meta.Smallest.UserKey, lo) < 0 {
			lo = t.meta.Smallest.UserKey
		}
		if base.CompareUserKeys(t.meta.Largest.UserKey, hi) > 0 {
			hi = t.meta.Largest.UserKey
		}
	}
	var above []*manifest.TableMetadata
	for l := 0; l < outputLevel; l++ {
		for _, t := range v.Levels[l] {
			if !in[t] && t.Overlaps(lo, hi) && (t.Props == nil || t.Props.NumDeletions > 0) {
				above = append(above, t)
			}
		}
	}
	if len(above) == 0 {
		return nil
	}
	if local, ok := d.aboveKeyHashes(above, inputs, lo, hi); ok {
		if len(local) == 0 {
			return nil // no key of above in the inputs' range
		}
		return &shadowCheck{d: d, above: above, local: local}
	}
	if !d.tombstones.readyToNarrow() {
		return nil
	}
	return &shadowCheck{d: d, above: above}
}

// testShadowAudit, when set (tests only), wraps every compaction's
// Shadowed hook (inner, nil when the compaction has no early-drop check),
// so a test can hold each decision against an oracle that searches every
// table above the output (shadow_drop_coverage_test.go). Atomic: a test
// installs it while compactions of its load may be running.
var testShadowAudit atomic.Pointer[shadowAuditHook]

type shadowAuditHook func(d *DB, v *manifest.Version, outputLevel int, inputs []levelTable,
	inner func(k base.InternalKey, value []byte, top base.SeqNum) bool) func(k base.InternalKey, value []byte, top base.SeqNum) bool

// testIndexFalsePositive, when set (tests only), makes the index answer
// "may have" for every key the check asks about, as a false positive
// would, so a test can show that an unconfirmed positive keeps the value.
var testIndexFalsePositive bool

// shadowed is compaction.Iter's Shadowed: whether a table of c.above
// holds an entry of k.UserKey with a sequence number in (k.SeqNum(), top].
// Keys outside every such table's range cost two key comparisons per
// table; the rest one hash and one index lookup; only the index's
// positives a lookup in the tables. REQUIRES: c not nil.
func (c *shadowCheck) shadowed(k base.InternalKey, value []byte, top base.SeqNum) bool {
	if !c.mayBeAbove(k.UserKey) {
		return false
	}
	h := filters.Hash(k.UserKey)
	c.probes++
	overwrite := false
	if may, answered := c.mayShadow(h); !may && !testIndexFalsePositive {
		// No tombstone of k anywhere, but a newer Set above may shadow v:
		// the local set would have said so (it holds every kind), an index
		// that cannot answer narrows nothing.
		if c.local != nil || !answered || !c.overwriteWorthLookup() {
			return false
		}
		overwrite = true
		c.overwriteLookups++
	} else {
		c.positives++
	}
	t, kind, ok := c.newerEntryAbove(k, h, top)
	if !ok {
		return false
	}
	if overwrite {
		c.overwriteDrops++
	}
	n := uint64(len(k.UserKey) + base.TrailerLen + len(value))
	if kind == base.KindDelete {
		if c.shadowedBy == nil {
			c.shadowedBy = make(map[*manifest.TableMetadata]uint64)
		}
		c.shadowedBy[t] += n
	}
	c.dropped++
	c.droppedBytes += n
	return true
}

// mayShadow is the check's cheap answer for the key hashing to h: false
// when no table of c.above can hold an entry of it (local set) or no table
// at all holds a tombstone for it (the index). answered is false when the
// index could not tell (saturated or growing), and then may is false too.
func (c *shadowCheck) mayShadow(h uint64) (may, answered bool) {
	if c.local != nil {
		return c.inLocalSet(h), true
	}
	return c.d.tombstones.mayHaveTombstoneHash(h)
}

// mayBeAbove reports whether some table of c.above has userKey in range.
func (c *shadowCheck) mayBeAbove(userKey []byte) bool {
	for _, t := range c.above {
		if t.ContainsUserKey(userKey) {
			return true
		}
	}
	return false
}

// newerEntryAbove searches c.above, newest first (K4), for the newest
// entry of k's user key at or below top, and returns its table and kind
// if that entry is newer than k. A read error keeps the value (the read
// path reports a damaged table).
func (c *shadowCheck) newerEntryAbove(k base.InternalKey, h uint64, top base.SeqNum) (*manifest.TableMetadata, base.Kind, bool) {
	for _, t := range c.above {
		if !t.ContainsUserKey(k.UserKey) {
			continue
		}
		found, kind, newer := c.probe(t, k, h, top)
		if found {
			return t, kind, newer
		}
	}
	return nil, 0, false
}

// probe looks k's user key up in t at top: whether t holds a version at
// or below top, its kind, and whether that version is newer than k. An
// error counts as found and not newer, which keeps the value.
func (c *shadowCheck) probe(t *manifest.TableMetadata, k base.InternalKey, h uint64, top base.SeqNum) (found bool, kind base.Kind, newer bool) {
	e, err := c.d.tables.acquire(t)
	if err != nil {
		return true, 0, false
	}
	defer e.release()
	_, kind, seq, ok, err := e.reader().GetVersionHashed(nil, k.UserKey, h, top, nil)
	if err != nil {
		return true, 0, false
	}
	return ok, kind, ok && seq > k.SeqNum()
}

// installed applies the check's effects once the compaction's edit is
// installed: the shadowing tables' estimates lose the bytes they no longer
// shadow (else the purge picker keeps pushing their tombstones down for
// data already gone), and the DB counts the drops.
func (c *shadowCheck) installed() {
	if c == nil {
		return
	}
	for t, n := range c.shadowedBy {
		t.SubtractShadowedBytes(n)
	}
	sc := &c.d.counters.shadowDrop
	sc.probes.Add(c.probes)
	sc.positives.Add(c.positives)
	sc.overwriteLookups.Add(c.overwriteLookups)
	sc.values.Add(c.dropped)
	sc.bytes.Add(c.droppedBytes)
}

// shadowDropCounters count what early drop did across compactions.
type shadowDropCounters struct {
	probes, positives, overwriteLookups, values, bytes atomic.Uint64
}

// readyToNarrow reports whether the index can answer lookups that tell
// deleted keys from the rest: it is on, holds at least one tombstone, and
// is neither saturated nor growing. It waits for the queued edits, so every
// edit installed before the call is counted (K7).
func (ti *tombstoneIndex) readyToNarrow() bool {
	ti.lockApplied()
	defer ti.mu.Unlock()
	return ti.f != nil && !ti.saturated && !ti.rebuilding && ti.f.Len()+ti.overflowTotal > 0
}

// mayHaveTombstoneHash is a compaction's lookup of the key hashing to h
// (filters.Hash): false is definite for every tombstone of the tables the
// caller's version shares with the live tree. Unlike mayHaveTombstone it
// does not wait for queued edits (K14: the caller's readyToNarrow did, and
// the edits queued since only add tombstones of newer flushes), so a
// compaction never waits on a flush's index update per value. An index that
// started growing or saturated since would answer "may have" for every
// key; it answers false and not answered instead, which only keeps the
// value: early drop stops for the rest of the compaction rather than look
// up every value.
func (ti *tombstoneIndex) mayHaveTombstoneHash(h uint64) (may, answered bool) {
	ti.mu.Lock()
	defer ti.mu.Unlock()
	if ti.f == nil || ti.saturated || ti.rebuilding {
		return false, false
	}
	return ti.f.MayContainHash(h), true
}
