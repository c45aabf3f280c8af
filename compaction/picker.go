package compaction

import (
	"bytes"
	"math"
	"slices"
)

// NumLevels is the depth of the tree, L0 through L6.
const NumLevels = 7

// Table is what the picker knows of one table.
type Table struct {
	FileNum           uint64
	Size              uint64
	Smallest, Largest []byte // user keys, inclusive
}

func (t Table) overlaps(lo, hi []byte) bool {
	return bytes.Compare(t.Largest, lo) >= 0 && bytes.Compare(t.Smallest, hi) <= 0
}

// Version is the shape of the tree the picker chooses from. L0 may be in
// any order; every deeper level is sorted by Smallest with no overlaps.
type Version struct {
	Levels [NumLevels][]Table
}

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
	Inputs             [2][]Table
	// Grandparents are the tables of OutputLevel+1 overlapping the inputs;
	// outputs are split so that none overlaps too many of them.
	Grandparents []Table
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
func Targets(v *Version, o Options) (baseLevel int, maxBytes [NumLevels]uint64) {
	var dbSize uint64
	firstNonEmpty := NumLevels - 1
	for l := NumLevels - 1; l >= 1; l-- {
		s := levelSize(v.Levels[l])
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
	baseLevel = NumLevels - 1
	for baseLevel > 1 && size/mult >= float64(o.BaseBytes) {
		size /= mult
		baseLevel--
	}
	baseLevel = min(baseLevel, firstNonEmpty)
	// Spread the levels from the base target to the bottom evenly on a log
	// scale, so every level's fan-out is the same.
	levels := NumLevels - 1 - baseLevel
	ratio := mult
	if levels > 0 && bottom > float64(o.BaseBytes) {
		ratio = math.Pow(bottom/float64(o.BaseBytes), 1/float64(levels))
	}
	t := float64(o.BaseBytes)
	for l := baseLevel; l < NumLevels; l++ {
		maxBytes[l] = uint64(t)
		t *= ratio
	}
	maxBytes[NumLevels-1] = math.MaxUint64 // the bottom is never "too big"
	return baseLevel, maxBytes
}

func levelSize(ts []Table) uint64 {
	var n uint64
	for _, t := range ts {
		n += t.Size
	}
	return n
}

// Picker chooses compactions. It remembers, per level, where the last
// compaction of that level ended, so successive compactions walk the key
// space round-robin (LevelDB's compaction pointer).
type Picker struct {
	Opts     Options
	pointers [NumLevels][]byte
}

// Scores returns each level's compaction score: L0 by table count against
// L0Trigger, deeper levels by size against their target. A level with a
// score >= 1 is due.
func (p *Picker) Scores(v *Version) [NumLevels]float64 {
	var s [NumLevels]float64
	s[0] = float64(len(v.Levels[0])) / float64(p.Opts.L0Trigger)
	_, maxBytes := Targets(v, p.Opts)
	for l := 1; l < NumLevels-1; l++ {
		if maxBytes[l] > 0 {
			s[l] = float64(levelSize(v.Levels[l])) / float64(maxBytes[l])
		}
	}
	return s
}

// Pick returns the most urgent compaction, or nil if no level is due.
func (p *Picker) Pick(v *Version) *Compaction {
	scores := p.Scores(v)
	best := -1
	for l := 0; l < NumLevels-1; l++ {
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
func (p *Picker) pickL0(v *Version, baseLevel int) *Compaction {
	c := &Compaction{Level: 0, OutputLevel: baseLevel}
	c.Inputs[0] = append([]Table(nil), v.Levels[0]...)
	lo, hi := keyRange(c.Inputs[0])
	c.Inputs[1] = overlapping(v.Levels[baseLevel], lo, hi)
	p.setGrandparents(v, c)
	// Sequential loads flush L0 tables that overlap nothing: they can
	// move down by a manifest edit instead of being rewritten.
	c.TrivialMove = len(c.Inputs[1]) == 0 && !anyOverlap(c.Inputs[0]) &&
		levelSize(c.Grandparents) <= p.Opts.MaxGrandparentOverlap
	return c
}

// anyOverlap reports whether any two of ts share a user key.
func anyOverlap(ts []Table) bool {
	sorted := append([]Table(nil), ts...)
	slices.SortFunc(sorted, func(a, b Table) int { return bytes.Compare(a.Smallest, b.Smallest) })
	for i := 1; i < len(sorted); i++ {
		if bytes.Compare(sorted[i-1].Largest, sorted[i].Smallest) >= 0 {
			return true
		}
	}
	return false
}

// pickLevel compacts one table of level l, the first after the level's
// compaction pointer, with its overlaps in l+1.
func (p *Picker) pickLevel(v *Version, l int) *Compaction {
	ts := v.Levels[l]
	i := 0
	if ptr := p.pointers[l]; ptr != nil {
		for i < len(ts) && bytes.Compare(ts[i].Smallest, ptr) <= 0 {
			i++
		}
		if i == len(ts) {
			i = 0
		}
	}
	c := &Compaction{Level: l, OutputLevel: l + 1}
	c.Inputs[0] = []Table{ts[i]}
	c.Inputs[1] = overlapping(v.Levels[l+1], ts[i].Smallest, ts[i].Largest)
	p.setGrandparents(v, c)
	c.TrivialMove = len(c.Inputs[1]) == 0 && levelSize(c.Grandparents) <= p.Opts.MaxGrandparentOverlap
	return c
}

func (p *Picker) setGrandparents(v *Version, c *Compaction) {
	if c.OutputLevel+1 < NumLevels {
		lo, hi := keyRange(append(append([]Table(nil), c.Inputs[0]...), c.Inputs[1]...))
		c.Grandparents = overlapping(v.Levels[c.OutputLevel+1], lo, hi)
	}
}

// Done records that c finished, advancing its level's pointer.
func (p *Picker) Done(c *Compaction) {
	_, hi := keyRange(c.Inputs[0])
	p.pointers[c.Level] = append([]byte(nil), hi...)
}

// keyRange returns the smallest and largest user keys of ts.
func keyRange(ts []Table) (lo, hi []byte) {
	for i, t := range ts {
		if i == 0 || bytes.Compare(t.Smallest, lo) < 0 {
			lo = t.Smallest
		}
		if i == 0 || bytes.Compare(t.Largest, hi) > 0 {
			hi = t.Largest
		}
	}
	return lo, hi
}

func overlapping(ts []Table, lo, hi []byte) []Table {
	var out []Table
	for _, t := range ts {
		if t.overlaps(lo, hi) {
			out = append(out, t)
		}
	}
	return out
}

// Splitter decides where a compaction's output tables end: at the target
// file size, and before a key that would make the current output overlap
// more than MaxGrandparentOverlap bytes of grandparent tables.
type Splitter struct {
	grandparents []Table
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
	for s.gi < len(s.grandparents) && bytes.Compare(s.grandparents[s.gi].Largest, userKey) < 0 {
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
