package compaction

import (
	"bytes"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/sievekv/sievekv/internal/base"
	"github.com/sievekv/sievekv/internal/manifest"
)

// Options tune the leveled policy.
type Options struct {
	// L0Trigger is the L0 table count that makes L0 due for compaction.
	L0Trigger int
	// BaseBytes is the target size of the base level (the level L0
	// compacts into); deeper levels grow by up to LevelMultiplier each.
	BaseBytes uint64
	// LevelMultiplier is the size ratio between adjacent levels.
	LevelMultiplier int
	// TargetFileSize is where output tables are split.
	TargetFileSize uint64
	// MaxGrandparentOverlap splits an output table once it overlaps this
	// many bytes of the level below the output, so a later compaction of
	// it stays bounded (LevelDB's rule, 10 target files).
	MaxGrandparentOverlap uint64
	// PurgeRatio makes a compaction due when the bytes the inputs'
	// tombstones shadow below are at least this share of the bytes it
	// would rewrite (P4). 0 disables purge compactions.
	PurgeRatio float64
	// TombstoneMaxAge bounds how long a tombstone may stay above the
	// bottom level before a compaction moves it down (P5); the Picker's
	// Now must be set for it to apply. 0 disables the bound.
	TombstoneMaxAge time.Duration
	// IdleRatio makes a compaction due on an idle DB (PickIdle) when its
	// inputs' tombstones shadow at least this share of the tree's bytes,
	// whatever share of its rewrite that is (P6). 0 disables idle purges.
	IdleRatio float64
}

// DefaultOptions are LevelDB's and Pebble's usual leveled settings, with
// purge compactions on (a compaction is due once it frees at least a
// quarter of what it rewrites), idle purges on (an idle DB compacts away
// tombstones that shadow at least 1% of its bytes) and no age bound.
func DefaultOptions() Options {
	return Options{
		L0Trigger:             4,
		BaseBytes:             64 << 20,
		LevelMultiplier:       10,
		TargetFileSize:        2 << 20,
		MaxGrandparentOverlap: 20 << 20,
		PurgeRatio:            0.25,
		IdleRatio:             0.01,
	}
}

// Reason says why the picker chose a compaction.
type Reason int

const (
	// ReasonScore: a level was over its target (P2).
	ReasonScore Reason = iota
	// ReasonPurge: the inputs' tombstones shadow enough bytes below (P4).
	ReasonPurge
	// ReasonAge: a tombstone reached TombstoneMaxAge above the bottom (P5).
	ReasonAge
	// ReasonIdle: on an idle DB, the inputs' tombstones shadow at least
	// IdleRatio of the tree (P6).
	ReasonIdle
	// ReasonManual: a step of DB.Compact (P7).
	ReasonManual
	// NumReasons is the number of reasons, for counters indexed by them.
	NumReasons
)

// reasonNames are the reasons' names, bounded by NumReasons as the counters
// indexed by reason are.
var reasonNames = [NumReasons]string{ReasonScore: "score", ReasonPurge: "purge", ReasonAge: "age", ReasonIdle: "idle", ReasonManual: "manual"}

func (r Reason) String() string {
	if r >= 0 && r < NumReasons {
		return reasonNames[r]
	}
	return fmt.Sprintf("Reason(%d)", int(r))
}

// Compaction is one unit of work the picker chose: merge Inputs[0] (from
// Level) with Inputs[1] (the overlapping tables of OutputLevel) into new
// tables at OutputLevel.
type Compaction struct {
	Level, OutputLevel int
	Inputs             [2][]*manifest.TableMetadata
	// Between holds, by level, the tables of the levels strictly between
	// Level and OutputLevel that the merge takes too: only a manual step
	// straight to the bottom has any (P7).
	Between [manifest.NumLevels][]*manifest.TableMetadata
	// Grandparents are the tables of OutputLevel+1 overlapping the inputs;
	// outputs are split so that none overlaps too many of them.
	Grandparents []*manifest.TableMetadata
	// Reason is why the compaction was picked.
	Reason Reason
	// Score is the level's score for ReasonScore (>= 1), the shadowed
	// share of the rewrite for ReasonPurge and ReasonIdle, and the oldest
	// tombstone's age over TombstoneMaxAge for ReasonAge.
	Score float64
	// TrivialMove reports that the input tables (Inputs[0]; Inputs[1] is
	// empty) can move to OutputLevel by a manifest edit alone: nothing
	// there overlaps them, nor do they overlap one another.
	TrivialMove bool
}

