package kv

import (
	"fmt"
	"sync/atomic"
	"time"

	"github.com/sievekv/sievekv/compaction"
	"github.com/sievekv/sievekv/internal/base"
	"github.com/sievekv/sievekv/internal/manifest"
	"github.com/sievekv/sievekv/sstable"
)

// Delete-aware compaction (docs/design.md, "Compaction"). Every table with
// tombstones carries two in-memory figures (manifest/deletes.go): the bytes
// its tombstones shadow in the levels below, and when its oldest tombstone
// was written. The picker weighs tables by the first (compensated size,
// purge compactions: compaction's P2, P4) and bounds the second
// (TombstoneMaxAge: P5). A table written by this process gets both when it
// is written. The time goes into the MANIFEST with the table (tag 7), so a
// restart keeps a tombstone's clock running; a table found without one
// (written before the MANIFEST kept times, or by the WAL's replay) is
// dated by Open (dateTombstones). The estimate is not stored: a table a
// restart finds gets it from the tombstone index's rebuild, which Open
// starts in the background and which reads their tombstones anyway
// (tombstoneHashes; estimateMissing waits for it), or, with the index
// disabled, lazily from the background ticker (estimateMissing).

// shadowedBytes estimates the bytes of older entries that tombstones for
// keys shadow in v's levels fromLevel and deeper: for each key and each
// table whose range holds it and whose filter may hold it (the proof the
// flush's elision uses, probeBelow), the table's average entry size.
// Filter false positives make it an overestimate by about the filters' FP
// rate; tables without a filter count as holding the key.
func (d *DB) shadowedBytes(v *manifest.Version, fromLevel int, keys [][]byte) uint64 {
	var n uint64
	for _, k := range keys {
		n += d.shadowedByKey(v, fromLevel, k)
	}
	return n
}

// shadowedByKey is shadowedBytes for the tombstone of one key.
func (d *DB) shadowedByKey(v *manifest.Version, fromLevel int, k []byte) uint64 {
	var n uint64
	eachTableSpanning(v, fromLevel, k, func(t *manifest.TableMetadata) bool {
		n += d.shadowedIn(t, k)
		return true
	})
	return n
}

// shadowedIn is t's average entry size if t may hold key k, else 0.
func (d *DB) shadowedIn(t *manifest.TableMetadata, k []byte) uint64 {
	if !t.ContainsUserKey(k) || t.Entries() == 0 || !d.tableMayHold(t, k) {
		return 0
	}
	return avgEntrySize(t)
}

// avgEntrySize is the bytes on disk per entry of t (0 for a table of no
// entries, one of range tombstones only).
func avgEntrySize(t *manifest.TableMetadata) uint64 {
	if t.Entries() == 0 {
		return 0
	}
	return t.Size / t.Entries()
}

// noteTombstones sets the delete-aware figures of new tables that will live
// at level, written with the tombstones c collected (sorted, as the tables
// are) and the oldest tombstone time tombstoneTime: each table's keys are
// those in its range, and v is the version whose tables lie below them.
// A tombstone's estimate is c's where the elision check made it, else
// probed here.
func (d *DB) noteTombstones(v *manifest.Version, level int, tables []*manifest.TableMetadata, c *tombstoneCollector, tombstoneTime int64) {
	from := level + 1
	if level == 0 {
		from = 0 // every table of v is older than a flushed memtable
	}
	i := 0
	for _, t := range tables {
		j := i
		for j < c.len() && base.CompareUserKeys(c.key(j), t.Largest.UserKey) <= 0 {
			j++
		}
		if hasTombstones(t) {
			var shadowed uint64
			for x := i; x < j; x++ {
				if s := c.shadowed[x]; s != unknownShadowed {
					shadowed += s
				} else {
					shadowed += d.shadowedByKey(v, from, c.key(x))
				}
			}
			t.SetShadowedBytes(shadowed + d.tableRangeShadowedBytes(v, from, t))
			t.SetTombstoneTime(tombstoneTime)
			d.dateTombstones(t) // inputs found by Open may not be dated yet
		} else {
			t.SetShadowedBytes(0)
		}
		i = j
	}
}

