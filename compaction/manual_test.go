package compaction

import (
	"slices"
	"testing"

	"github.com/sievekv/sievekv/internal/manifest"
	"github.com/sievekv/sievekv/sstable"
)

// fileNums lists ts's file numbers, for failure messages and comparisons.
func fileNums(ts []*manifest.TableMetadata) []uint64 {
	var out []uint64
	for _, t := range ts {
		out = append(out, t.FileNum)
	}
	return out
}

// withProps gives t loaded properties counting deletions tombstones.
func withProps(t *manifest.TableMetadata, deletions uint64) *manifest.TableMetadata {
	t.Props = &sstable.Properties{NumDeletions: deletions}
	return t
}

// TestManualStepRewritesOnlyTheRangesOverlap: a narrow manual compaction
// of a tree whose L0 table spans every key takes all of L0 into L5 (all
// of L5 overlaps it), but then only the L5 table holding the range into
// L6, with the L6 tables under that one table alone. The old manual
// compaction took every table that overlapped any table it had taken, so
// the wide L0 table pulled in the whole tree.
func TestManualStepRewritesOnlyTheRangesOverlap(t *testing.T) {
	v := &manifest.Version{}
	v.Levels[0] = []*manifest.TableMetadata{table(100, 1<<20, "k000000", "k000999")}
	v.Levels[5] = []*manifest.TableMetadata{
		table(50, 1<<20, "k000000", "k000299"), table(51, 1<<20, "k000300", "k000599"), table(52, 1<<20, "k000600", "k000999")}
	v.Levels[6] = sortedLevel(1, 100, 1<<20) // k000000 .. k000999, 10 keys a table
	p := &Picker{Opts: DefaultOptions()}
	lo, hi := []byte("k000420"), []byte("k000425")

	c := p.ManualStep(v, 0, lo, hi, nil)
	if c == nil || c.Level != 0 || c.OutputLevel != 5 || c.Reason != ReasonManual || c.TrivialMove ||
		!slices.Equal(fileNums(c.Inputs[0]), []uint64{100}) || !slices.Equal(fileNums(c.Inputs[1]), []uint64{50, 51, 52}) {
		t.Fatalf("L0 step: %s", describeCompaction(c))
	}
	for l := 1; l < 5; l++ {
		if c := p.ManualStep(v, l, lo, hi, nil); c != nil {
			t.Fatalf("empty L%d gave a step: %s", l, describeCompaction(c))
		}
	}
	c = p.ManualStep(v, 5, lo, hi, nil)
	if c == nil || c.OutputLevel != 6 || !slices.Equal(fileNums(c.Inputs[0]), []uint64{51}) {
		t.Fatalf("L5 step: %s", describeCompaction(c))
	}
	// Table 51 covers k000300..k000599: L6 tables 31..60 (k000300 .. k000599).
	if got := fileNums(c.Inputs[1]); len(got) != 30 || got[0] != 31 || got[29] != 60 {
		t.Fatalf("L5 step took L6 tables %v, want 31..60", got)
	}
}

// TestManualStepClosesL0UnderOverlap: an L0 table outside the range that
// overlaps one inside it goes too (else it would stay above the newer
// versions moved below it), transitively; one overlapping neither stays.
func TestManualStepClosesL0UnderOverlap(t *testing.T) {
	v := &manifest.Version{}
	v.Levels[0] = []*manifest.TableMetadata{
		table(10, 1<<20, "a", "c"), table(11, 1<<20, "b", "e"), table(12, 1<<20, "x", "z"), table(13, 1<<20, "e", "f")}
	v.Levels[6] = []*manifest.TableMetadata{table(1, 1<<20, "a", "m"), table(2, 1<<20, "n", "z")}
	p := &Picker{Opts: DefaultOptions()}
	c := p.ManualStep(v, 0, []byte("d"), []byte("d"), nil)
	if c == nil || c.OutputLevel != 6 || !slices.Equal(fileNums(c.Inputs[0]), []uint64{10, 11, 13}) ||
		!slices.Equal(fileNums(c.Inputs[1]), []uint64{1}) {
		t.Fatalf("step: %s", describeCompaction(c))
	}
}