// Targets computes the dynamic level targets (P1 in the package doc): the
// base level L0 compacts into and each level's byte target, sized from the
// data actually in the tree so the bottom level holds about 90% of it.
func Targets(v *manifest.Version, o Options) (baseLevel int, maxBytes [manifest.NumLevels]uint64) {
	const bottomLevel = manifest.NumLevels - 1
	var dbSize uint64
	firstNonEmpty := -1
	for l := 1; l <= bottomLevel; l++ {
		s := manifest.TotalDataSize(v.Levels[l])
		dbSize += s
		if s > 0 && firstNonEmpty < 0 {
			firstNonEmpty = l
		}
	}
	maxBytes[bottomLevel] = math.MaxUint64 // the bottom is never "too big"
	if firstNonEmpty < 0 {
		// Nothing below L0: it compacts straight to the bottom.
		return bottomLevel, maxBytes
	}
	dbSize += manifest.TotalDataSize(v.Levels[0])
	mult := float64(o.LevelMultiplier)
	// The bottom level should hold (1 - 1/mult) of the data. Its share,
	// divided by mult for each level up to the shallowest data, is what
	// that level would hold in a tree of ratio mult; the base level moves
	// up while that exceeds BaseBytes, so a new base level starts small
	// and L0 merges into little data (Pebble's rule; a base level that
	// must first reach BaseBytes x mult makes every L0 compaction rewrite
	// the whole bottom level).
	bottom := float64(dbSize) * (1 - 1/mult)
	size := bottom
	for l := bottomLevel - 1; l >= firstNonEmpty; l-- {
		size /= mult
	}
	baseLevel = firstNonEmpty
	for baseLevel > 1 && size > float64(o.BaseBytes) {
		baseLevel--
		size /= mult
	}
	// Spread the levels from the base target to the bottom evenly on a log
	// scale, so every level's fan-out is the same.
	levels := bottomLevel - baseLevel
	ratio := mult
	if levels > 0 {
		ratio = max(1, math.Pow(bottom/float64(o.BaseBytes), 1/float64(levels)))
	}
	t := float64(o.BaseBytes)
	for l := baseLevel; l < bottomLevel; l++ {
		maxBytes[l] = uint64(math.Round(t))
		t *= ratio
	}
	return baseLevel, maxBytes
}

// Picker chooses compactions from the engine's own published
// manifest.Version and its TableMetadata (manifest's V1: immutable, so read
// without a copy). It uses each table's file number, size, user-key bounds
// and delete-aware estimates (compensated size, tombstone time); L0 may be
// in any order, every deeper level is sorted and disjoint (manifest's V2).
// It keeps no state between picks, so a restart loses nothing.
type Picker struct {
	Opts Options
	// Now returns the current time in Unix nanoseconds, for the tombstone
	// age bound (P5); nil turns the bound off.
	Now func() int64
	// OldestSnapshot returns the sequence number of the oldest open
	// snapshot, ok false when none is open, for P5 at the bottom; nil
	// leaves the bottom level to the other rules.
	OldestSnapshot func() (seq base.SeqNum, ok bool)
}

// Scores returns each level's compaction score: L0 by table count against
// L0Trigger (twice it while merging L0 is expensive: l0Trigger), deeper levels by compensated size (bytes plus the bytes their
// tombstones shadow) against their target. A level with a score >= 1 is
// due.
func (p *Picker) Scores(v *manifest.Version) [manifest.NumLevels]float64 {
	var s [manifest.NumLevels]float64
	baseLevel, maxBytes := Targets(v, p.Opts)
	s[0] = float64(len(v.Levels[0])) / float64(p.l0Trigger(v, baseLevel))
	for l := 1; l < manifest.NumLevels-1; l++ {
		if maxBytes[l] > 0 {
			s[l] = float64(manifest.TotalCompensatedSize(v.Levels[l])) / float64(maxBytes[l])
		}
	}
	return s
}

