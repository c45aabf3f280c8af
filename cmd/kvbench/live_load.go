package main

import (
	"fmt"
	"io"
	"os"
	"strings"
)

// readmissing-live reads each engine's tree before any full compaction:
// L0 tables and levels, one filter probe per run. The tree fillrandom
// leaves is a product of background timing, not of the engine alone:
// how many flushes arrived while a compaction ran decides how many L0
// tables the last compaction took, so the same code left sievekv 0, 1 or
// more L0 tables on different runs (quick: reads per absent Get 0.0016
// with none, 0.0025 with one, 0.0035 with more, against Pebble's 0.0099),
// and the goal's verdict followed the count.
//
// So readmissing-live gets a DB of its own per engine, loaded with
// fillrandom's keys and values in fillrandom's order, untimed, in the
// same stated way for every engine: kvbench flushes the memtable after
// every liveFlushKeys keys and waits for the engine to settle (settle)
// before writing on. Each flush then meets a quiet tree, the engine's
// compaction policy alone decides what it compacts, and the tree is the
// same on every run; the tree each engine was read on is reported beside
// the result (EngineShape).

// liveFlushKeys is how many keys the live load writes between flushes:
// half of what a memtable of memTable bytes holds at kvLen bytes a key, so
// that no engine's own per-entry overhead makes it flush first.
func liveFlushKeys(memTable, kvLen int) int {
	return max(1, memTable/(2*kvLen))
}

// loadSettled writes ks's keys into r's engine as fillrandom does,
// flushing after every perFlush keys and settling after each flush.
func loadSettled(r *runner, ks *keySet, perFlush int) error {
	val := make([]byte, r.valueSize)
	n := len(ks.present)
	for i, k := range ks.present {
		if err := r.eng.set(k, valueFor(val, i)); err != nil {
			return fmt.Errorf("live load: set %d: %w", i, err)
		}
		if (i+1)%perFlush != 0 && i != n-1 {
			continue
		}
		if err := r.eng.flush(); err != nil {
			return fmt.Errorf("live load: flush: %w", err)
		}
		if err := settle(r); err != nil {
			return fmt.Errorf("live load: %w", err)
		}
	}
	r.live = n
	return nil
}

// runLiveReads runs readmissing-live: for every runner that reads it, in
// order, a fresh DB of its owner's engine loaded by loadSettled (a view
// reads its owner's), measured, and removed.
func runLiveReads(order []*runner, ks *keySet, fl *flags, root string, progress io.Writer) ([]result, error) {
	const w = "readmissing-live"
	perFlush := liveFlushKeys(fl.memTable, fl.keySize+fl.valueSize)
	loaded := map[engine]*runner{} // owner's main engine -> its live runner
	var cleanup []func() error
	defer func() {
		for _, c := range cleanup {
			c()
		}
	}()
	live := func(owner *runner) (*runner, error) {
		if lr := loaded[owner.eng]; lr != nil {
			return lr, nil
		}
		lr := *owner
		lr.io = &ioCounters{}
		lr.dir = dirOf(root, owner.name, "live")
		e, err := owner.open(lr.dir, lr.io)
		if err != nil {
			return nil, fmt.Errorf("%s: open: %w", owner.name, err)
		}
		lr.eng = e
		cleanup = append(cleanup, func() error {
			err := e.close()
			os.RemoveAll(lr.dir)
			return err
		})
		if err := loadSettled(&lr, ks, perFlush); err != nil {
			return nil, fmt.Errorf("%s: %w", owner.name, err)
		}
		loaded[owner.eng] = &lr
		return &lr, nil
	}
	var out []result
	for _, r := range order {
		if !r.runs(w) {
			continue
		}
		var rr runner
		switch v := r.eng.(type) {
		case pebbleL6View:
			owner := ownerOf(order, v.pebbleEngine)
			if owner == nil {
				return nil, fmt.Errorf("%s: no owner runner for the view", r.name)
			}
			lr, err := live(owner)
			if err != nil {
				return nil, err
			}
			rr = *r
			rr.eng, rr.io, rr.dir, rr.live = pebbleL6View{lr.eng.(*pebbleEngine)}, lr.io, lr.dir, lr.live
		default:
			lr, err := live(r)
			if err != nil {
				return nil, err
			}
			rr = *lr
		}
		ps, err := phases(w, &rr, ks, fl.ops, fl.seed)
		if err != nil {
			return nil, err
		}
		before := liveTreeOf(rr.eng)
		res, err := measure(&rr, ps[0], progress)
		if err != nil {
			return nil, fmt.Errorf("%s: %s: %w", r.name, w, err)
		}
		// The tree as the clock started; an engine may still compact
		// during the reads (Pebble's read-triggered compactions), and
		// then says so.
		res.EngineShape = before
		if after := liveTreeOf(rr.eng); after != before {
			res.EngineShape += " (by the end of the reads: " + after + ")"
		}
		out = append(out, res)
	}
	return out, nil
}

// ownerOf is the runner, among rs, whose engine is p.
func ownerOf(rs []*runner, p *pebbleEngine) *runner {
	for _, r := range rs {
		if e, ok := r.eng.(*pebbleEngine); ok && e == p {
			return r
		}
	}
	return nil
}

// liveTreeOf describes e's tree: sievekv's levelShape, with each level's
// filter bits and FP, or tablesShape.
func liveTreeOf(e engine) string {
	if s, ok := e.(*sieveEngine); ok {
		return levelShape(s.db.Metrics())
	}
	return tablesShape(e)
}

// tablesShape is an engine's table count per non-empty level ("L0 3t; L6
// 8t"), for engines that report it (levelReporter; "" otherwise).
func tablesShape(e engine) string {
	if v, ok := e.(pebbleL6View); ok {
		e = v.pebbleEngine
	}
	lr, ok := e.(levelReporter)
	if !ok {
		return ""
	}
	var parts []string
	for l, t := range lr.levelWrites().tables {
		if t > 0 {
			parts = append(parts, fmt.Sprintf("L%d %dt", l, t))
		}
	}
	return strings.Join(parts, "; ")
}