// tombstoneClock is the time tombstone ages are kept in (TombstoneMaxAge,
// compaction's P5): Unix nanoseconds as of Open plus the monotonic time
// elapsed since. A step of the wall clock (an NTP correction, a resumed
// VM) then neither ages every tombstone at once, which would start a
// compaction for each, nor stops their ages for the length of a backward
// step while the DB is open. The MANIFEST keeps each table's time (its
// tag 7), so a restart does not restart the ages; across a restart the
// wall clock is all two processes share, and dateTombstones takes a time
// ahead of it as the Open's.
func (d *DB) tombstoneClock() int64 {
	return d.openTime.UnixNano() + int64(time.Since(d.openTime))
}

// dateTombstones gives table t, if it holds tombstones, a tombstone time
// no later than now: the MANIFEST's, the one a flush or compaction set,
// or, for a table that has none (written before the MANIFEST kept times,
// or by Open's replay of the WAL, or a compaction output of such tables),
// now. A time ahead of now (the wall clock stepped back since it was
// written, or the files came from another machine) also becomes now, so
// TombstoneMaxAge never waits out the difference. Before the table's
// version is published, or under d.mu for one Open found.
func (d *DB) dateTombstones(t *manifest.TableMetadata) {
	if !hasTombstones(t) {
		return
	}
	if now := d.tombstoneClock(); t.TombstoneTime() == 0 || t.TombstoneTime() > now {
		t.SetTombstoneTime(now)
	}
}

// oldestTombstoneTime is the oldest tombstone time among tables (0 if none
// holds a tombstone).
func oldestTombstoneTime(tables []levelTable) int64 {
	var oldest int64
	for _, in := range tables {
		if tt := in.meta.TombstoneTime(); tt != 0 && (oldest == 0 || tt < oldest) {
			oldest = tt
		}
	}
	return oldest
}

// tickerState is the background ticker's, guarded by DB.mu.
type tickerState struct {
	stop chan struct{} // closed by stopTicker; nil when no ticker runs
	// idleMemID and idleMemSize are the mutable memtable as the last tick
	// saw it: unchanged at the next tick means no write came between.
	idleMemID   uint64
	idleMemSize int64
	// quiet: the last tick found the mutable memtable as the tick before
	// left it and no immutable one; while it stays so, the DB is idle and
	// its compactions may be idle purges (idleLocked).
	quiet bool
}

// idleLocked reports whether the DB took no write for at least a tick:
// the ticker runs, and the mutable memtable is the one the last two ticks
// saw, at the size they saw, with nothing waiting to flush. A write ends
// it at once, so an idle purge never starts after one (a running one
// finishes).
// REQUIRES: d.mu held.
func (d *DB) idleLocked() bool {
	t := &d.ticker
	return t.stop != nil && t.quiet && len(d.imm) == 0 && d.mem != nil &&
		d.mem.id == t.idleMemID && d.mem.ApproximateSize() == t.idleMemSize
}

// pickLocked is the picker's choice on d.current: with idle purges
// (compaction's P6) while the DB is idle. A delete burst can end with
// its last memtable flushed while the L0 compaction taking the burst's
// other tables runs; the lone table left makes no level due and its purge
// rewrites every base table its keys meet, too much to pass PurgeRatio,
// so its tombstones and the values they hide stayed until TombstoneMaxAge.
// REQUIRES: d.mu held.
func (d *DB) pickLocked() *compaction.Compaction {
	if d.idleLocked() {
		return d.picker.PickIdle(d.current)
	}
	return d.picker.Pick(d.current)
}

// idlePurgePendingLocked reports whether an idle purge is due once the DB
// stays idle: what the ticker will start within two ticks of the last
// write, unless another comes.
// REQUIRES: d.mu held.
func (d *DB) idlePurgePendingLocked() bool {
	if d.ticker.stop == nil || d.closed || d.bgErr != nil || d.current == nil {
		return false
	}
	c := d.picker.PickIdle(d.current)
	return c != nil && c.Reason == compaction.ReasonIdle
}