// l0ExpensiveRatio is the base-level bytes per L0 byte beyond which an L0
// compaction counts as expensive and waits for twice the L0 trigger
// (P2). Merging n L0 bytes into b base bytes writes n + b, so the write
// amplification of the step is 1 + b/n; waiting for twice the L0 data
// halves b/n. 4 keeps that step at most about 5 when it can, and costs
// nothing where L0 merges into little data (early in a load, sequential
// keys). Measured on kvbench's 300k-key fill + overwrite: write amp 4.44
// with the plain trigger of 4, 3.49 with L0 waiting for 8 tables, and
// fewer write stalls (56 against 78), since each L0 compaction moves more
// data for its base rewrite (docs/design.md, "Compaction that writes
// less").
const l0ExpensiveRatio = 4

// l0Trigger is the L0 table count at which L0 is due: L0Trigger, or twice
// it while merging L0 would rewrite more than l0ExpensiveRatio base bytes
// per L0 byte. The table filters keep the deeper L0 cheap for Gets.
func (p *Picker) l0Trigger(v *manifest.Version, baseLevel int) int {
	l0 := v.Levels[0]
	if len(l0) == 0 {
		return p.Opts.L0Trigger
	}
	lo, hi := keyRange(l0)
	var overlap uint64
	for _, t := range v.Levels[baseLevel] {
		if bytes.Compare(t.Largest.UserKey, lo) >= 0 && bytes.Compare(t.Smallest.UserKey, hi) <= 0 {
			overlap += t.DataSize()
		}
	}
	if overlap > l0ExpensiveRatio*manifest.TotalDataSize(l0) {
		return 2 * p.Opts.L0Trigger
	}
	return p.Opts.L0Trigger
}

// priorities divides each due level's score by the score of the level it
// compacts into, when that one is over its target too (Pebble's adjusted
// score, P2): compacting the level below first makes room, so the level
// above merges into less data when its turn comes.
func priorities(scores [manifest.NumLevels]float64, baseLevel int) [manifest.NumLevels]float64 {
	pr := scores
	for l := 0; l < manifest.NumLevels-1; l++ {
		next := l + 1
		if l == 0 {
			next = baseLevel
		}
		if next < manifest.NumLevels-1 && scores[next] >= 1 {
			pr[l] = scores[l] / scores[next]
		}
	}
	return pr
}

// Pick returns the most urgent compaction, or nil if none is due: first a
// level over its target (P2), then the compaction that purges the most
// shadowed bytes per byte rewritten (P4), then the oldest tombstone past
// TombstoneMaxAge (P5).
func (p *Picker) Pick(v *manifest.Version) *Compaction {
	scores := p.Scores(v)
	baseLevel, _ := Targets(v, p.Opts)
	pr := priorities(scores, baseLevel)
	best := -1
	for l := 0; l < manifest.NumLevels-1; l++ {
		if l > 0 && l < baseLevel {
			continue
		}
		if scores[l] >= 1 && (best < 0 || pr[l] > pr[best]) {
			best = l
		}
	}
	if best >= 0 {
		var c *Compaction
		if best == 0 {
			c = p.pickL0(v, baseLevel)
		} else {
			c = p.pickLevel(v, best)
		}
		c.Reason, c.Score = ReasonScore, scores[best]
		return c
	}
	if c := p.pickPurge(v, baseLevel); c != nil {
		return c
	}
	return p.pickAged(v, baseLevel)
}

// pickL0 compacts every L0 table (they may all overlap one another) with
// the overlapping tables of the base level.
func (p *Picker) pickL0(v *manifest.Version, baseLevel int) *Compaction {
	c := &Compaction{Level: 0, OutputLevel: baseLevel}
	c.Inputs[0] = slices.Clone(v.Levels[0])
	lo, hi := keyRange(c.Inputs[0])
	c.Inputs[1] = overlapping(v.Levels[baseLevel], lo, hi)
	p.setGrandparents(v, c)
	// Sequential loads flush L0 tables that overlap nothing: they can
	// move down by a manifest edit instead of being rewritten.
	c.TrivialMove = len(c.Inputs[1]) == 0 && !anyOverlap(c.Inputs[0]) &&
		manifest.TotalDataSize(c.Grandparents) <= p.Opts.MaxGrandparentOverlap
	return c
}

