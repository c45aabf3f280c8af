package kv

import (
	"fmt"
	"math"
	"slices"
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

// levelDeficit is what a level's rewrites will need beyond what its live
// tables spend: its keys at the cost of the widest filter its share buys
// at its mean table size (filters.FingerprintBitsPerKey), less their
// filters' payload bits; 0 where they spend that or more. A level table
// keeps its filter, and a table written short (while the tree was
// smaller, at a smaller share, or in a shortfall) wants its width back
// when it is rewritten; the runs Monkey favours beyond the budget (L0
// tables, upper levels) must leave it those bits, or a bottom rewrite
// gets what remains: 1- to 5-bit filters next to 9-bit ones (FP 0.5
// against 0.002), costing more reads than the favoured runs saved.
//
// It replaces a fixed reserve of a quarter bit per live key, which
// measured right on small tables (BenchmarkFilterBudgetLiveShape) but on
// kvbench's 1M-key tree, with every level at its width, held 250k bits
// unspent that the three L0 tables needed: they got 9.3 to 10.9 bits per
// key where their share was 14, and read 0.0034 to 0.0059 of a Get's
// 0.0062 to 0.0082 block reads.
func levelDeficit(keys uint64, tables int, spent uint64, share float64) float64 {
	if keys == 0 || tables == 0 {
		return 0
	}
	mean := int(keys / uint64(tables))
	var want float64
	for w := 1; w <= filters.MaxTableFingerprintBits; w++ {
		if b := filters.FingerprintBitsPerKey(mean, w); b <= share {
			want = b
		}
	}
	return max(0, want*float64(keys)-float64(spent))
}

// filterBudget is FilterAuto's account of the filter memory budget (keeps
// K10): the bits per key each new table gets, so that the filters of the
// live tables plus those being written stay within FilterBitsPerKey times
// their keys (plus a fixed header per table).
type filterBudget struct {
	mu sync.Mutex
	// pending holds the tables built but not yet seen in the current
	// version, by file number: a flush and a compaction writing at once
	// must not both spend the same spare bits. An entry goes once its
	// table is in the version or is given up (an error in writeTables, a
	// failed edit: removeFiles); an entry left would count keys no live
	// table holds. Guarded by mu.
	pending map[uint64]pendingFilter
	// active are the outputs being written, and a compaction's until its
	// edit is installed. Until then its inputs are still in the version
	// and stand in for its outputs, so the others count its inputs, not
	// its pending tables: counting both starved every flush made during a
	// long compaction (measured: L0 tables at 2.8 bits per key next to a
	// 10-bit L6), and, while a compaction that had written its tables
	// logged its edit, gave a flush a 1-bit Bloom filter. Guarded by mu.
	active map[*filterTarget]bool
	// version is d.current as last installed. The chooser reads it without
	// DB.mu, which a recovery flush holds while it writes; a version is
	// immutable once published, so a stale one is only a shape slightly
	// out of date.
	version atomic.Pointer[manifest.Version]
	// flushKeys is the largest flush table chosen for since Open: the size
	// of the L0 runs to come, which a compaction's budget must leave room
	// for even when it empties L0. Guarded by mu.
	flushKeys uint64
}

// pendingFilter is a built table's filter not yet in the version: its
// payload bits and the keys it holds, whose budget it spends.
type pendingFilter struct {
	bits, keys uint64
	job        *filterTarget
}

// begin and end bracket an output's life before its edit: begin returns
// the account of the tables to level that replace inputs, and end closes
// it once they are in the version or will never be.
func (b *filterBudget) begin(level int, inputs []levelTable) *filterTarget {
	target := newFilterTarget(level, inputs)
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.active == nil {
		b.active = map[*filterTarget]bool{}
	}
	b.active[target] = true
	return target
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
	// Guarded by filterBudget.mu.
	writtenKeys uint64
	// plannedBits is what the whole output will spend as of its last
	// table: the payloads chosen so far plus the rest of its keys at the
	// share that table got. Guarded by filterBudget.mu.
	plannedBits uint64
	// writtenBits sums the payloads chosen so far, over writtenTables
	// tables. Guarded by filterBudget.mu.
	writtenBits   uint64
	writtenTables int
}

// outputTables is how many tables t's whole output will have: its inputs'
// count until it has written one, then its keys at the mean size of those
// written. REQUIRES: filterBudget.mu held.
func (t *filterTarget) outputTables() int {
	if t.writtenTables == 0 || t.writtenKeys == 0 {
		return len(t.inputs)
	}
	mean := float64(t.writtenKeys) / float64(t.writtenTables)
	return max(t.writtenTables, int(math.Ceil(float64(t.inputKeys)/mean)))
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

// forget drops the pending entries of tables given up before any edit
// installed them.
func (b *filterBudget) forget(nums ...uint64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, n := range nums {
		delete(b.pending, n)
	}
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
		// The filter widths are steps: pricing each bit at what it saves
		// at the share picks the width within the limit that pays, and
		// where the limit exceeds the share (a full compaction, or a level
		// table with bits no favoured run claims) rounds up where that
		// pays, as the continuous optimum would.
		var limit float64
		var roundUp bool
		share, limit, roundUp = c.d.monkeyBits(c.target, c.num, uint64(n))
		if !roundUp {
			limit = share
		}
		choose := filters.ChooseTableFilterPriced
		if share > c.d.opts.FilterBitsPerKey {
			// Bits beyond the budget were moved here to buy FP rate;
			// a probe-time discount must not sell them back
			// (filters.ChooseTableFilterLowestFP).
			choose = filters.ChooseTableFilterLowestFP
		}
		choice, err = choose(n, limit, filters.MarginalBitValue(share, bitsPerFPHalving))
	} else {
		choice, err = filters.ChooseTableFilter(n, c.d.opts.FilterBitsPerKey)
	}
	if err != nil {
		return nil, fmt.Errorf("kv: table %06d: %w", c.num, err)
	}
	if c.d.opts.FilterAllocation == FilterAllocationMonkey {
		b := &c.d.filterBudget
		b.mu.Lock()
		c.target.writtenKeys += uint64(n)
		c.target.writtenTables++
		if b.pending == nil {
			b.pending = map[uint64]pendingFilter{}
		}
		b.pending[uint64(c.num)] = pendingFilter{choice.PayloadBits, uint64(n), c.target}
		t := c.target
		if t.level == 0 && len(t.inputs) == 0 {
			b.flushKeys = max(b.flushKeys, uint64(n))
		}
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
// is writing: share, Monkey's share for its run in the shape the tree
// settles into (monkeyShape), and limit, what the budget has left for it
// once every other live or pending table is paid for and the rest of this
// output is set aside; and roundUp, whether the table may spend up to
// limit rather than share.
func (d *DB) monkeyBits(target *filterTarget, num fileNum, n uint64) (share, limit float64, roundUp bool) {
	budget := d.opts.FilterBitsPerKey
	replaced := make(map[uint64]bool, len(target.inputs))
	for _, in := range target.inputs {
		replaced[in.meta.FileNum] = true
	}

	d.filterBudget.mu.Lock()
	defer d.filterBudget.mu.Unlock()
	var (
		shape     monkeyShape
		totalKeys uint64
		spentBits uint64
		// levelTables and levelSpent count each level's live tables and
		// what their filters spend.
		levelTables [NumLevels]int
		levelSpent  [NumLevels]uint64
		inVersion   = map[uint64]bool{}
	)
	shape.flushKeys = d.filterBudget.flushKeys
	var levels [NumLevels][]*manifest.TableMetadata
	if v := d.filterBudget.version.Load(); v != nil {
		levels = v.Levels
	}
	for _, ts := range levels {
		for _, t := range ts {
			inVersion[t.FileNum] = true
		}
	}
	// Other compactions whose edit has not landed (writing, or logging
	// their edit): their inputs, still in the version, stand in for
	// their outputs in the budget; in the shape their keys are already in
	// the output level, as they will be for the whole life of the table
	// being chosen. Seen where they are, a flush during an L0 -> L6
	// compaction counted the compaction's L0 inputs as runs beside it and
	// the bottom without their keys, and got a 9-bit filter where its
	// share once the compaction landed was 11 bits.
	var landing []*filterTarget
	landingInput := map[uint64]bool{}
	for job := range d.filterBudget.active {
		if job == target || len(job.inputs) == 0 || !inVersion[job.inputs[0].meta.FileNum] {
			continue
		}
		landing = append(landing, job)
		for _, in := range job.inputs {
			landingInput[in.meta.FileNum] = true
		}
	}
	for l, ts := range levels {
		for _, t := range ts {
			if replaced[t.FileNum] {
				continue
			}
			k := tableKeys(t)
			totalKeys += k
			spentBits += filterPayloadBits(t)
			switch {
			case landingInput[t.FileNum]:
			case l == 0:
				shape.l0 = append(shape.l0, k)
			default:
				shape.levels[l] += k
				levelTables[l]++
				levelSpent[l] += filterPayloadBits(t)
			}
		}
	}
	for f, p := range d.filterBudget.pending {
		switch {
		case inVersion[f]:
			delete(d.filterBudget.pending, f)
		case f == uint64(num):
		case slices.Contains(landing, p.job):
			// Its inputs count.
		case p.job == target:
			// This output's keys are counted with it, below.
			spentBits += p.bits
		default:
			// Its keys bring their budget as its bits spend it: counting
			// the bits alone took a whole table's budget from every
			// output written meanwhile (a compaction's last table in
			// L6 got 1 bit per key while a flush logged its edit).
			spentBits += p.bits
			totalKeys += p.keys
		}
	}
	// A landing compaction's inputs stand in for its outputs only up to
	// what they spend: where its outputs will spend more (a level given a
	// larger share than its inputs had), the difference is taken too, or
	// a flush written meanwhile would spend it a second time.
	for _, job := range landing {
		var inputBits uint64
		for _, in := range job.inputs {
			inputBits += filterPayloadBits(in.meta)
		}
		outputBits := max(job.plannedBits, inputBits)
		spentBits += outputBits - inputBits
		if job.level == 0 {
			shape.l0 = append(shape.l0, job.inputKeys)
			continue
		}
		shape.levels[job.level] += job.inputKeys
		levelTables[job.level] += job.outputTables()
		levelSpent[job.level] += outputBits
	}

	// The output's run: a new L0 table, or its level with the whole
	// output in it (the inputs' keys bound what is still to come).
	outputKeys := max(target.inputKeys, target.writtenKeys+n)
	rest := outputKeys - target.writtenKeys - n
	totalKeys += outputKeys
	liveLevels := shape.levels
	if target.level == 0 {
		shape.flushKeys = max(shape.flushKeys, n)
	} else {
		shape.levels[target.level] += outputKeys
	}
	runs, targetRun := shape.runs(target.level, n, d.opts.L0CompactionThreshold, float64(d.picker.Opts.LevelMultiplier))
	bits := monkeyBitsPerKey(runs, targetRun, budget, monkeyMinBitsPerKey, monkeyMaxBitsPerKey)
	avail := budget*float64(totalKeys) - float64(spentBits)
	if bits > budget {
		// A run favoured beyond the budget takes its extra bits only from
		// what is left over the levels' deficit, which their rewrites
		// draw on (levelDeficit); up to the budget itself it may always
		// go, as a uniform allocation would.
		var deficit float64
		for l := 1; l < NumLevels; l++ {
			if l == target.level || levelTables[l] == 0 {
				continue
			}
			// The share a rewrite of level l will get: a level output's.
			levelRuns, run := shape.runs(l, 0, d.opts.L0CompactionThreshold, float64(d.picker.Opts.LevelMultiplier))
			levelShare := monkeyBitsPerKey(levelRuns, run, budget, monkeyMinBitsPerKey, monkeyMaxBitsPerKey)
			deficit += levelDeficit(liveLevels[l], levelTables[l], levelSpent[l], levelShare)
		}
		reserved := avail - deficit
		avail = max(reserved, min(avail, budget*float64(n+rest)))
	}
	share, limit = budgetLimit(bits, avail, n, rest)
	// While other runs are live, no table spends beyond its share: the
	// favoured runs live on the bits the bottom level leaves, and at small
	// tables a 9-bit Ribbon costs 9.9 bits per key against a bottom share
	// of 9.4, so rounding every bottom table up spent all the bits Monkey
	// moves and L0 and the upper levels stayed at the budget; and a
	// favoured run rounding up took them first come first served (the
	// first of six flushes took a 16-bit fuse at 23.6 bits per key against
	// its 17.8 for a faster probe, the last got 10). docs/design.md,
	// "Filter budget". An output that replaces every live table (a full
	// compaction) leaves no run to spend them on and may round up, and so
	// may a level table into what the favoured runs will not claim.
	if bits <= budget && totalKeys == outputKeys {
		return share, limit, true
	}
	if target.level > 0 && bits <= budget {
		// A level table held at its share leaves bits that only the
		// favoured runs can use; where the budget has more than they
		// will claim, the table may round up into the excess.
		// Measured against what a uniform allocation would spend: the
		// budget less what a whole width wastes at this table's size.
		uniform := levelDeficit(n, 1, 0, budget) / float64(n)
		claim := d.favouredClaim(&shape, uniform, n, target.level, liveLevels, levelTables, levelSpent)
		unspendable := (budget - uniform) * float64(totalKeys)
		if _, spare := budgetLimit(bits, avail-claim-unspendable, n, rest); spare > share {
			return share, spare, true
		}
	}
	return share, limit, false
}

// favouredClaim is what the runs Monkey favours beyond the budget, other
// than outLevel, will still take beyond it: the L0 tables a flush will add
// before L0 reaches its compaction trigger (each a flush's keys at the
// widest filter the L0 share buys, less the budget their keys bring), and
// each favoured level's deficit (levelDeficit). A level table rounding up
// into the bits beyond this claim takes nothing those runs would use;
// held to its share instead, a bottom table written while L0 was empty
// left them unspent when L0 stayed empty: a tree read with no L0 table
// spent 1.16 bits per budget bit-per-key under Monkey against uniform's
// 1.24 and read 1.33x as often, its bottom at 8-bit Ribbons (FP 0.0038)
// where uniform's were 9-bit.
func (d *DB) favouredClaim(shape *monkeyShape, base float64, tableSize uint64, outLevel int, liveLevels [NumLevels]uint64, levelTables [NumLevels]int, levelSpent [NumLevels]uint64) float64 {
	budget := d.opts.FilterBitsPerKey
	trigger := d.opts.L0CompactionThreshold
	mult := float64(d.picker.Opts.LevelMultiplier)
	var claim float64
	if shape.flushKeys > 0 {
		runs, run := shape.runs(0, shape.flushKeys, trigger, mult)
		if l0Share := monkeyBitsPerKey(runs, run, budget, monkeyMinBitsPerKey, monkeyMaxBitsPerKey); l0Share > budget {
			// As many as L0 may hold before writes stop: a compaction
			// running long, or none running, lets it grow past its
			// trigger, and each of those tables wants its share.
			tables := d.opts.L0StopWritesThreshold
			keys := uint64(tables) * shape.flushKeys
			claim += levelDeficit(keys, tables, uint64(base*float64(keys)), l0Share)
		}
	}
	settled := settledLevels(shape.levels, outLevel, mult)
	for l := 1; l < NumLevels; l++ {
		keys := max(liveLevels[l], settled[l])
		if l == outLevel || keys == 0 {
			continue
		}
		runs, run := shape.runs(l, 0, trigger, mult)
		levelShare := monkeyBitsPerKey(runs, run, budget, monkeyMinBitsPerKey, monkeyMaxBitsPerKey)
		if levelShare <= budget {
			continue
		}
		// The level as it settles, in tables of its live mean size (or
		// this table's, with the level empty for the moment).
		tableKeys := tableSize
		if levelTables[l] > 0 {
			tableKeys = max(1, liveLevels[l]/uint64(levelTables[l]))
		}
		tables := int((keys + tableKeys - 1) / tableKeys)
		claim += levelDeficit(keys, tables, uint64(base*float64(keys)), levelShare)
		claim += levelDeficit(liveLevels[l], max(1, levelTables[l]), levelSpent[l], levelShare)
	}
	return claim
}

// budgetLimit caps share, the bits per key an n-key table of an output
// with rest keys still to come would get, by avail, the bits the budget
// has left for the table and the rest (keeps K10). Where avail covers the
// rest at share, the table may spend what lies beyond it (limit > share:
// the priced choice rounds up where that pays); where it does not, the
// shortfall is spread over the whole remaining output. Taking it all from
// the one table being chosen starved single tables down to 1-bit filters
// (measured: a 1-bit Ribbon in L6, FP 0.5, next to 9-bit ones), and since
// FP rates fall exponentially in bits, an even cut costs far fewer reads.
func budgetLimit(share, avail float64, n, rest uint64) (float64, float64) {
	limit := (avail - share*float64(rest)) / float64(n)
	if limit < share {
		limit = avail / float64(n+rest)
	}
	limit = min(max(limit, monkeyMinBitsPerKey), monkeyMaxBitsPerKey)
	return min(share, limit), limit
}