// estimatesPerTick bounds the tables estimateMissing reads per tick, so a
// restart with many tombstone tables spreads the reads out.
const estimatesPerTick = 4

// estimateMissing gives up to estimatesPerTick tables that have tombstones
// but no estimate (tables found by Open) their figures, reading their
// tombstone keys. It reports whether it changed any.
func (d *DB) estimateMissing(v *manifest.Version) bool {
	if d.tombstones.isRebuilding() {
		// The rebuild reading the tables (Open's or a growth's) gives
		// the tables Open found their figures.
		return false
	}
	done := 0
	for l, ts := range v.Levels {
		for _, t := range ts {
			if _, known := t.ShadowedBytes(); known {
				continue
			}
			if !hasTombstones(t) {
				t.SetShadowedBytes(0)
				continue
			}
			if t.NumDeletions() == 0 {
				// Range tombstones only: resident, so no read to bound.
				d.estimateFound(v, l, t, nil)
				continue
			}
			if done == estimatesPerTick {
				return true
			}
			keys, err := d.tableTombstones(t)
			if err != nil {
				continue // the read path reports a damaged table
			}
			d.estimateFound(v, l, t, keys)
			d.counters.compaction.estimateReads.Add(1)
			done++
		}
	}
	return done > 0
}

// estimateFound sets the figures of table t, found by Open at level l of
// v, from its point tombstone keys and its range tombstones. (Its
// tombstone time Open set already: dateTombstones.)
func (d *DB) estimateFound(v *manifest.Version, l int, t *manifest.TableMetadata, keys [][]byte) {
	from := l + 1
	if l == 0 {
		from = 1 // L0's own tables may be newer; count only deeper levels
	}
	t.SetShadowedBytes(d.shadowedBytes(v, from, keys) + d.tableRangeShadowedBytes(v, from, t))
}

// tableTombstones reads the user keys of t's tombstones.
func (d *DB) tableTombstones(t *manifest.TableMetadata) ([][]byte, error) {
	var keys [][]byte
	err := d.eachTombstone(t, func(k []byte) { keys = append(keys, append([]byte(nil), k...)) })
	return keys, err
}

// closeCheckInterval is how many entries eachTombstone reads between
// checks that the DB is closing.
const closeCheckInterval = 4096

// eachTombstone calls fn with the user key of each point tombstone of t,
// in order. The key is valid only during the call.
func (d *DB) eachTombstone(t *manifest.TableMetadata, fn func(userKey []byte)) error {
	err := d.tables.withReader(t, func(r *sstable.Reader) error {
		it := r.NewIter(nil, nil)
		it.SkipCacheFill() // one pass, for an estimate: keep the readers' blocks
		n := 0
		for ok := it.First(); ok; ok = it.Next() {
			if n++; n%closeCheckInterval == 0 && d.isClosed() {
				// A rebuild reading a large tree must not hold Close.
				it.Close()
				return ErrClosed
			}
			if it.Key().Kind() == base.KindDelete {
				fn(it.Key().UserKey)
			}
		}
		return it.Close()
	})
	if err != nil {
		return fmt.Errorf("kv: reading the tombstones of table %06d: %w", t.FileNum, err)
	}
	return nil
}

// memTableHasTombstone reports whether m holds a point or a range
// tombstone.
func memTableHasTombstone(m *memTable) bool {
	if m.rangeDels.n.Load() > 0 {
		return true
	}
	it := m.NewIter(nil, nil)
	defer it.Close()
	for ok := it.First(); ok; ok = it.Next() {
		if it.Key().Kind() == base.KindDelete {
			return true
		}
	}
	return false
}

