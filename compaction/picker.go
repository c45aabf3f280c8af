package compaction

import (
	"bytes"
	"math"
	"slices"

	"github.com/sievekv/sievekv/internal/manifest"
)

// Options tune the leveled policy.
type Options struct {
	// L0Trigger is the L0 table count that makes L0 due for compaction.
	L0Trigger int
	// BaseBytes is the target size of the base level (the level L0
	// compacts into); each deeper level's target is LevelMultiplier times
	// larger.
	BaseBytes uint64
	// LevelMultiplier is the size ratio between adjacent levels.
	LevelMultiplier int
	// TargetFileSize is where output tables are split.
	TargetFileSize uint64
	// MaxGrandparentOverlap splits an output table once it overlaps this
	// many bytes of the level below the output, so a later compaction of
	// it stays bounded (LevelDB's rule, 10 target files).
	MaxGrandparentOverlap uint64
}

// DefaultOptions are LevelDB's and Pebble's usual leveled settings.
func DefaultOptions() Options {
	return Options{
		L0Trigger:             4,
		BaseBytes:             64 << 20,
		LevelMultiplier:       10,
		TargetFileSize:        2 << 20,
		MaxGrandparentOverlap: 20 << 20,
	}
}

// Compaction is one unit of work the picker chose: merge Inputs[0] (from
// Level) with Inputs[1] (the overlapping tables of OutputLevel) into new
// tables at OutputLevel.
type Compaction struct {
	Level, OutputLevel int
	Inputs             [2][]*manifest.TableMetadata
	// Grandparents are the tables of OutputLevel+1 overlapping the inputs;
	// outputs are split so that none overlaps too many of them.
	Grandparents []*manifest.TableMetadata
	// Score is how far over its target the level was (>= 1).
	Score float64
	// TrivialMove reports that the input tables (Inputs[0]; Inputs[1] is
	// empty) can move to OutputLevel by a manifest edit alone: nothing
	// there overlaps them, nor do they overlap one another.
	TrivialMove bool
}

// Targets computes the dynamic level targets (P1, P2 in the package doc):
// the base level L0 compacts into, and each level's byte target, sized from
// the data actually in the tree so the bottom level holds about 90% of it.
func Targets(v *manifest.Version, o Options) (baseLevel int, maxBytes [manifest.NumLevels]uint64) {
	var dbSize uint64
	firstNonEmpty := manifest.NumLevels - 1
	for l := manifest.NumLevels - 1; l >= 1; l-- {
		s := v.LevelSize(l)
		dbSize += s
		if s > 0 {
			firstNonEmpty = l
		}
	}
	mult := float64(o.LevelMultiplier)
	// The bottom level should hold (1 - 1/mult) of the data; each level
	// above it a factor mult less. The base level is the shallowest level
	// whose target is still at least BaseBytes, but never deeper than the
	// shallowest level that already holds data.
	bottom := float64(dbSize) * (1 - 1/mult)
	size := bottom
	baseLevel = manifest.NumLevels - 1
	for baseLevel > 1 && size/mult >= float64(o.BaseBytes) {
		size /= mult
		baseLevel--
	}
	baseLevel = min(baseLevel, firstNonEmpty)
	// Spread the levels from the base target to the bottom evenly on a log
	// scale, so every level's fan-out is the same.
	levels := manifest.NumLevels - 1 - baseLevel
	ratio := mult
	if levels > 0 && bottom > float64(o.BaseBytes) {
		ratio = math.Pow(bottom/float64(o.BaseBytes), 1/float64(levels))
	}
	t := float64(o.BaseBytes)
	for l := baseLevel; l < manifest.NumLevels; l++ {
		maxBytes[l] = uint64(t)
		t *= ratio
	}
	maxBytes[manifest.NumLevels-1] = math.MaxUint64 // the bottom is never "too big"
	return baseLevel, maxBytes
}

// Picker chooses compactions from the engine's own published
// manifest.Version and its TableMetadata (manifest's V1: immutable, so read
// without a copy). It uses each table's file number, size and user-key
// bounds; L0 may be in any order, every deeper level is sorted and disjoint
// (manifest's V2). It remembers, per level, where the last
// compaction of that level ended, so successive compactions walk the key
// space round-robin (LevelDB's compaction pointer). The pointers live only
// in memory: after a restart each level's walk starts again at its first
// table, which costs nothing in correctness (the MANIFEST format has no
// field for them; docs/format.md, "VersionEdit").
type Picker struct {
	Opts     Options
	pointers [manifest.NumLevels][]byte
}

// Scores returns each level's compaction score: L0 by table count against
// L0Trigger, deeper levels by size against their target. A level with a
// score >= 1 is due.
func (p *Picker) Scores(v *manifest.Version) [manifest.NumLevels]float64 {
	var s [manifest.NumLevels]float64
	s[0] = float64(len(v.Levels[0])) / float64(p.Opts.L0Trigger)
	_, maxBytes := Targets(v, p.Opts)
	for l := 1; l < manifest.NumLevels-1; l++ {
		if maxBytes[l] > 0 {
			s[l] = float64(v.LevelSize(l)) / float64(maxBytes[l])
		}
	}
	return s
}

// Pick returns the most urgent compaction, or nil if no level is due.
func (p *Picker) Pick(v *manifest.Version) *Compaction {
	scores := p.Scores(v)
	best := -1
	for l := 0; l < manifest.NumLevels-1; l++ {
		if scores[l] >= 1 && (best < 0 || scores[l] > scores[best]) {
			best = l
		}
	}
	if best < 0 {
		return nil
	}
	baseLevel, _ := Targets(v, p.Opts)
	var c *Compaction
	if best == 0 {
		c = p.pickL0(v, baseLevel)
	} else {
		c = p.pickLevel(v, best)
	}
	c.Score = scores[best]
	return c
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
		manifest.TotalSize(c.Grandparents) <= p.Opts.MaxGrandparentOverlap
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

// pickLevel compacts one table of level l, the first after the level's
// compaction pointer, with its overlaps in l+1.
func (p *Picker) pickLevel(v *manifest.Version, l int) *Compaction {
	ts := v.Levels[l]
	i := 0
	if ptr := p.pointers[l]; ptr != nil {
		for i < len(ts) && bytes.Compare(ts[i].Smallest.UserKey, ptr) <= 0 {
			i++
		}
		if i == len(ts) {
			i = 0
		}
	}
	c := &Compaction{Level: l, OutputLevel: l + 1}
	c.Inputs[0] = []*manifest.TableMetadata{ts[i]}
	c.Inputs[1] = overlapping(v.Levels[l+1], ts[i].Smallest.UserKey, ts[i].Largest.UserKey)
	p.setGrandparents(v, c)
	c.TrivialMove = len(c.Inputs[1]) == 0 && manifest.TotalSize(c.Grandparents) <= p.Opts.MaxGrandparentOverlap
	return c
}

func (p *Picker) setGrandparents(v *manifest.Version, c *Compaction) {
	if c.OutputLevel+1 < manifest.NumLevels {
		lo, hi := keyRange(slices.Concat(c.Inputs[0], c.Inputs[1]))
		c.Grandparents = overlapping(v.Levels[c.OutputLevel+1], lo, hi)
	}
}

// Done records that c finished, advancing its level's pointer.
func (p *Picker) Done(c *Compaction) {
	_, hi := keyRange(c.Inputs[0])
	p.pointers[c.Level] = append([]byte(nil), hi...)
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
			s.overlap += s.grandparents[s.gi].Size
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
