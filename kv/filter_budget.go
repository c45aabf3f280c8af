package kv

import (
	"fmt"
	"math"
	"sync"
	"sync/atomic"

	"github.com/sievekv/sievekv/filters"
	"github.com/sievekv/sievekv/internal/manifest"
)

// Bounds on the bits per key Monkey may give one table: at least enough for
// a filter worth probing, at most what a 32-bit fingerprint can use.
const (
	monkeyMinBitsPerKey = 1
	monkeyMaxBitsPerKey = 36
)

// filterBudget is FilterAuto's account of the filter memory budget (keeps
// K10): the bits per key each new table gets, so that the filters of the
// live tables plus those being written stay within FilterBitsPerKey times
// their keys (plus a fixed header per table).
type filterBudget struct {
	mu sync.Mutex
	// pending holds the tables built but not yet seen in the current
	// version, by file number: a flush and a compaction writing at once
	// must not both spend the same spare bits. An entry goes once its
	// table is in the version; a table that never gets there (a failed
	// edit) keeps its entry, which only makes later budgets stricter.
	// Guarded by mu.
	pending map[uint64]pendingFilter
	// active are the outputs being written. While a compaction writes,
	// its inputs are still in the version and stand in for its outputs,
	// so the others count its inputs, not its pending tables: counting
	// both starved every flush made during a long compaction (measured:
	// L0 tables at 2.8 bits per key next to a 10-bit L6). Guarded by mu.
	active map[*filterTarget]bool
	// version is d.current as last installed. The chooser reads it without
	// DB.mu, which a recovery flush holds while it writes; a version is
	// immutable once published, so a stale one is only a shape slightly
	// out of date.
	version atomic.Pointer[manifest.Version]
}

// pendingFilter is a built table's filter not yet in the version.
type pendingFilter struct {
	bits uint64
	job  *filterTarget
}

// begin and end bracket the writing of target's tables.
func (b *filterBudget) begin(target *filterTarget) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.active == nil {
		b.active = map[*filterTarget]bool{}
	}
	b.active[target] = true
}

func (b *filterBudget) end(target *filterTarget) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.active, target)
}

// filterTarget is what a table being written needs for its budget: where
// it goes, what it replaces, and how many keys its whole output will hold.
type filterTarget struct {
	level int
	// inputs are the tables the output replaces (none for a flush).
	inputs []levelTable
	// inputKeys bounds the keys of the whole output: the inputs' keys.
	inputKeys uint64
	// writtenKeys counts the keys of the output's tables finished so far.
	writtenKeys uint64
	// plannedBits is what the whole output will spend as of its last
	// table: the payloads chosen so far plus the rest of its keys at the
	// share that table got. Guarded by filterBudget.mu.
	plannedBits uint64
	// writtenBits sums the payloads chosen so far. Guarded by
	// filterBudget.mu.
	writtenBits uint64
}

func newFilterTarget(level int, inputs []levelTable) *filterTarget {
	t := &filterTarget{level: level, inputs: inputs}
	for _, in := range inputs {
		t.inputKeys += tableKeys(in.meta)
	}
	return t
}

// tableKeys is the number of distinct user keys of t, as its filter
// counted them; its entry count for a table without a filter.
func tableKeys(t *manifest.TableMetadata) uint64 {
	if t.Props != nil && t.Props.FilterKeys > 0 {
		return t.Props.FilterKeys
	}
	return t.Entries()
}

// tableChooser picks the filter of one table as the writer finishes it.
type tableChooser struct {
	d      *DB
	target *filterTarget
	num    fileNum
}

// Choose returns the policy of the filter with the lowest expected cost
// within the table's bits per key.
func (c *tableChooser) Choose(n int) (filters.Policy, error) {
	var choice filters.TableChoice
	var err error
	var share float64
	if c.d.opts.FilterAllocation == FilterAllocationMonkey {
		// Monkey's share is a target, not a cap: the filter widths are
		// steps, and pricing each bit at what it saves at the target
		// rounds up where that pays, as the continuous optimum would.
		var limit float64
		share, limit = c.d.monkeyBits(c.target, c.num, uint64(n))
		choice, err = filters.ChooseTableFilterPriced(n, limit, filters.MarginalBitValue(share, bitsPerFPHalving))
	} else {
		choice, err = filters.ChooseTableFilter(n, c.d.opts.FilterBitsPerKey)
	}
	if err != nil {
		return nil, fmt.Errorf("kv: table %06d: %w", c.num, err)
	}
	c.target.writtenKeys += uint64(n)
	if c.d.opts.FilterAllocation == FilterAllocationMonkey {
		b := &c.d.filterBudget
		b.mu.Lock()
		if b.pending == nil {
			b.pending = map[uint64]pendingFilter{}
		}
		b.pending[uint64(c.num)] = pendingFilter{choice.PayloadBits, c.target}
		t := c.target
		t.writtenBits += choice.PayloadBits
		rest := max(t.inputKeys, t.writtenKeys) - t.writtenKeys
		t.plannedBits = t.writtenBits + uint64(math.Ceil(share*float64(rest)))
		b.mu.Unlock()
	}
	return choice.Policy()
}