// TestManualStepSkipsLevelsThatDoNotOverlap: inputs go to the first level
// below that overlaps them, which may be past levels holding other keys;
// with none overlapping, to the bottom, and rewritten even then (no
// trivial move: the caller wants the range's tables split and purged).
func TestManualStepSkipsLevelsThatDoNotOverlap(t *testing.T) {
	v := stepsTree()
	p := &Picker{Opts: DefaultOptions()}
	// L6's first table reaches the L5 table's range but not the Compact's,
	// so the step does not go straight to the bottom.
	if c := p.ManualStep(v, 0, []byte("p"), []byte("p"), nil); c == nil || c.OutputLevel != 5 || !slices.Equal(fileNums(c.Inputs[1]), []uint64{6}) {
		t.Fatalf("L0 step: %s", describeCompaction(c))
	}
	v.Levels[6] = []*manifest.TableMetadata{table(1, 1<<20, "a", "c")}
	v.Levels[5] = nil
	c := p.ManualStep(v, 0, nil, nil, nil)
	if c == nil || c.OutputLevel != 6 || len(c.Inputs[1]) != 0 || c.TrivialMove {
		t.Fatalf("L0 step with nothing below overlapping: %s", describeCompaction(c))
	}
}

// TestManualStepGoesStraightToTheBottom: when every table below that the
// inputs reach overlaps the Compact's range, the step merges them all
// into the bottom at once rather than writing what moves down again at
// each level it stops at. The reach widens with each table taken: L6's
// first table takes the L4 table above it too, or that table would be
// left for a step of its own (and the filter budget would not see the
// merge as the full compaction it is). If anything it reaches lies
// outside the range, the step stops at the first level that overlaps.
func TestManualStepGoesStraightToTheBottom(t *testing.T) {
	v := stepsTree()
	p := &Picker{Opts: DefaultOptions()}
	for _, r := range [][2][]byte{{nil, nil}, {[]byte("b"), []byte("q")}} {
		c := p.ManualStep(v, 0, r[0], r[1], nil)
		if c == nil || c.Level != 0 || c.OutputLevel != 6 || c.TrivialMove ||
			!slices.Equal(fileNums(c.Inputs[0]), []uint64{10}) || !slices.Equal(fileNums(c.Between[4]), []uint64{5}) ||
			!slices.Equal(fileNums(c.Between[5]), []uint64{6}) || !slices.Equal(fileNums(c.Inputs[1]), []uint64{1, 2}) {
			t.Fatalf("L0 step of [%q, %q]: %s between %v %v", r[0], r[1], describeCompaction(c), fileNums(c.Between[4]), fileNums(c.Between[5]))
		}
	}
	// a..c lies outside [d, q]: level by level.
	c := p.ManualStep(v, 0, []byte("d"), []byte("q"), nil)
	if c == nil || c.OutputLevel != 5 || !slices.Equal(fileNums(c.Inputs[1]), []uint64{6}) || len(c.Between[4]) != 0 {
		t.Fatalf("L0 step of [d, q]: %s", describeCompaction(c))
	}
}

// stepsTree is a four-level tree whose L0 table p..q overlaps L5's o..r
// but not L4's a..c, above L6 tables a..o and q..z.
func stepsTree() *manifest.Version {
	v := &manifest.Version{}
	v.Levels[0] = []*manifest.TableMetadata{table(10, 1<<20, "p", "q")}
	v.Levels[4] = []*manifest.TableMetadata{table(5, 1<<20, "a", "c")}
	v.Levels[5] = []*manifest.TableMetadata{table(6, 1<<20, "o", "r")}
	v.Levels[6] = []*manifest.TableMetadata{table(1, 1<<20, "a", "o"), table(2, 1<<20, "q", "z")}
	return v
}

