package kv

import (
	"math"
	"testing"
)

// TestMonkeyFavouredTablesBuyFP builds the multi-level tree of
// TestMonkeyBeatsUniformOnEqualShape under Monkey and checks that the L0
// tables, which Monkey gives ~16 bits per key, spend them on FP rate: a
// 14-bit Ribbon (FP 2^-14) at 1,040 keys, not the 4-wise 12-bit fuse
// (FP 2^-12, 16.6 bits per key) the probe-time pricing preferred for its
// 16 ns faster probe, which left those tables 4x the FP the bits bought and
// made L0 half of what Monkey was short of its optimum in the budget
// sweep (docs/design.md, "Favoured tables buy FP rate").
func TestMonkeyFavouredTablesBuyFP(t *testing.T) {
	const keys, flushKeys, l0Left, gets = 100_000, 1040, 2, 10
	r := fillEqualShape(t, Options{FilterAllocation: FilterAllocationMonkey, LBaseMaxBytes: 1 << 20}, 5, keys, flushKeys, l0Left, gets)
	t.Logf("monkey: %.5f predicted, L0 %d tables FP %.6f,%s", r.predicted, r.l0Tables, r.l0FP, r.shape)
	if r.l0Tables != l0Left {
		t.Fatalf("L0 holds %d tables, want %d", r.l0Tables, l0Left)
	}
	if perTable := r.l0FP / float64(r.l0Tables); perTable > math.Ldexp(1, -14) {
		t.Fatalf("an L0 table's filter predicts FP %.6f at Monkey's share, want <= 2^-14 = %.6f", perTable, math.Ldexp(1, -14))
	}
}