// filterPayloadBits is what a live table's filter spends against the
// budget: its encoding less the fixed header the budget allows per table.
func filterPayloadBits(t *manifest.TableMetadata) uint64 {
	b := t.FilterBytes()
	if b <= filters.TableFilterHeaderBytes {
		return 0
	}
	return 8 * (b - filters.TableFilterHeaderBytes)
}

// monkeyBits returns the bits per key of the n-key table num that target
// is writing: share, Monkey's share for its run given the current
// version's shape, and limit, what the budget has left for it once every
// other live or pending table and the rest of this output (at share) are
// paid for.
func (d *DB) monkeyBits(target *filterTarget, num fileNum, n uint64) (share, limit float64) {
	budget := d.opts.FilterBitsPerKey
	replaced := make(map[uint64]bool, len(target.inputs))
	for _, in := range target.inputs {
		replaced[in.meta.FileNum] = true
	}

	d.filterBudget.mu.Lock()
	defer d.filterBudget.mu.Unlock()
	var (
		runs       []uint64 // L0 tables, then one run per level
		levelRun   [NumLevels]uint64
		totalKeys  uint64
		spentBits  uint64
		inVersion  = map[uint64]bool{}
		l0Tables   int
		flushSized uint64 // the largest L0 table: what a flush writes
	)
	var levels [NumLevels][]*manifest.TableMetadata
	if v := d.filterBudget.version.Load(); v != nil {
		levels = v.Levels
	}
	for l, ts := range levels {
		for _, t := range ts {
			inVersion[t.FileNum] = true
			if replaced[t.FileNum] {
				continue
			}
			k := tableKeys(t)
			totalKeys += k
			spentBits += filterPayloadBits(t)
			if l == 0 {
				runs = append(runs, k)
				l0Tables++
				flushSized = max(flushSized, k)
			} else {
				levelRun[l] += k
			}
		}
	}
	for f, p := range d.filterBudget.pending {
		switch {
		case inVersion[f]:
			delete(d.filterBudget.pending, f)
		case f == uint64(num):
		case p.job != target && d.filterBudget.active[p.job] && len(p.job.inputs) > 0:
			// Another compaction still writing: its inputs count.
		default:
			spentBits += p.bits
		}
	}
	// Another compaction's inputs stand in for its outputs only up to
	// what they spend: where its outputs will spend more (a level given a
	// larger share than its inputs had), the difference is taken too, or
	// a flush written meanwhile would spend it a second time.
	for job := range d.filterBudget.active {
		if job == target || len(job.inputs) == 0 {
			continue
		}
		var inputBits uint64
		for _, in := range job.inputs {
			inputBits += filterPayloadBits(in.meta)
		}
		if job.plannedBits > inputBits {
			spentBits += job.plannedBits - inputBits
		}
	}

	// The output's run: a new L0 table, or its level with the whole
	// output in it (the inputs' keys bound what is still to come).
	outputKeys := max(target.inputKeys, target.writtenKeys+n)
	rest := outputKeys - target.writtenKeys - n
	totalKeys += outputKeys
	var targetRun int
	if target.level == 0 {
		targetRun = len(runs)
		runs = append(runs, n)
		l0Tables++
		flushSized = max(flushSized, n)
	} else {
		levelRun[target.level] += outputKeys
	}
	// L0 fills up to its compaction trigger between compactions: a level
	// written now shares the budget with those flushes to come, so they
	// count in its shape (phantom runs of a flush's size). Without them a
	// bottom level written just after L0 emptied would take the whole
	// budget and leave the next flushes none to spare.
	for ; l0Tables < d.opts.L0CompactionThreshold && flushSized > 0; l0Tables++ {
		runs = append(runs, flushSized)
	}
	for l := 1; l < NumLevels; l++ {
		if l == target.level {
			targetRun = len(runs)
		}
		runs = append(runs, levelRun[l])
	}
	bits := monkeyBitsPerKey(runs, targetRun, budget, monkeyMinBitsPerKey, monkeyMaxBitsPerKey)

	// What is left for this table: the budget of every key live after the
	// write, less what the others spend and the rest of this output will
	// take at the same rate.
	left := budget*float64(totalKeys) - float64(spentBits) - bits*float64(rest)
	limit = min(left/float64(n), monkeyMaxBitsPerKey)
	return min(bits, max(limit, monkeyMinBitsPerKey)), max(limit, monkeyMinBitsPerKey)
}