// TestManualStepAtTheBottom rewrites in place the bottom tables in range
// from the first holding tombstones (or whose properties are not loaded)
// to the last, the live tables between them included (two tables merged
// around a third would make outputs overlapping it).
func TestManualStepAtTheBottom(t *testing.T) {
	bottom := manifest.NumLevels - 1
	v := &manifest.Version{}
	v.Levels[bottom] = []*manifest.TableMetadata{
		withProps(table(1, 1<<20, "a", "c"), 3), withProps(table(2, 1<<20, "d", "f"), 0),
		table(3, 1<<20, "g", "i"), withProps(table(4, 1<<20, "j", "l"), 1)}
	v.Levels[bottom][1].Props.NumRangeDeletions = 0
	rangeDel := withProps(table(5, 1<<20, "m", "o"), 0)
	rangeDel.Props.NumRangeDeletions = 1
	v.Levels[bottom] = append(v.Levels[bottom], rangeDel)
	p := &Picker{Opts: DefaultOptions()}
	c := p.ManualStep(v, bottom, []byte("b"), []byte("n"), nil)
	if c == nil || c.Level != bottom || c.OutputLevel != bottom || c.TrivialMove ||
		!slices.Equal(fileNums(c.Inputs[0]), []uint64{1, 2, 3, 4, 5}) || len(c.Inputs[1]) != 0 {
		t.Fatalf("bottom step: %s", describeCompaction(c))
	}
	if c := p.ManualStep(v, bottom, []byte("d"), []byte("f"), nil); c != nil {
		t.Fatalf("a range of live data alone gave a step: %s", describeCompaction(c))
	}
	if c := p.ManualStep(v, bottom, []byte("e"), []byte("k"), nil); c == nil || !slices.Equal(fileNums(c.Inputs[0]), []uint64{3, 4}) {
		t.Fatalf("bottom step from a live table: %s", describeCompaction(c))
	}
}

// TestManualStepAtTheBottomTakesTablesASnapshotKept: a bottom table with
// no tombstone but entries numbered above 0 holds versions kept apart for
// a snapshot (with none open the bottom's entries have number 0), which
// a rewrite may drop now; a table of number-0 entries alone stays.
func TestManualStepAtTheBottomTakesTablesASnapshotKept(t *testing.T) {
	bottom := manifest.NumLevels - 1
	v := &manifest.Version{}
	v.Levels[bottom] = []*manifest.TableMetadata{
		withProps(table(1, 1<<20, "a", "c"), 0), withProps(table(2, 1<<20, "d", "f"), 0), withProps(table(3, 1<<20, "g", "i"), 0)}
	p := &Picker{Opts: DefaultOptions()}
	if c := p.ManualStep(v, bottom, nil, nil, nil); c != nil {
		t.Fatalf("live tables numbered 0 gave a step: %s", describeCompaction(c))
	}
	v.Levels[bottom][1].LargestSeq = 7
	if c := p.ManualStep(v, bottom, nil, nil, nil); c == nil || !slices.Equal(fileNums(c.Inputs[0]), []uint64{2}) {
		t.Fatalf("bottom step: %s", describeCompaction(c))
	}
}

// TestManualStepAtTheBottomLeavesWhatTheCompactWrote: the outputs of the
// same Compact's earlier steps are not rewritten again, however many
// tombstones a snapshot made them keep; the run shrinks to the rest.
func TestManualStepAtTheBottomLeavesWhatTheCompactWrote(t *testing.T) {
	bottom := manifest.NumLevels - 1
	v := &manifest.Version{}
	v.Levels[bottom] = []*manifest.TableMetadata{
		withProps(table(1, 1<<20, "a", "c"), 2), withProps(table(20, 1<<20, "d", "f"), 2), withProps(table(21, 1<<20, "g", "i"), 2)}
	p := &Picker{Opts: DefaultOptions()}
	written := func(t *manifest.TableMetadata) bool { return t.FileNum >= 20 }
	if c := p.ManualStep(v, bottom, nil, nil, written); c == nil || !slices.Equal(fileNums(c.Inputs[0]), []uint64{1}) {
		t.Fatalf("bottom step: %s", describeCompaction(c))
	}
	if c := p.ManualStep(v, bottom, []byte("d"), nil, written); c != nil {
		t.Fatalf("the Compact's own outputs gave a step: %s", describeCompaction(c))
	}
}