// tickInterval is how often the background ticker checks for idle
// tombstones: often enough that an idle DB starts reclaiming space within a
// couple of seconds, and several times per TombstoneMaxAge.
func tickInterval(maxAge time.Duration) time.Duration {
	if testTickInterval > 0 {
		return testTickInterval
	}
	const most = time.Second
	if maxAge > 0 && maxAge/4 < most {
		return max(maxAge/4, time.Millisecond)
	}
	return most
}

// testTickInterval, when set (tests only), replaces tickInterval's choice so
// tests of idle reclaim run in milliseconds.
var testTickInterval time.Duration

// startTicker starts the goroutine that lets an idle DB reclaim the space
// of its deletes without a manual Compact (no write or flush would ever
// schedule a compaction otherwise). Close stops it (stopTicker).
// REQUIRES: d.mu held.
func (d *DB) startTickerLocked() {
	if d.opts.ReadOnly || d.opts.DisableAutomaticCompactions || d.ticker.stop != nil {
		return
	}
	d.ticker.stop = make(chan struct{})
	d.bg.Add(1)
	go d.tickLoop(d.ticker.stop, tickInterval(d.opts.TombstoneMaxAge))
}

// stopTicker ends the ticker goroutine; Close calls it before waiting for
// background work.
func (d *DB) stopTicker() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.ticker.stop != nil {
		close(d.ticker.stop)
		d.ticker.stop = nil
	}
}

func (d *DB) tickLoop(stop <-chan struct{}, every time.Duration) {
	defer d.bg.Done()
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			d.tick()
		}
	}
}

// tick is one check of the ticker:
//   - tables a restart found get their delete-aware figures (a few a tick);
//   - a mutable memtable that holds a tombstone and took no write since the
//     last tick is flushed, so its tombstones reach tables where the picker
//     sees them;
//   - a compaction is scheduled if one is due (purge or tombstone age
//     included, which nothing else would notice on an idle DB), and, once
//     a whole tick passed without a write, an idle purge (pickLocked).
func (d *DB) tick() {
	d.mu.Lock()
	if d.closed || d.bgErr != nil {
		d.mu.Unlock()
		return
	}
	v := d.current
	v.Ref()
	d.mu.Unlock()
	d.estimateMissing(v)
	v.Unref()

	d.mu.Lock()
	mem := d.mem
	if mem != nil {
		mem.ref() // read below without d.mu; a flush may drop it (K12)
		defer mem.unref()
	}
	unchanged := mem != nil && mem.id == d.ticker.idleMemID && mem.ApproximateSize() == d.ticker.idleMemSize
	idle := unchanged && !mem.Empty()
	d.ticker.quiet = unchanged && len(d.imm) == 0
	if mem != nil {
		d.ticker.idleMemID, d.ticker.idleMemSize = mem.id, mem.ApproximateSize()
	}
	d.mu.Unlock()
	if idle && memTableHasTombstone(mem) {
		err := d.asLeader(func() error {
			if d.mem != mem || d.writableLocked() != nil {
				return nil // written meanwhile or unwritable: not idle
			}
			if err := d.rotateMemTableLocked(); err != nil {
				return err
			}
			d.counters.compaction.idleFlushes.Add(1)
			d.maybeScheduleFlushLocked()
			return nil
		})
		if err != nil && !d.isClosed() {
			d.opts.Logger("kv: idle flush: %v", err)
		}
	}
	d.mu.Lock()
	d.maybeScheduleCompactionLocked()
	d.mu.Unlock()
}

// compactionCounters count what the delete-aware and leveled policies did.
type compactionCounters struct {
	// byReason counts picked compactions by compaction.Reason.
	byReason [compaction.NumReasons]atomic.Uint64
	// idleFlushes counts memtables the ticker flushed for their tombstones.
	idleFlushes atomic.Uint64
	// estimateReads counts tables estimateMissing read for their
	// tombstones (0 when the tombstone index's rebuild did it).
	estimateReads atomic.Uint64
	// levelBytesWritten counts table bytes written into each level, by
	// flushes (L0) and compactions.
	levelBytesWritten [NumLevels]atomic.Uint64
}
