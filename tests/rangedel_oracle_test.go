package tests

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime/debug"
	"strconv"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	pebblevfs "github.com/cockroachdb/pebble/v2/vfs"

	"github.com/sievekv/sievekv/kv"
	"github.com/sievekv/sievekv/vfs"
)

// TestOracleDeleteRange is the differential test with range deletions:
// the oracle's random operations (writes, batches, reads, snapshots,
// long-lived iterators, flushes, compactions, reopens) interleaved with
// DeleteRange calls, alone and inside batches with point writes, on key
// spaces small enough that ranges cover live keys. Every read must agree
// with Pebble's.
func TestOracleDeleteRange(t *testing.T) {
	for _, c := range []oracleCase{
		{name: "tiny-mem", seed: 11, ops: 6000, keySpace: 64},
		{name: "mid-mem", seed: 12, ops: 6000, keySpace: 1000},
		{name: "mid-os", seed: 13, ops: 2000, keySpace: 300, osFS: true},
	} {
		if os.Getenv("SIEVEKV_SOAK") != "" {
			c.ops *= 20
		}
		if s, err := strconv.ParseUint(os.Getenv("SIEVEKV_ORACLE_SEED"), 10, 64); err == nil {
			c.seed = s
		}
		// The options are drawn from the seed as in TestOracleAgainstPebble,
		// so range tombstones meet every filter, block size and cache.
		c.opts = drawOptions(c.seed, c.osFS)
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			runRangeDelOracle(t, c)
		})
	}
}

func runRangeDelOracle(t *testing.T, c oracleCase) {
	p := &pair{t: t, c: c, rng: rand.New(rand.NewPCG(c.seed, 0x5eed))}
	p.oursFS, p.oursDir, p.pebFS, p.pebDir = oracleFileSystems(t, c.osFS)
	p.open()
	rangeDels := 0
	func() {
		defer func() {
			if r := recover(); r != nil {
				p.fatalf("panic: %v\n%s", r, debug.Stack())
			}
		}()
		for ; p.step < c.ops && !t.Failed(); p.step++ {
			switch r := p.rng.IntN(100); {
			case r < 4:
				p.deleteRange()
				rangeDels++
			case r < 7:
				p.batchWithDeleteRange()
				rangeDels++
			default:
				p.randomOp()
			}
		}
	}()
	p.closeAll()
	if p.flushes == 0 || p.compactions == 0 || rangeDels == 0 {
		t.Fatalf("%d flushes, %d compactions, %d range deletions: the sequence did not exercise them", p.flushes, p.compactions, rangeDels)
	}
	t.Logf("%d ops, %d range deletions, %d flushes, %d compactions", c.ops, rangeDels, p.flushes, p.compactions)
}

// oracleFileSystems gives each engine a fresh file system of the kind the
// case asks for.
func oracleFileSystems(t *testing.T, osFS bool) (vfs.FS, string, pebblevfs.FS, string) {
	if !osFS {
		return vfs.NewMem(), "db", pebblevfs.NewMem(), "db"
	}
	root := t.TempDir()
	return vfs.Default, root + "/sievekv", pebblevfs.Default, root + "/pebble"
}

// keyRange draws [lo, hi) with lo < hi, usually a short range of the key
// space and sometimes a wide one.
func (p *pair) keyRange() (lo, hi []byte) {
	for {
		// Never the empty key: Pebble v2.1.7's range-deletion fragment
		// iterator trips its own invariant checks (on under -race) over a
		// range starting at it; kv's tests cover the empty start.
		lo, hi = p.nonEmptyKey(), p.nonEmptyKey()
		if p.rng.IntN(3) > 0 && len(lo) > 3 {
			// A nearby end, so most ranges delete a few keys, not half.
			hi = []byte(fmt.Sprintf("%s%d", lo[:len(lo)-1], p.rng.IntN(10)))
		}
		switch c := bytes.Compare(lo, hi); {
		case c < 0:
			return lo, hi
		case c > 0:
			return hi, lo
		}
	}
}

func (p *pair) deleteRange() {
	lo, hi := p.keyRange()
	p.sameErr("DeleteRange", p.ours.DeleteRange(lo, hi, kv.NoSync), p.peb.DeleteRange(lo, hi, pebble.NoSync))
}

func (p *pair) batchWithDeleteRange() {
	bo, bp := p.ours.NewBatch(), p.peb.NewBatch()
	for range 1 + p.rng.IntN(6) {
		switch p.rng.IntN(3) {
		case 0:
			lo, hi := p.keyRange()
			bo.DeleteRange(lo, hi)
			if err := bp.DeleteRange(lo, hi, nil); err != nil {
				p.fatalf("pebble batch DeleteRange: %v", err)
			}
		case 1:
			k := p.key()
			bo.Delete(k)
			if err := bp.Delete(k, nil); err != nil {
				p.fatalf("pebble batch Delete: %v", err)
			}
		default:
			k, v := p.key(), p.value()
			bo.Set(k, v)
			if err := bp.Set(k, v, nil); err != nil {
				p.fatalf("pebble batch Set: %v", err)
			}
		}
	}
	p.sameErr("Apply", p.ours.Apply(bo, kv.NoSync), bp.Commit(pebble.NoSync))
}
