package kv

import (
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/sievekv/sievekv/compaction"
	"github.com/sievekv/sievekv/internal/humanize"
	"github.com/sievekv/sievekv/internal/manifest"
	"github.com/sievekv/sievekv/sstable"
)

// NumLevels is the number of LSM levels, L0 through L6: the engine's one
// definition (manifest.NumLevels), exported for Metrics.Levels.
const NumLevels = manifest.NumLevels

// Metrics is a point-in-time snapshot of the DB's counters, returned by
// DB.Metrics. Counters are cumulative since Open.
type Metrics struct {
	// Gets counts point lookups (DB.Get and Snapshot.Get).
	Gets uint64
	// Filter counts table filter consultations on the Get path.
	Filter FilterMetrics
	// DiskReads counts block reads that went to a table file (cache misses).
	DiskReads DiskReadMetrics
	// BlockCache counts lookups in the shared block cache.
	BlockCache BlockCacheMetrics
	// Levels describes the tables at each level, L0 first.
	Levels [NumLevels]LevelMetrics
	// WAL describes the write-ahead log.
	WAL WALMetrics
	// MemTable describes the mutable and immutable memtables.
	MemTable MemTableMetrics
	// Flushes counts memtables written out as L0 tables.
	Flushes uint64
	// Compactions counts completed compactions (manual ones included).
	Compactions uint64
	// Compaction details what compactions did.
	Compaction CompactionMetrics
	// TombstoneIndex describes the cuckoo-filter index of deleted keys.
	TombstoneIndex TombstoneIndexMetrics
	// WriteStalls counts times a writer waited for a flush or for
	// compaction to bring L0 down; WriteSlowdowns counts 1 ms delays.
	WriteStalls, WriteSlowdowns uint64
	// BackgroundErrors counts failures of background work (flush,
	// compaction) and of the WAL that left the DB read-only. It is 0 or 1
	// for one DB instance, since the first failure is sticky.
	BackgroundErrors uint64
	// BackgroundError is the sticky failure's message ("" while healthy);
	// every write returns that error, which matches ErrReadOnly.
	BackgroundError string
	// UserBytes counts the key and value bytes applied by writes;
	// TableBytesWritten the bytes of every table written by flushes and
	// compactions. WriteAmp is their ratio.
	UserBytes, TableBytesWritten uint64
	WriteAmp                     float64
	// Closed is set once Close has begun; the figures are then those of
	// the DB as Close left it.
	Closed bool
}

// CompactionMetrics detail what compactions did.
type CompactionMetrics struct {
	Count        uint64
	TrivialMoves uint64 // tables moved down a level by a manifest edit alone
	BytesIn      uint64 // bytes of input tables merged
	// TombstonesElided counts tombstones dropped because no older version
	// of their key can exist: the output was the bottom for the key, or
	// every older table's filter ruled the key out.
	TombstonesElided uint64
	// ShadowedDropped and ShadowedDroppedBytes count the values (and their
	// key and value bytes) compactions dropped early because a newer entry
	// of their key outside the compaction already shadowed them;
	// ShadowChecks counts the lookups that decided which values to check
	// (in the tombstone index, or in the set of the above tables' keys
	// when those are few), ShadowPositives those answering "may have"
	// (each cost a lookup in the upper levels), ShadowOverwriteLookups
	// the lookups in the upper levels of values the index ruled out, for
	// a newer Set. kv/shadow_drop.go.
	ShadowedDropped, ShadowedDroppedBytes uint64
	ShadowChecks, ShadowPositives         uint64
	ShadowOverwriteLookups                uint64
	InProgress                            bool
	// ByScore, Purges, AgeCompactions and IdlePurges count background
	// compactions by why the picker chose them: a level over its target,
	// tombstones that shadow at least a quarter of what the compaction
	// rewrites, a tombstone older than Options.TombstoneMaxAge, or, on a
	// DB that took no write for a background check's interval, tombstones
	// that shadow at least Options.IdlePurgeMinShare of the tree (1% by
	// default; trivial moves included).
	ByScore, Purges, AgeCompactions, IdlePurges uint64
	// Manual counts the steps of DB.Compact calls (compaction's P7): at
	// most one per level above the bottom that held tables in the range
	// (one step may take several levels into the bottom), and one when
	// bottom tables in it needed a rewrite. A step is never a trivial
	// move.
	Manual uint64
	// IdlePurgePending reports an idle purge due: the background check
	// starts it once the DB stays idle for about two of its intervals
	// (a second each by default). Work the DB has yet to do on its own,
	// like InProgress.
	IdlePurgePending bool
	// IdleFlushes counts memtables flushed because they held tombstones
	// and took no write between two background checks.
	IdleFlushes uint64
}