// anyOverlap reports whether any two of ts share a user key.
func anyOverlap(ts []*manifest.TableMetadata) bool {
	sorted := slices.Clone(ts)
	slices.SortFunc(sorted, func(a, b *manifest.TableMetadata) int { return bytes.Compare(a.Smallest.UserKey, b.Smallest.UserKey) })
	for i := 1; i < len(sorted); i++ {
		if bytes.Compare(sorted[i-1].Largest.UserKey, sorted[i].Smallest.UserKey) >= 0 {
			return true
		}
	}
	return false
}

// pickLevel compacts the table of level l whose overlap with l+1 is the
// smallest per byte it frees (its compensated size): RocksDB's
// kMinOverlappingRatio. It writes the least for the data it moves down,
// and a table whose tombstones shadow much below is preferred.
func (p *Picker) pickLevel(v *manifest.Version, l int) *Compaction {
	ts, next := v.Levels[l], v.Levels[l+1]
	best, bestRatio := 0, math.Inf(1)
	j := 0 // first table of next that may overlap ts[i] (both sorted, disjoint)
	for i, t := range ts {
		for j < len(next) && bytes.Compare(next[j].Largest.UserKey, t.Smallest.UserKey) < 0 {
			j++
		}
		var overlap uint64
		for k := j; k < len(next) && bytes.Compare(next[k].Smallest.UserKey, t.Largest.UserKey) <= 0; k++ {
			overlap += next[k].DataSize()
		}
		if r := float64(overlap) / float64(max(t.CompensatedSize(), 1)); r < bestRatio {
			best, bestRatio = i, r
		}
	}
	return p.levelCompaction(v, l, ts[best])
}

// levelCompaction compacts table t of level l >= 1 with its overlaps in
// l+1.
func (p *Picker) levelCompaction(v *manifest.Version, l int, t *manifest.TableMetadata) *Compaction {
	c := &Compaction{Level: l, OutputLevel: l + 1}
	c.Inputs[0] = []*manifest.TableMetadata{t}
	c.Inputs[1] = overlapping(v.Levels[l+1], t.Smallest.UserKey, t.Largest.UserKey)
	p.setGrandparents(v, c)
	c.TrivialMove = len(c.Inputs[1]) == 0 && manifest.TotalDataSize(c.Grandparents) <= p.Opts.MaxGrandparentOverlap
	return c
}

// PickIdle is Pick for a DB that took no write for a while: what Pick
// returns, or else the idle purge (P6). The engine asks it only while
// idle, since an idle purge may rewrite far more than it frees.
func (p *Picker) PickIdle(v *manifest.Version) *Compaction {
	if c := p.Pick(v); c != nil {
		return c
	}
	return p.pickIdlePurge(v)
}

// pickIdlePurge returns, among the purge candidates whose inputs'
// tombstones shadow at least IdleRatio of the tree's bytes, the one that
// frees the largest share of its rewrite (P6). A delete burst can end with
// a memtable of tombstones flushed while the L0 compaction that took the
// burst's other tables runs: that lone table never makes L0 due, and its
// purge, which rewrites every base table its keys meet, frees too small a
// share of that to pass PurgeRatio, so without this its tombstones and
// the values they hide stayed until TombstoneMaxAge.
func (p *Picker) pickIdlePurge(v *manifest.Version) *Compaction {
	if p.Opts.IdleRatio <= 0 {
		return nil
	}
	var tree uint64
	for _, ts := range v.Levels {
		tree += manifest.TotalDataSize(ts)
	}
	floor := p.Opts.IdleRatio * float64(tree)
	baseLevel, _ := Targets(v, p.Opts)
	var best *Compaction
	bestShare := -1.0
	p.purgeCandidates(v, baseLevel, func(c *Compaction, shadowed, rewrite uint64) {
		if share := float64(shadowed) / float64(max(rewrite, 1)); float64(shadowed) >= floor && shadowed > 0 && share > bestShare {
			best, bestShare = c, share
		}
	})
	if best != nil {
		best.Reason, best.Score = ReasonIdle, bestShare
	}
	return best
}

