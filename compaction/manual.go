package compaction

import (
	"bytes"
	"slices"

	"github.com/sievekv/sievekv/internal/manifest"
)

// ManualStep returns the step of a manual compaction of the user keys
// [start, end] (nil bounds are unbounded) that starts at level, or nil if
// that level has nothing in the range (P7). The engine calls it for each
// level from L0 to the bottom on the version then current, so the range's
// data moves down one step at a time and reaches the bottom, rewriting
// only what overlaps the range (and what that overlaps below) rather than
// the whole tree.
//
//   - Above the bottom, the inputs are the level's tables that overlap the
//     range; at L0 also, transitively, every L0 table that overlaps those,
//     since an older L0 table left behind would shadow the newer versions
//     moved below it. They merge into the first level below holding tables
//     that overlap them, with those tables, or into the bottom level if no
//     level below does: the levels skipped hold no key of theirs, so
//     nothing is reordered. When every table below that the inputs' key
//     range reaches (widened by each table taken) overlaps the range, the
//     step takes them all into the bottom at once instead
//     (straightToBottom).
//   - At the bottom, the tables in range from the first that a rewrite
//     may shrink to the last are rewritten in place, for C1 and C2 to
//     drop what a snapshot no longer needs: tables holding tombstones
//     (point or range), or entries with a sequence number (kept apart
//     from older versions for a snapshot: with none open, the bottom's
//     entries have number 0, C4). A range of live data alone is left as
//     it is, and so are the tables written reports (nil: none), the
//     outputs of the same Compact's earlier steps: written with the
//     snapshots open a moment ago, a rewrite would drop nothing more.
func (p *Picker) ManualStep(v *manifest.Version, level int, start, end []byte, written func(*manifest.TableMetadata) bool) *Compaction {
	if level == lastLevel {
		// One contiguous run of tables, from the first in range worth a
		// rewrite to the last: outputs merged from two tables apart
		// could span the table between them.
		inRange := overlappingRange(v.Levels[lastLevel], start, end)
		worth := func(t *manifest.TableMetadata) bool {
			return (mayHoldTombstones(t) || t.LargestSeq > 0) && (written == nil || !written(t))
		}
		first := slices.IndexFunc(inRange, worth)
		if first < 0 {
			return nil
		}
		last := len(inRange) - 1
		for !worth(inRange[last]) {
			last--
		}
		c := &Compaction{Level: lastLevel, OutputLevel: lastLevel, Reason: ReasonManual}
		c.Inputs[0] = inRange[first : last+1]
		return c
	}
	inputs := overlappingRange(v.Levels[level], start, end)
	if len(inputs) == 0 {
		return nil
	}
	if level == 0 {
		inputs = closeL0(v.Levels[0], inputs)
	}
	if c := straightToBottom(v, level, inputs, start, end); c != nil {
		return c
	}
	lo, hi := keyRange(inputs)
	out := lastLevel
	for l := level + 1; l < lastLevel; l++ {
		if len(overlapping(v.Levels[l], lo, hi)) > 0 {
			out = l
			break
		}
	}
	c := &Compaction{Level: level, OutputLevel: out, Reason: ReasonManual}
	c.Inputs[0] = inputs
	c.Inputs[1] = overlapping(v.Levels[out], lo, hi)
	// Never a trivial move: a manual compaction rewrites its range, so
	// what it leaves is split at the target size with C1 and C2 applied.
	p.setGrandparents(v, c)
	return c
}

// straightToBottom returns the step that merges inputs, taken from level,
// with every table below level that overlaps their key range into the
// bottom at once, the range widened by each table taken until no table
// below is left that overlaps it, if each table it takes below level
// overlaps [start, end]; nil otherwise. The level-by-level steps would
// rewrite each of those tables anyway, and what moves down would be
// written again at every level it stops at: a Compact of the whole key
// space wrote the levels above the bottom twice. A table left below holds
// no key of the merge's range, so nothing is reordered; and none is left
// at the edge of the tree for a later step (with a table left over, the
// filter budget saw no full compaction and kept the bottom's filters at
// their share rather than rounding them up).
func straightToBottom(v *manifest.Version, level int, inputs []*manifest.TableMetadata, start, end []byte) *Compaction {
	lo, hi := keyRange(inputs)
	var below [manifest.NumLevels][]*manifest.TableMetadata
	for grew := true; grew; {
		grew = false
		for l := level + 1; l <= lastLevel; l++ {
			ts := overlapping(v.Levels[l], lo, hi)
			if len(ts) == len(below[l]) {
				continue
			}
			for _, t := range ts {
				if !t.Overlaps(start, end) {
					return nil
				}
			}
			below[l], grew = ts, true
			blo, bhi := keyRange(ts)
			if bytes.Compare(blo, lo) < 0 {
				lo = blo
			}
			if bytes.Compare(bhi, hi) > 0 {
				hi = bhi
			}
		}
	}
	c := &Compaction{Level: level, OutputLevel: lastLevel, Reason: ReasonManual, Between: below}
	c.Inputs[0] = inputs
	c.Inputs[1], c.Between[lastLevel] = below[lastLevel], nil
	return c
}

// mayHoldTombstones reports whether t's properties count point or range
// tombstones, or are not loaded (then it may).
func mayHoldTombstones(t *manifest.TableMetadata) bool {
	return t.Props == nil || t.Props.NumDeletions > 0 || t.Props.NumRangeDeletions > 0
}

// lastLevel is the bottom of the tree.
const lastLevel = manifest.NumLevels - 1

// overlappingRange is overlapping with nil bounds meaning unbounded.
func overlappingRange(ts []*manifest.TableMetadata, start, end []byte) []*manifest.TableMetadata {
	var out []*manifest.TableMetadata
	for _, t := range ts {
		if t.Overlaps(start, end) {
			out = append(out, t)
		}
	}
	return out
}

// closeL0 adds to chosen every table of l0 that overlaps the chosen ones'
// key range, until none is left to add. The result keeps l0's order.
func closeL0(l0, chosen []*manifest.TableMetadata) []*manifest.TableMetadata {
	in := make(map[*manifest.TableMetadata]bool, len(l0))
	for _, t := range chosen {
		in[t] = true
	}
	for grew := true; grew; {
		grew = false
		lo, hi := keyRange(chosen)
		for _, t := range l0 {
			if !in[t] && t.Overlaps(lo, hi) {
				in[t] = true
				chosen = append(chosen, t)
				grew = true
			}
		}
	}
	return slices.DeleteFunc(slices.Clone(l0), func(t *manifest.TableMetadata) bool { return !in[t] })
}