// TombstoneIndexMetrics describe the tombstone index.
type TombstoneIndexMetrics struct {
	Entries   uint64 // tombstones indexed
	Checks    uint64 // lookups
	Negatives uint64 // lookups that proved a key has no tombstone in any table
	Bytes     uint64 // encoded size of the filter
	Rebuilds  uint64 // rebuilds (Open, and growth when full)
	// Building is set while a rebuild (the one Open starts, or a growth)
	// reads the tables; until it ends the index answers "may have" for
	// every key and Entries counts only the changes made meanwhile.
	Building bool
	// RebuildTime is the time the rebuilds took, reading the tables'
	// tombstones included.
	RebuildTime time.Duration
	// UpdateTime is the time flushes and compactions spent adding and
	// removing tombstones (rebuilds not included): the index's own cost
	// on the delete path.
	UpdateTime time.Duration
	// BytesPerTombstone is Bytes over Entries (0 with no entry): the
	// index's memory per tombstone it counts.
	BytesPerTombstone float64
	// PeakEntries is the most tombstones the index has counted since
	// Open and PeakBytesPerTombstone its memory per tombstone then: once
	// compactions drop tombstones, Entries falls but the filter keeps its
	// size until they have dropped them all (it then shrinks to a few
	// KiB), so this is the figure its memory is judged by.
	PeakEntries           uint64
	PeakBytesPerTombstone float64
}

// FilterMetrics count what the per-table filters did for Gets.
type FilterMetrics struct {
	// Checks counts filter consultations (one per table a Get considered).
	Checks uint64
	// Negatives counts checks that answered "definitely absent": each is a
	// table read avoided.
	Negatives uint64
	// FalsePositives counts checks that answered "maybe" for a key the
	// table turned out not to hold: a wasted data-block read.
	FalsePositives uint64
	// TruePositives counts checks that answered "maybe" for a key the table
	// does hold.
	TruePositives uint64
	// Bytes is the memory held by the filters of all live tables.
	Bytes uint64
	// RangeChecks counts positionings of bounded iterators (First, Last,
	// SeekGE, SeekLT reaching a table) that consulted a table's range
	// filter; RangeNegatives those it ruled out, each a table skipped
	// without a block read.
	RangeChecks, RangeNegatives uint64
	// RangeBytes is the size of the range filters of all live tables.
	RangeBytes uint64
}

// DiskReadMetrics count reads of table blocks from files.
type DiskReadMetrics struct {
	DataBlocks  uint64
	IndexBlocks uint64
	Bytes       uint64
}

// BlockCacheMetrics count block cache lookups.
type BlockCacheMetrics struct {
	Hits     uint64
	Misses   uint64
	Size     int64 // bytes held now
	Capacity int64 // bytes it may hold now: BlockCacheSize plus Lent
	// Lent is the part of Capacity the memtables lend while they leave
	// their allowance unused (Options.BlockCacheSize).
	Lent int64
}

// LevelMetrics describe one level.
type LevelMetrics struct {
	Tables  int
	Bytes   uint64
	Entries uint64
	// Tombstones counts the level's tombstones (point deletes).
	Tombstones uint64
	// RangeTombstones counts the level's range tombstones (DeleteRange).
	RangeTombstones uint64
	// ShadowedBytes estimates the bytes of older entries in deeper levels
	// that the level's tombstones, point and range, hide: what compacting
	// them down would free (tables a restart found count once the
	// background check has estimated them).
	ShadowedBytes uint64
	// OldestTombstoneAge is how long ago the oldest tombstone, point or
	// range, of the level's tables was written (0 without one): what
	// Options.TombstoneMaxAge bounds above the bottom level. It counts
	// across restarts (the MANIFEST keeps each table's time).
	OldestTombstoneAge time.Duration
	// BytesWritten counts table bytes written into the level since Open:
	// by flushes for L0, by compactions below.
	BytesWritten uint64
	// FilterBytes is the memory of the level's table filters and
	// FilterKeys the distinct keys they hold.
	FilterBytes uint64
	FilterKeys  uint64
	// FilterFP is the expected number of false-positive data block reads
	// an absent-key Get makes at this level: the sum of the tables' FP
	// rates in L0 (a Get probes each), their key-weighted mean in a
	// sorted level (it probes one). A table without a filter counts 1.
	FilterFP float64
}

