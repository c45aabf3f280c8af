package tests

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/sievekv/sievekv/internal/testutil"
	"github.com/sievekv/sievekv/kv"
)

// The reliability tests share one workload: W writers, each owning the keys
// "w<w>/..." and committing a deterministic sequence of batches, so that
// batch i of writer w is a pure function of (seed, w, i). A crashed run is
// then judged per writer: its keys must equal the model after exactly k of
// its batches, for some k in an allowed window (acknowledged <= k <= the
// one in flight). A batch applied in part matches no k, a lost
// acknowledged batch gives a k too small, a phantom write one too large.

// wlOp is one write of a generated batch.
type wlOp struct {
	del        bool
	key, value string
}

// wlConfig shapes the generated batches.
type wlConfig struct {
	seed     uint64
	writers  int
	keys     int // keys per writer
	maxOps   int // writes per batch, 1..maxOps
	maxValue int // value padding, 0..maxValue bytes
	// noSyncPct is the percentage of batches written with kv.NoSync.
	noSyncPct int
}

// batch returns batch i of writer w and whether it is to be written with
// kv.Sync (most are; the rest use NoSync, whose promise depends on the
// kind of crash).
func (c wlConfig) batch(w, i int) (ops []wlOp, sync bool) {
	r := rand.New(rand.NewPCG(c.seed, uint64(w)<<40|uint64(i)))
	n := 1 + r.IntN(c.maxOps)
	for j := 0; j < n; j++ {
		k := fmt.Sprintf("w%d/k%05d", w, r.IntN(c.keys))
		if r.IntN(5) == 0 {
			ops = append(ops, wlOp{del: true, key: k})
			continue
		}
		pad := strings.Repeat(string(rune('a'+r.IntN(26))), r.IntN(c.maxValue+1))
		ops = append(ops, wlOp{key: k, value: fmt.Sprintf("w%d-b%d-o%d-%s", w, i, j, pad)})
	}
	return ops, r.IntN(100) >= c.noSyncPct
}

// apply commits batch i of writer w to d.
func (c wlConfig) apply(d *kv.DB, w, i int) error {
	ops, sync := c.batch(w, i)
	b := d.NewBatch()
	for _, op := range ops {
		if op.del {
			b.Delete([]byte(op.key))
		} else {
			b.Set([]byte(op.key), []byte(op.value))
		}
	}
	opts := kv.NoSync
	if sync {
		opts = kv.Sync
	}
	return d.Apply(b, opts)
}

// wlModel is the expected state of every writer's keys after applied[w]
// of its batches.
type wlModel struct {
	cfg     wlConfig
	applied []int
	state   []map[string]string
}

func newModel(cfg wlConfig) *wlModel {
	m := &wlModel{cfg: cfg, applied: make([]int, cfg.writers), state: make([]map[string]string, cfg.writers)}
	for w := range m.state {
		m.state[w] = map[string]string{}
	}
	return m
}

func applyOps(st map[string]string, ops []wlOp) {
	for _, op := range ops {
		if op.del {
			delete(st, op.key)
		} else {
			st[op.key] = op.value
		}
	}
}

// readAll scans the whole DB into per-writer maps.
func readAll(d *kv.DB, writers int) ([]map[string]string, error) {
	out := make([]map[string]string, writers)
	for w := range out {
		out[w] = map[string]string{}
	}
	it := d.NewIter(nil)
	for ok := it.First(); ok; ok = it.Next() {
		k := string(it.Key())
		var w int
		if _, err := fmt.Sscanf(k, "w%d/", &w); err != nil || w < 0 || w >= writers {
			it.Close()
			return nil, fmt.Errorf("unexpected key %q in the DB", k)
		}
		out[w][k] = string(it.Value())
	}
	return out, it.Close()
}