// pickPurge returns the compaction above the bottom whose inputs' tombstones
// shadow the largest share of the bytes it would rewrite, if that share is
// at least PurgeRatio (P4).
func (p *Picker) pickPurge(v *manifest.Version, baseLevel int) *Compaction {
	if p.Opts.PurgeRatio <= 0 {
		return nil
	}
	var best *Compaction
	bestShare := p.Opts.PurgeRatio
	p.purgeCandidates(v, baseLevel, func(c *Compaction, shadowed, rewrite uint64) {
		if share := float64(shadowed) / float64(max(rewrite, 1)); share >= bestShare {
			best, bestShare = c, share
		}
	})
	if best != nil {
		best.Reason, best.Score = ReasonPurge, bestShare
	}
	return best
}

// purgeCandidates calls consider with each compaction above the bottom
// whose inputs hold tombstones that shadow bytes below, the bytes they
// shadow and the bytes it would rewrite. L0's candidate is the whole of
// L0, as for a score compaction; a deeper level's are its tables one at a
// time.
func (p *Picker) purgeCandidates(v *manifest.Version, baseLevel int, consider func(c *Compaction, shadowed, rewrite uint64)) {
	visit := func(c *Compaction) {
		var shadowed uint64
		for _, t := range c.Inputs[0] {
			n, _ := t.ShadowedBytes()
			shadowed += n
		}
		consider(c, shadowed, manifest.TotalDataSize(c.Inputs[0])+manifest.TotalDataSize(c.Inputs[1]))
	}
	for l := 0; l < manifest.NumLevels-1; l++ {
		if l > 0 && l < baseLevel {
			continue
		}
		if l == 0 {
			if shadowedAny(v.Levels[0]) {
				visit(p.pickL0(v, baseLevel))
			}
			continue
		}
		for _, t := range v.Levels[l] {
			if n, _ := t.ShadowedBytes(); n > 0 {
				visit(p.levelCompaction(v, l, t))
			}
		}
	}
}

func shadowedAny(ts []*manifest.TableMetadata) bool {
	for _, t := range ts {
		if n, _ := t.ShadowedBytes(); n > 0 {
			return true
		}
	}
	return false
}

// pickAged returns the compaction that moves the oldest tombstone above the
// bottom one level down, if it is older than TombstoneMaxAge (P5). Each
// output keeps its inputs' oldest tombstone time, so the tombstone keeps
// moving down until it reaches the bottom, where it is dropped (C2).
func (p *Picker) pickAged(v *manifest.Version, baseLevel int) *Compaction {
	if p.Opts.TombstoneMaxAge <= 0 || p.Now == nil {
		return nil
	}
	deadline := p.Now() - int64(p.Opts.TombstoneMaxAge)
	oldestLevel, oldest := -1, (*manifest.TableMetadata)(nil)
	for l := 0; l < manifest.NumLevels-1; l++ {
		for _, t := range v.Levels[l] {
			if tt := t.TombstoneTime(); tt != 0 && tt <= deadline && (oldest == nil || tt < oldest.TombstoneTime()) {
				oldestLevel, oldest = l, t
			}
		}
	}
	if oldest == nil {
		return p.pickAgedBottom(v, deadline)
	}
	var c *Compaction
	if oldestLevel == 0 {
		c = p.pickL0(v, baseLevel)
	} else {
		c = p.levelCompaction(v, oldestLevel, oldest)
	}
	c.Reason = ReasonAge
	c.Score = float64(p.Now()-oldest.TombstoneTime()) / float64(p.Opts.TombstoneMaxAge)
	return c
}