// FilterBitsPerKey is the level's filter memory per distinct key.
func (l LevelMetrics) FilterBitsPerKey() float64 { return bitsPerKey(l.FilterBytes, l.FilterKeys) }

// WALMetrics describe the write-ahead log.
type WALMetrics struct {
	// Bytes counts bytes appended to WAL files since Open.
	Bytes uint64
	// Syncs counts fsyncs of WAL files (group commit makes this smaller
	// than the number of synced writes).
	Syncs uint64
	// Files is the number of live WAL files.
	Files int
}

// MemTableMetrics describe the memtables.
type MemTableMetrics struct {
	Size      uint64 // approximate bytes in all memtables, their key filters included
	Entries   int    // entries (versions of keys) in all memtables
	Count     int    // mutable + immutable memtables
	Immutable int    // immutable memtables awaiting flush
}

// String renders the metrics as a readable per-level table followed by the
// filter summary line.
func (m Metrics) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "level  tables       bytes     entries  tombstones    shadowed     written  filter bits/key  filter FP\n")
	var tables int
	var bytes, entries, tombs, shadowed, written uint64
	for i, l := range m.Levels {
		fmt.Fprintf(&b, "L%-5d %6d %11s %11d %11d %11s %11s  %15.2f  %9.5f\n", i, l.Tables, humanize.Bytes(l.Bytes), l.Entries,
			l.Tombstones, humanize.Bytes(l.ShadowedBytes), humanize.Bytes(l.BytesWritten), l.FilterBitsPerKey(), l.FilterFP)
		tables += l.Tables
		bytes += l.Bytes
		entries += l.Entries
		tombs += l.Tombstones
		shadowed += l.ShadowedBytes
		written += l.BytesWritten
	}
	fmt.Fprintf(&b, "total  %6d %11s %11d %11d %11s %11s\n", tables, humanize.Bytes(bytes), entries, tombs, humanize.Bytes(shadowed), humanize.Bytes(written))
	if rl := rangeTombstoneLine(m.Levels); rl != "" {
		b.WriteString(rl)
	}
	if al := tombstoneAgeLine(m.Levels); al != "" {
		b.WriteString(al)
	}
	fmt.Fprintf(&b, "memtables: %d (%d immutable), %s\n", m.MemTable.Count, m.MemTable.Immutable, humanize.Bytes(m.MemTable.Size))
	fmt.Fprintf(&b, "wal: %d files, %s written, %d syncs\n", m.WAL.Files, humanize.Bytes(m.WAL.Bytes), m.WAL.Syncs)
	fmt.Fprintf(&b, "flushes: %d, compactions: %d (%d trivial moves), tombstones elided: %d, write amp: %.2f\n",
		m.Flushes, m.Compactions, m.Compaction.TrivialMoves, m.Compaction.TombstonesElided, m.WriteAmp)
	fmt.Fprintf(&b, "shadowed values dropped early: %d (%s), %d index checks, %d positives, %d overwrite lookups\n",
		m.Compaction.ShadowedDropped, humanize.Bytes(m.Compaction.ShadowedDroppedBytes), m.Compaction.ShadowChecks, m.Compaction.ShadowPositives, m.Compaction.ShadowOverwriteLookups)
	fmt.Fprintf(&b, "compactions by reason: %d score, %d purge, %d tombstone age, %d idle purge, %d manual; idle flushes: %d\n",
		m.Compaction.ByScore, m.Compaction.Purges, m.Compaction.AgeCompactions, m.Compaction.IdlePurges, m.Compaction.Manual, m.Compaction.IdleFlushes)
	fmt.Fprintf(&b, "write stalls: %d, slowdowns: %d\n", m.WriteStalls, m.WriteSlowdowns)
	peak := ""
	if ti := m.TombstoneIndex; ti.PeakEntries > ti.Entries {
		peak = fmt.Sprintf("; peak %d entries at %.1f B per tombstone", ti.PeakEntries, ti.PeakBytesPerTombstone)
	}
	building := ""
	if m.TombstoneIndex.Building {
		building = "; building: reading the tables' tombstones"
	}
	fmt.Fprintf(&b, "tombstone index: %d entries, %s (%.1f B per tombstone%s), %d checks, %d negatives%s\n",
		m.TombstoneIndex.Entries, humanize.Bytes(m.TombstoneIndex.Bytes), m.TombstoneIndex.BytesPerTombstone, peak,
		m.TombstoneIndex.Checks, m.TombstoneIndex.Negatives, building)
	if m.BackgroundError != "" {
		fmt.Fprintf(&b, "background error (%d): %s\n", m.BackgroundErrors, m.BackgroundError)
	}
	if m.Closed {
		b.WriteString("closed: the figures are the DB's as Close left it\n")
	}
	fmt.Fprintf(&b, "gets: %d, disk reads: %d data blocks, %d index blocks, %s\n",
		m.Gets, m.DiskReads.DataBlocks, m.DiskReads.IndexBlocks, humanize.Bytes(m.DiskReads.Bytes))
	fmt.Fprintf(&b, "block cache: %d hits, %d misses (%.1f%% hit), %s of %s (%s of it lent by the idle memtables)\n",
		m.BlockCache.Hits, m.BlockCache.Misses, percent(m.BlockCache.Hits, m.BlockCache.Hits+m.BlockCache.Misses),
		humanize.Bytes(uint64(max(m.BlockCache.Size, 0))), humanize.Bytes(uint64(max(m.BlockCache.Capacity, 0))),
		humanize.Bytes(uint64(max(m.BlockCache.Lent, 0))))
	filterPerKey := 0.0
	if entries > 0 {
		filterPerKey = float64(m.Filter.Bytes) * 8 / float64(entries)
	}
	fmt.Fprintf(&b, "filters: %s (%.2f bits per entry)\n", humanize.Bytes(m.Filter.Bytes), filterPerKey)
	fmt.Fprintf(&b, "reads avoided by filters: %d of %d table checks (%.1f%%), false positives: %d\n",
		m.Filter.Negatives, m.Filter.Checks, percent(m.Filter.Negatives, m.Filter.Checks), m.Filter.FalsePositives)
	if m.Filter.RangeBytes > 0 || m.Filter.RangeChecks > 0 {
		rangePerKey := 0.0
		if entries > 0 {
			rangePerKey = float64(m.Filter.RangeBytes) * 8 / float64(entries)
		}
		fmt.Fprintf(&b, "range filters: %s (%.2f bits per entry), tables skipped by scans: %d of %d checks (%.1f%%)\n",
			humanize.Bytes(m.Filter.RangeBytes), rangePerKey, m.Filter.RangeNegatives, m.Filter.RangeChecks,
			percent(m.Filter.RangeNegatives, m.Filter.RangeChecks))
	}
	return b.String()
}