// verify checks d against the model: for each writer, its keys must equal
// the model after k batches for some k in [lo[w], hi[w]]; lo[w] must not be
// below what the model has already applied. On success the model advances
// to the k found, which verify returns. Point Gets of every key the
// writer ever touched must agree with the scan.
func (m *wlModel) verify(t *testing.T, d *kv.DB, lo, hi []int) []int {
	t.Helper()
	got, err := readAll(d, m.cfg.writers)
	if err != nil {
		t.Fatalf("scan after crash: %v", err)
	}
	found := make([]int, m.cfg.writers)
	for w := range m.cfg.writers {
		if lo[w] < m.applied[w] {
			t.Fatalf("writer %d: window starts at %d but %d batches were already verified present", w, lo[w], m.applied[w])
		}
		st := m.state[w]
		for ; m.applied[w] < lo[w]; m.applied[w]++ {
			ops, _ := m.cfg.batch(w, m.applied[w])
			applyOps(st, ops)
		}
		trial := maps.Clone(st)
		k := -1
		for i := lo[w]; ; i++ {
			if maps.Equal(trial, got[w]) {
				k = i
				break
			}
			if i >= hi[w] {
				break
			}
			ops, _ := m.cfg.batch(w, i)
			applyOps(trial, ops)
		}
		if k < 0 {
			near, nearState := m.nearest(w, st, got[w], lo[w], hi[w])
			t.Fatalf("writer %d: DB state matches the model after no k in [%d, %d] batches; nearest is k = %d:\n%s",
				w, lo[w], hi[w], near, diffStates(nearState, got[w]))
		}
		m.applied[w], m.state[w], found[w] = k, trial, k
		for key := range m.cfg.keys {
			key := fmt.Sprintf("w%d/k%05d", w, key)
			v, err := d.Get([]byte(key))
			want, ok := trial[key]
			switch {
			case ok && (err != nil || string(v) != want):
				t.Fatalf("Get(%s) = %q, %v; scan and model say %q", key, v, err, want)
			case !ok && err != kv.ErrNotFound:
				t.Fatalf("Get(%s) = %q, %v; want ErrNotFound", key, v, err)
			}
		}
	}
	return found
}

// nearest returns the k in [lo, hi] whose model state (st is the state
// after lo batches) differs from got in the fewest keys, and that state:
// the diff against it names the batch that was lost or half-applied,
// where a diff against the window's start would list every key the
// window's batches wrote as well.
func (m *wlModel) nearest(w int, st, got map[string]string, lo, hi int) (int, map[string]string) {
	trial := maps.Clone(st)
	best, bestState, bestDiff := lo, maps.Clone(st), -1
	for i := lo; ; i++ {
		if n := len(diffLines(trial, got)); bestDiff < 0 || n < bestDiff {
			best, bestState, bestDiff = i, maps.Clone(trial), n
		}
		if i >= hi {
			return best, bestState
		}
		ops, _ := m.cfg.batch(w, i)
		applyOps(trial, ops)
	}
}

// diffStates describes how got differs from a model state, for failure
// messages.
func diffStates(want, got map[string]string) string {
	lines := diffLines(want, got)
	if len(lines) > 20 {
		lines = append(lines[:20], fmt.Sprintf("  ... %d more", len(lines)-20))
	}
	return strings.Join(lines, "\n")
}

// diffLines is one sorted line per key where got differs from want.
func diffLines(want, got map[string]string) []string {
	var lines []string
	for k, v := range want {
		if g, ok := got[k]; !ok {
			lines = append(lines, fmt.Sprintf("  missing %s (model %.30q)", k, v))
		} else if g != v {
			lines = append(lines, fmt.Sprintf("  %s = %.30q, model %.30q", k, g, v))
		}
	}
	for k, g := range got {
		if _, ok := want[k]; !ok {
			lines = append(lines, fmt.Sprintf("  extra %s = %.30q", k, g))
		}
	}
	slices.Sort(lines)
	return lines
}

// soakCycles skips t unless SIEVEKV_SOAK is set (make soak), and returns
// n, or SIEVEKV_SOAK_CYCLES if set: the cycles of a cycle-based test's
// long form.
func soakCycles(t *testing.T, n int) int {
	testutil.SkipUnlessSoak(t)
	if v, err := strconv.Atoi(os.Getenv("SIEVEKV_SOAK_CYCLES")); err == nil && v > 0 {
		return v
	}
	return n
}

// shortOr is short under -short, else n: how many cycles a cycle-based
// test runs, in either form.
func shortOr(short, n int) int {
	if testing.Short() {
		return short
	}
	return n
}
