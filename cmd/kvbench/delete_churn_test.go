package main

import (
	"io"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestKVBenchDeleteChurn runs deletechurn end to end on a tiny DB: each
// engine but goleveldb loads a churn DB of its own and runs the whole
// churn (and answers every key right afterwards, or the run fails), the
// pair and the control run it in one interleave, every result carries
// its write and space amp, and the header, the goal row and the notes
// line say what was measured.
func TestKVBenchDeleteChurn(t *testing.T) {
	out, rs := runPairTiny(t, "sievekv,sievekv-notsi,sievekv-control,pebble,goleveldb", "deletechurn")
	if !strings.Contains(out, "deletechurn: sievekv and sievekv-notsi each load a DB of their own and run the same churn in alternating chunks") ||
		!strings.Contains(out, "deletechurn: a DB of its own per engine, memtable 16384 B") {
		t.Errorf("the header does not say how deletechurn runs:\n%s", out)
	}
	if !strings.Contains(out, "deletechurn: table bytes written with the tombstone index <= 0.95x without (sievekv-notsi, paired: alternating chunks): write amp ") ||
		!strings.Contains(out, "A/A against sievekv-control: write amp") {
		t.Errorf("no goal row for deletechurn:\n%s", out)
	}
	if !strings.Contains(out, "tombstone index on/off, deletechurn: write amp ") || !strings.Contains(out, "), values dropped early ") {
		t.Errorf("no notes line for deletechurn:\n%s", out)
	}
	if !strings.Contains(out, "values dropped early by compaction (Metrics.Compaction.ShadowedDropped): sievekv ") {
		t.Errorf("the workload's table does not say what early drop did:\n%s", out)
	}
	for _, e := range []string{"sievekv", "sievekv-notsi", "sievekv-control", "pebble"} {
		r := find(rs, "deletechurn", e)
		if r == nil || r.Ops != 3000 || r.OpsPerSec <= 0 || r.WriteAmp <= 0 || r.SpaceAmp <= 0 || len(r.LevelBytesWritten) == 0 {
			t.Errorf("%s: %+v", e, r)
			continue
		}
		if paired := e != "pebble"; paired != (r.PairedWith != "") || len(r.ChunkSeconds) == 0 {
			t.Errorf("%s: paired with %q over %d chunks", e, r.PairedWith, len(r.ChunkSeconds))
		}
		// The churn ends compacted to one level: no engine leaves work due.
		levels := 0
		for _, n := range r.LevelTablesAfter {
			if n > 0 {
				levels++
			}
		}
		if levels != 1 {
			t.Errorf("%s: tables per level after the churn %v, want one level", e, r.LevelTablesAfter)
		}
	}
	on, off := find(rs, "deletechurn", "sievekv"), find(rs, "deletechurn", "sievekv-notsi")
	if on != nil && off != nil && (on.EngineShape == "" || off.EngineShadowChecks != 0 || off.EngineShadowedDropped != 0) {
		t.Errorf("the index off looked keys up or dropped values, or the pair has no shape: %+v / %+v", on, off)
	}
	if find(rs, "deletechurn", "goleveldb") != nil {
		t.Error("goleveldb ran deletechurn")
	}
}

// TestChurnOps: the churn is the same for a seed, about half deletes, and
// its live count is what replaying it gives.
func TestChurnOps(t *testing.T) {
	const n = 5000
	ops, live := churnOps(n, 7)
	again, _ := churnOps(n, 7)
	other, _ := churnOps(n, 8)
	if len(ops) != n || ops[0] != again[0] || ops[n-1] != again[n-1] || (ops[0] == other[0] && ops[1] == other[1]) {
		t.Fatalf("the churn is not a function of the seed: %v %v %v", ops[:2], again[:2], other[:2])
	}
	state := make(map[int]bool, n)
	dels := 0
	for i := range n {
		state[i] = true
	}
	for _, op := range ops {
		state[op.key] = !op.del
		if op.del {
			dels++
		}
	}
	want := 0
	for _, l := range state {
		if l {
			want++
		}
	}
	if live != want || dels < n*45/100 || dels > n*55/100 {
		t.Errorf("live %d, replayed %d; %d deletes of %d", live, want, dels, n)
	}
}

// mapEngine keeps keys in a map: the churn's check against a store that
// answers exactly as written, and one made to lose or keep a key.
type mapEngine struct {
	engine
	m map[string]bool
}

func (e *mapEngine) set(k, _ []byte) error { e.m[string(k)] = true; return nil }
func (e *mapEngine) del(k []byte) error    { delete(e.m, string(k)); return nil }
func (e *mapEngine) get(k []byte) (bool, error) {
	return e.m[string(k)], nil
}

// TestCheckChurnCatchesWrongAnswers: the check after the churn passes on
// a store that did what the churn said, and fails when a live key is lost
// or a deleted one comes back.
func TestCheckChurnCatchesWrongAnswers(t *testing.T) {
	ks := newKeySet(1, 500, 16)
	ops, _ := churnOps(len(ks.present), 3)
	e := &mapEngine{m: map[string]bool{}}
	for _, k := range ks.present {
		e.set(k, nil)
	}
	for _, op := range ops {
		if op.del {
			e.del(ks.present[op.key])
		} else {
			e.set(ks.present[op.key], nil)
		}
	}
	if err := checkChurn(e, ks.present, ops); err != nil {
		t.Fatalf("a right store failed the check: %v", err)
	}
	var liveKey, deadKey []byte
	for _, k := range ks.present {
		if e.m[string(k)] {
			liveKey = k
		} else {
			deadKey = k
		}
	}
	e.del(liveKey)
	if err := checkChurn(e, ks.present, ops); err == nil || !strings.Contains(err.Error(), "wrong answers") {
		t.Errorf("a lost live key: %v", err)
	}
	e.set(liveKey, nil)
	e.set(deadKey, nil)
	if err := checkChurn(e, ks.present, ops); err == nil || !strings.Contains(err.Error(), "wrong answers") {
		t.Errorf("a deleted key come back: %v", err)
	}
}

// TestChurnWriteGoal: the goal is judged on the two write amps measured
// (at most 0.95x is met), says how the two were measured and what the
// control wrote, and is absent without both engines.
func TestChurnWriteGoal(t *testing.T) {
	mk := func(engine, pairedWith string, wa float64, dropped uint64) result {
		return result{Workload: "deletechurn", Engine: engine, PairedWith: pairedWith, WriteAmp: wa, EngineShadowedDropped: dropped}
	}
	for _, c := range []struct {
		name    string
		rs      []result
		met     bool
		contain string
	}{
		{"fewer bytes", []result{mk("sievekv", "sievekv-notsi", 5.4, 900), mk("sievekv-notsi", "sievekv", 6.0, 0)}, true, "write amp 5.400 vs 6.000 = 0.900x; values dropped early 900"},
		{"too few", []result{mk("sievekv", "sievekv-notsi", 5.82, 10), mk("sievekv-notsi", "sievekv", 6.0, 0)}, false, "= 0.970x"},
		{"control", []result{mk("sievekv", "sievekv-notsi", 5.4, 900), mk("sievekv-notsi", "sievekv", 6.0, 0), mk("sievekv-control", "sievekv", 5.5, 880)},
			true, "A/A against sievekv-control: write amp 5.500 = 0.982x"},
	} {
		g, ok := churnWriteGoal(c.rs)
		if !ok || !g.Known || g.Issue != "19" || g.Met != c.met || !strings.Contains(g.Measured, c.contain) || !strings.Contains(g.Goal, "paired") {
			t.Errorf("%s: %+v (%v)", c.name, g, ok)
		}
		if lines := churnLines(c.rs); len(lines) != 1 || !strings.HasPrefix(lines[0], "tombstone index on/off, deletechurn: write amp ") {
			t.Errorf("%s: notes %q", c.name, lines)
		}
	}
	if _, ok := churnWriteGoal([]result{mk("sievekv", "", 5.4, 900)}); ok {
		t.Error("a goal row without sievekv-notsi")
	}
}

// TestAfterChunkOffTheClock: a phase's afterChunk runs after every chunk,
// told where the chunk ended, and its time is not the phase's.
func TestAfterChunkOffTheClock(t *testing.T) {
	const ops, chunk = 40, 10
	var ends []int
	r := &runner{name: "sievekv", eng: idleEngine{}, io: &ioCounters{}, dir: t.TempDir(), owner: true, live: ops}
	p := phaseSpec{workload: "deletechurn", ops: ops, wantFound: noCheck,
		op: func(int) (int64, bool, error) { return 0, false, nil },
		afterChunk: func(hi int) error {
			ends = append(ends, hi)
			time.Sleep(20 * time.Millisecond)
			return nil
		}}
	rs, err := measureInterleaved([]*phaseMeter{{r: r, p: p}}, chunk, "", io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ends, []int{10, 20, 30, 40}) {
		t.Errorf("afterChunk saw chunk ends %v", ends)
	}
	if len(rs) != 1 || rs[0].ElapsedSec >= 0.08 {
		t.Errorf("the waits after the chunks were timed: %+v", rs)
	}
}