func percent(part, whole uint64) float64 {
	if whole == 0 {
		return 0
	}
	return 100 * float64(part) / float64(whole)
}

// levelFilterFP fills each level's FilterFP from its tables' filters,
// which it opens outside DB.mu (a table may not be in the table cache).
func (d *DB) levelFilterFP(m *Metrics) {
	// Not refCurrent, which refuses a closing DB: the caller's read gate
	// (or Close itself) keeps d.current and its tables valid.
	d.mu.Lock()
	v := d.current
	if v == nil {
		d.mu.Unlock()
		return
	}
	v.Ref()
	d.mu.Unlock()
	defer v.Unref()
	for l, ts := range v.Levels {
		var fp, keys float64
		for _, t := range ts {
			tfp := 1.0
			d.tables.withReader(t, func(r *sstable.Reader) error {
				if r.HasFilter() {
					tfp = r.FilterDescription().FPRate
				}
				return nil
			})
			if l == 0 {
				fp += tfp
				continue
			}
			k := float64(tableKeys(t))
			fp += tfp * k
			keys += k
		}
		if l > 0 && keys > 0 {
			fp /= keys
		}
		m.Levels[l].FilterFP = fp
	}
}

// Metrics returns a snapshot of the DB's counters and shape. It never
// fails: on a closed DB, where every other method returns ErrClosed, it
// returns the figures as of Close with Closed set, so a caller can read
// the final counters (flushes, write amplification) after Close.
func (d *DB) Metrics() Metrics {
	// Inside the read gate the tables stay open and d.current referenced
	// (Close drops both only after the gate drained).
	if !d.reads.enter() {
		return d.final.wait()
	}
	defer d.reads.exit()
	return d.collectMetrics()
}

