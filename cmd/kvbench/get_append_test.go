//go:build !race

package main

import (
	"testing"
)

// TestSieveReadsAllocateNothing: sievekv's read workloads read through
// GetAppend into a buffer each reader keeps, so a Get of a present key
// costs the Go heap nothing (with Get, each one allocated its value's
// copy) and kvbench's alloc B/op column shows the engine, not its API's
// copy.
func TestSieveReadsAllocateNothing(t *testing.T) {
	c := config{dir: t.TempDir(), memTableSize: 1 << 20, blockSize: 4096, cacheSize: 8 << 20, bloomBits: 10}
	e, err := openSieve("sievekv", c, &ioCounters{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.close()
	ks := newKeySet(1, 1000, 16)
	val := make([]byte, 100)
	for _, k := range ks.present {
		if err := e.set(k, val); err != nil {
			t.Fatal(err)
		}
	}
	r := &runner{name: "sievekv", eng: e, io: &ioCounters{}, dir: c.dir, owner: true, keySize: 16, valueSize: 100}
	for _, w := range []string{"readrandom", "ycsb-c"} {
		ps, err := phases(w, r, ks, 100, 1)
		if err != nil || len(ps) == 0 {
			t.Fatalf("%s: %d phases, %v", w, len(ps), err)
		}
		op := ps[0].op
		op(0) // the reader's buffer grows once
		var found bool
		allocs := testing.AllocsPerRun(200, func() {
			_, found, err = op(0)
		})
		if err != nil || !found {
			t.Fatalf("%s: found %v, %v", w, found, err)
		}
		if allocs != 0 {
			t.Errorf("%s: %.1f allocations per Get of a present key, want 0", w, allocs)
		}
	}
}
