package main

import (
	"io"
	"testing"
)

// sizeRecorder is a sievekv engine that records the value sizes it is
// given.
type sizeRecorder struct {
	*sieveEngine
	sizes map[int]int
}

func (e *sizeRecorder) set(k, v []byte) error {
	e.sizes[len(v)]++
	return e.sieveEngine.set(k, v)
}

// TestFillLargeWritesLargeValues: filllarge writes largeFillOps keys, all
// with largeValueSize-byte values, into a DB of its own, and its space amp
// is over those bytes (about the compression's 0.6, not 20x for counting
// them as the run's 100-byte values).
func TestFillLargeWritesLargeValues(t *testing.T) {
	c := config{memTableSize: 1 << 20, blockSize: 4096, cacheSize: 1 << 20, bloomBits: 10}
	rec := &sizeRecorder{sizes: map[int]int{}}
	r := &runner{name: "sievekv", io: &ioCounters{}, owner: true, keySize: 16, valueSize: 100,
		open: func(dir string, io *ioCounters) (engine, error) {
			c.dir = dir
			e, err := openSieve("sievekv", c, io)
			rec.sieveEngine = e
			return rec, err
		}}
	ks := newKeySet(1, 30_000, 16)
	fl := &flags{ops: 100, seed: 1}
	res, err := runWorkload(r, "filllarge", ks, fl, t.TempDir(), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	want := largeFillOps(len(ks.present))
	if len(rec.sizes) != 1 || rec.sizes[largeValueSize] != want {
		t.Fatalf("value sizes written %v, want %d of %d bytes", rec.sizes, want, largeValueSize)
	}
	if len(res) != 1 || res[0].SpaceAmp <= 0 || res[0].SpaceAmp > 2 {
		t.Fatalf("results %+v: want one, with a space amp over the 4 KiB values", res)
	}
}