// metricsAtClose holds the Metrics Close leaves, for Metrics calls after
// it turned reads away.
type metricsAtClose struct {
	once  sync.Once
	ready chan struct{} // closed by set
	m     Metrics
}

func (f *metricsAtClose) init() { f.once.Do(func() { f.ready = make(chan struct{}) }) }

// set records m, marked Closed. REQUIRES: called once, by Close.
func (f *metricsAtClose) set(m Metrics) {
	f.init()
	m.Closed = true
	f.m = m
	close(f.ready)
}

// wait returns what set recorded, waiting for Close to record it.
func (f *metricsAtClose) wait() Metrics {
	f.init()
	<-f.ready
	return f.m
}

// collectMetrics is Metrics from the live state. REQUIRES: inside d.reads,
// or Close before it closes the tables.
func (d *DB) collectMetrics() Metrics {
	var m Metrics
	m.Gets = d.counters.gets.Load()
	s := d.tableStats.Snapshot()
	m.Filter.Checks = uint64(s.FilterChecks)
	m.Filter.Negatives = uint64(s.FilterNegatives)
	m.Filter.FalsePositives = uint64(s.FilterFalsePositives)
	m.Filter.TruePositives = uint64(s.FilterTruePositives)
	m.Filter.RangeChecks = uint64(s.RangeFilterChecks)
	m.Filter.RangeNegatives = uint64(s.RangeFilterNegatives)
	m.DiskReads.DataBlocks = uint64(s.DataBlockReads)
	m.DiskReads.IndexBlocks = uint64(s.IndexBlockReads)
	m.DiskReads.Bytes = uint64(s.BytesRead)
	cm := d.cache.Metrics()
	m.BlockCache.Hits, m.BlockCache.Misses = uint64(cm.Hits), uint64(cm.Misses)
	m.BlockCache.Size, m.BlockCache.Capacity = cm.Size, cm.Capacity
	if cm.Capacity > 0 {
		m.BlockCache.Lent = cm.Capacity - d.opts.BlockCacheSize
	}
	m.WAL.Bytes = d.counters.walBytes.Load()
	m.WAL.Syncs = d.counters.walSyncs.Load()
	m.Flushes = d.counters.flushes.Load()
	sd := &d.counters.shadowDrop
	m.Compaction.ShadowedDropped, m.Compaction.ShadowedDroppedBytes = sd.values.Load(), sd.bytes.Load()
	m.Compaction.ShadowChecks, m.Compaction.ShadowPositives = sd.probes.Load(), sd.positives.Load()
	m.Compaction.ShadowOverwriteLookups = sd.overwriteLookups.Load()
	m.WriteStalls = d.counters.writeStalls.Load()
	m.WriteSlowdowns = d.counters.writeSlowdowns.Load()
	m.BackgroundErrors = d.counters.bgErrors.Load()
	m.UserBytes = d.counters.userBytes.Load()
	m.TableBytesWritten = d.counters.tableBytesWritten.Load()
	if m.UserBytes > 0 {
		m.WriteAmp = float64(m.TableBytesWritten+m.WAL.Bytes) / float64(m.UserBytes)
	}
	entries, tiBytes := d.tombstones.stats()
	m.TombstoneIndex = TombstoneIndexMetrics{
		Entries: uint64(entries), Bytes: tiBytes,
		Checks: d.tombstones.checks.Load(), Negatives: d.tombstones.negatives.Load(),
		Rebuilds: d.tombstones.rebuilds.Load(), RebuildTime: time.Duration(d.tombstones.rebuildNanos.Load()),
		UpdateTime: time.Duration(d.tombstones.updateNanos.Load()),
		Building:   d.tombstones.isRebuilding(),
	}
	if entries > 0 {
		m.TombstoneIndex.BytesPerTombstone = float64(tiBytes) / float64(entries)
	}
	if pe, pb := d.tombstones.peak(); pe > 0 {
		m.TombstoneIndex.PeakEntries, m.TombstoneIndex.PeakBytesPerTombstone = uint64(pe), float64(pb)/float64(pe)
	}
	d.levelFilterFP(&m)

	if testMetricsBeforeLock != nil {
		testMetricsBeforeLock()
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.compactionCountersLocked(&m)
	m.Closed = d.closed
	if d.bgErr != nil {
		m.BackgroundError = d.bgErr.Error()
	}
	if d.current != nil {
		now := d.tombstoneClock()
		for l, ts := range d.current.Levels {
			for _, t := range ts {
				m.Levels[l].Tables++
				m.Levels[l].Bytes += t.Size
				m.Levels[l].Entries += t.Entries()
				m.Levels[l].Tombstones += t.NumDeletions()
				if t.Props != nil {
					m.Levels[l].RangeTombstones += t.Props.NumRangeDeletions
				}
				n, _ := t.ShadowedBytes()
				m.Levels[l].ShadowedBytes += n
				if tt := t.TombstoneTime(); tt != 0 {
					m.Levels[l].OldestTombstoneAge = max(m.Levels[l].OldestTombstoneAge, time.Duration(now-tt))
				}
				m.Levels[l].FilterBytes += t.FilterBytes()
				m.Levels[l].FilterKeys += tableKeys(t)
				m.Filter.Bytes += t.FilterBytes()
				if t.Props != nil {
					m.Filter.RangeBytes += t.Props.RangeFilterSize
				}
			}
		}
	}
	mems := append([]*memTable{d.mem}, d.imm...)
	for _, mt := range mems {
		if mt == nil {
			continue
		}
		m.MemTable.Count++
		m.MemTable.Size += uint64(mt.ApproximateSize())
		m.MemTable.Entries += mt.Len()
		if mt.logNum != 0 {
			m.WAL.Files++
		}
	}
	m.MemTable.Immutable = len(d.imm)
	m.Compaction.InProgress = d.compacting
	shadowed := false
	for _, lm := range m.Levels[:NumLevels-1] {
		shadowed = shadowed || lm.ShadowedBytes > 0
	}
	m.Compaction.IdlePurgePending = shadowed && !d.compacting && d.idlePurgePendingLocked()
	if d.bgErr != nil {
		m.BackgroundError = d.bgErr.Error()
	}
	m.WAL.Files += d.readOnlyLogs
	return m
}

// testMetricsBeforeLock, when set (tests only), is called by
// collectMetrics between what it reads without d.mu and what it reads
// under it.
var testMetricsBeforeLock func()

// compactionCountersLocked reads the compaction counters into m. A
// compaction or trivial move counts itself under d.mu as it installs its
// version, so read under d.mu with the levels they match what the levels
// show. REQUIRES: d.mu held.
func (d *DB) compactionCountersLocked(m *Metrics) {
	m.Compactions = d.counters.compactions.Load()
	m.Compaction.Count = m.Compactions
	m.Compaction.TrivialMoves = d.counters.trivialMoves.Load()
	m.Compaction.BytesIn = d.counters.compactionBytesIn.Load()
	m.Compaction.TombstonesElided = d.counters.tombstonesElided.Load()
	cc := &d.counters.compaction
	m.Compaction.ByScore = cc.byReason[compaction.ReasonScore].Load()
	m.Compaction.Purges = cc.byReason[compaction.ReasonPurge].Load()
	m.Compaction.AgeCompactions = cc.byReason[compaction.ReasonAge].Load()
	m.Compaction.IdlePurges = cc.byReason[compaction.ReasonIdle].Load()
	m.Compaction.Manual = cc.byReason[compaction.ReasonManual].Load()
	m.Compaction.IdleFlushes = cc.idleFlushes.Load()
	for l := range m.Levels {
		m.Levels[l].BytesWritten = cc.levelBytesWritten[l].Load()
	}
}

// rangeTombstoneLine lists the levels' range tombstones, or is empty when
// no table holds one (most DBs never call DeleteRange; their stats keep
// their shape).
// tombstoneAgeLine is the stats line of each level's oldest tombstone
// age, or "" when no table holds a tombstone.
func tombstoneAgeLine(levels [NumLevels]LevelMetrics) string {
	var parts []string
	for l, lm := range levels {
		if lm.OldestTombstoneAge > 0 {
			parts = append(parts, fmt.Sprintf("L%d %v", l, lm.OldestTombstoneAge.Round(time.Second)))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return "oldest tombstone by level: " + strings.Join(parts, ", ") + " (Options.TombstoneMaxAge bounds it above the bottom)\n"
}

func rangeTombstoneLine(levels [NumLevels]LevelMetrics) string {
	var parts []string
	for l, lm := range levels {
		if lm.RangeTombstones > 0 {
			parts = append(parts, fmt.Sprintf("L%d %d", l, lm.RangeTombstones))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return "range tombstones: " + strings.Join(parts, ", ") + " (their shadowed bytes are in the column above)\n"
}