// pickAgedBottom returns the compaction of the bottom table with the
// oldest tombstone older than deadline into itself, if no open snapshot
// is older than any of its entries (P5 at the bottom). A tombstone kept
// at the bottom because a snapshot needed the value beneath it stays once
// the snapshot is gone: nothing else compacts a bottom table whose level
// is not due, so without this its tombstones and the values they hide
// would outlive TombstoneMaxAge for good. With no snapshot below the
// table's entries, C1 and C2 drop every tombstone and what it shadows,
// so the output holds no tombstone and is never picked for its age again.
func (p *Picker) pickAgedBottom(v *manifest.Version, deadline int64) *Compaction {
	if p.OldestSnapshot == nil {
		return nil
	}
	snap, pinned := p.OldestSnapshot()
	bottom := manifest.NumLevels - 1
	var oldest *manifest.TableMetadata
	for _, t := range v.Levels[bottom] {
		tt := t.TombstoneTime()
		if tt == 0 || tt > deadline || (pinned && snap < t.LargestSeq) {
			continue
		}
		if oldest == nil || tt < oldest.TombstoneTime() {
			oldest = t
		}
	}
	if oldest == nil {
		return nil
	}
	c := &Compaction{Level: bottom, OutputLevel: bottom, Reason: ReasonAge}
	c.Inputs[0] = []*manifest.TableMetadata{oldest}
	c.Score = float64(p.Now()-oldest.TombstoneTime()) / float64(p.Opts.TombstoneMaxAge)
	return c
}

func (p *Picker) setGrandparents(v *manifest.Version, c *Compaction) {
	if c.OutputLevel+1 < manifest.NumLevels {
		lo, hi := keyRange(slices.Concat(c.Inputs[0], c.Inputs[1]))
		c.Grandparents = overlapping(v.Levels[c.OutputLevel+1], lo, hi)
	}
}

// keyRange returns the smallest and largest user keys of ts.
func keyRange(ts []*manifest.TableMetadata) (lo, hi []byte) {
	for i, t := range ts {
		if i == 0 || bytes.Compare(t.Smallest.UserKey, lo) < 0 {
			lo = t.Smallest.UserKey
		}
		if i == 0 || bytes.Compare(t.Largest.UserKey, hi) > 0 {
			hi = t.Largest.UserKey
		}
	}
	return lo, hi
}

// Splitter decides where a compaction's output tables end: at the target
// file size, and before a key that would make the current output overlap
// more than MaxGrandparentOverlap bytes of grandparent tables.
type Splitter struct {
	grandparents []*manifest.TableMetadata
	maxOverlap   uint64
	target       uint64
	gi           int    // first grandparent not yet passed
	overlap      uint64 // grandparent bytes the current output overlaps
	seenKey      bool
}

// NewSplitter returns the splitter for c's outputs.
func NewSplitter(c *Compaction, o Options) *Splitter {
	return &Splitter{grandparents: c.Grandparents, maxOverlap: o.MaxGrandparentOverlap, target: o.TargetFileSize}
}

// ShouldSplit is called with each new user key the output will hold and
// the current output's size; it reports whether to finish the current
// output before this key. Keys must come in increasing order.
func (s *Splitter) ShouldSplit(userKey []byte, outputSize uint64) bool {
	// Count the grandparents wholly before userKey that the output spans.
	for s.gi < len(s.grandparents) && bytes.Compare(s.grandparents[s.gi].Largest.UserKey, userKey) < 0 {
		if s.seenKey {
			s.overlap += s.grandparents[s.gi].DataSize()
		}
		s.gi++
	}
	s.seenKey = true
	if outputSize == 0 {
		return false
	}
	if outputSize >= s.target || (s.maxOverlap > 0 && s.overlap > s.maxOverlap) {
		s.overlap = 0
		return true
	}
	return false
}

// overlapping returns the tables of ts whose user-key range meets [lo, hi]
// (inclusive; the bounds are keys, never "unbounded").
func overlapping(ts []*manifest.TableMetadata, lo, hi []byte) []*manifest.TableMetadata {
	var out []*manifest.TableMetadata
	for _, t := range ts {
		if bytes.Compare(t.Largest.UserKey, lo) >= 0 && bytes.Compare(t.Smallest.UserKey, hi) <= 0 {
			out = append(out, t)
		}
	}
	return out
}
