package main

// The scan workloads' loaded trees: what each DB held when its load ended,
// and the check that every sievekv DB of a workload (sievekv, sievekv-rf,
// sievekv-notsi differ only in table options) holds the same tables, so
// that their scans are compared on the same tree.

import (
	"errors"
	"fmt"
	"hash/fnv"
	"strings"

	"github.com/sievekv/sievekv/kv"
)

// errScanTreesDiffer: two sievekv DBs of one scan workload ended their
// load with different trees, so their scans would not be comparable.
var errScanTreesDiffer = errors.New("scan DBs loaded different trees")

// loadedTree is one scan DB's tree as its load ended.
type loadedTree struct {
	engine, workload string
	// levels is the per-level shape: tables, entries and key range.
	levels string
	// fingerprint hashes every table's level, bounds and entry count.
	fingerprint uint64
}

func (t loadedTree) String() string {
	return fmt.Sprintf("%s %s tree: %s (tables fingerprint %016x)", t.engine, t.workload, t.levels, t.fingerprint)
}

// treeOf describes the tables a sievekv DB holds.
func treeOf(db *kv.DB) (levels string, fingerprint uint64, err error) {
	tables, err := db.Tables()
	if err != nil {
		return "", 0, fmt.Errorf("list tables: %w", err)
	}
	type levelSum struct {
		tables            int
		entries           uint64
		smallest, largest []byte
	}
	var sums [kv.NumLevels]levelSum
	h := fnv.New64a()
	for _, t := range tables {
		fmt.Fprintf(h, "%d %q %q %d\n", t.Level, t.Smallest, t.Largest, t.Entries)
		ls := &sums[t.Level]
		if ls.tables == 0 || string(t.Smallest) < string(ls.smallest) {
			ls.smallest = t.Smallest
		}
		if ls.tables == 0 || string(t.Largest) > string(ls.largest) {
			ls.largest = t.Largest
		}
		ls.tables++
		ls.entries += t.Entries
	}
	var parts []string
	for l, ls := range sums {
		if ls.tables > 0 {
			parts = append(parts, fmt.Sprintf("L%d %dt %de [%s, %s]", l, ls.tables, ls.entries, ls.smallest, ls.largest))
		}
	}
	return strings.Join(parts, "; "), h.Sum64(), nil
}

// treeLog holds the trees the scan loads of this process left, in load
// order. The loads run one at a time (runTogether and runScanPair are
// sequential), so it needs no lock.
type treeLog struct{ trees []loadedTree }

var scanTrees treeLog

// check records r's tree after the load of w and fails if another
// sievekv DB of w ended with a different one. Engines other than sievekv
// are not described.
func (l *treeLog) check(r *runner, w string) error {
	s, ok := r.eng.(*sieveEngine)
	if !ok {
		return nil
	}
	levels, fp, err := treeOf(s.db)
	if err != nil {
		return err
	}
	t := loadedTree{engine: r.name, workload: w, levels: levels, fingerprint: fp}
	for _, o := range l.trees {
		if o.workload == w && o.fingerprint != t.fingerprint {
			return fmt.Errorf("%w: %s; %s", errScanTreesDiffer, o, t)
		}
	}
	l.trees = append(l.trees, t)
	return nil
}

// lines are the recorded trees of workload w, for the reports.
func (l *treeLog) lines(w string) []string {
	var out []string
	for _, t := range l.trees {
		if t.workload == w {
			out = append(out, t.String())
		}
	}
	return out
}
