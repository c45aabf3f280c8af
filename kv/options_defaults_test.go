package kv

import (
	"errors"
	"testing"
	"time"
)

// TestOptionsDocumentedDefaults pins the defaults and ranges that the
// Options field comments state, so a change of either shows up here and
// the comment is updated with it.
func TestOptionsDocumentedDefaults(t *testing.T) {
	o, err := (*Options)(nil).withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name      string
		got, want any
	}{
		{"MemTableSize", o.MemTableSize, 4 << 20},
		{"BlockSize", o.BlockSize, 4 << 10},
		{"BlockCacheSize", o.BlockCacheSize, int64(8 << 20)},
		{"Filter", o.Filter, FilterAuto},
		{"FilterBitsPerKey", o.FilterBitsPerKey, 10.0},
		{"FilterAllocation", o.FilterAllocation, FilterAllocationMonkey},
		{"BloomBitsPerKey", o.BloomBitsPerKey, 10},
		{"RibbonBits", o.RibbonBits, 7},
		{"RangeFilterBitsPerKey", o.RangeFilterBitsPerKey, 0.0},
		{"L0CompactionThreshold", o.L0CompactionThreshold, 4},
		{"L0StopWritesThreshold", o.L0StopWritesThreshold, 12},
		{"L0SlowdownWritesThreshold", o.L0SlowdownWritesThreshold, 12},
		{"LBaseMaxBytes", o.LBaseMaxBytes, int64(64 << 20)},
		{"TargetFileSize", o.TargetFileSize, int64(2 << 20)},
		{"MaxOpenFiles", o.MaxOpenFiles, 1000},
		{"TombstoneMaxAge", o.TombstoneMaxAge, time.Hour},
		{"IdlePurgeMinShare", o.IdlePurgeMinShare, 0.01},
	} {
		if c.got != c.want {
			t.Errorf("default %s = %v, the doc says %v", c.name, c.got, c.want)
		}
	}

	// L0StopWritesThreshold grows with L0CompactionThreshold.
	o, err = (&Options{L0CompactionThreshold: 8}).withDefaults()
	if err != nil || o.L0StopWritesThreshold != 20 {
		t.Errorf("L0CompactionThreshold 8: stop threshold %d, %v; the doc says 20", o.L0StopWritesThreshold, err)
	}
	// TargetFileSize's default is at least 16 KiB.
	o, err = (&Options{MemTableSize: 1 << 10}).withDefaults()
	if err != nil || o.TargetFileSize != 16<<10 {
		t.Errorf("MemTableSize 1 KiB: TargetFileSize %d, %v; the doc says 16 KiB", o.TargetFileSize, err)
	}

	// The stated ranges: each bound is accepted, one step past it refused.
	for _, c := range []struct {
		name    string
		ok, bad Options
	}{
		{"MemTableSize min", Options{MemTableSize: 1 << 10}, Options{MemTableSize: 1<<10 - 1}},
		{"MemTableSize max", Options{MemTableSize: 1 << 30}, Options{MemTableSize: 1<<30 + 1}},
		{"BlockSize min", Options{BlockSize: 256}, Options{BlockSize: 255}},
		{"BlockSize max", Options{BlockSize: 1 << 20}, Options{BlockSize: 1<<20 + 1}},
		{"FilterBitsPerKey min", Options{FilterBitsPerKey: 1}, Options{FilterBitsPerKey: 0.5}},
		{"FilterBitsPerKey max", Options{FilterBitsPerKey: 64}, Options{FilterBitsPerKey: 64.5}},
		{"BloomBitsPerKey max", Options{BloomBitsPerKey: 64}, Options{BloomBitsPerKey: 65}},
		{"RibbonBits max", Options{RibbonBits: 16}, Options{RibbonBits: 17}},
		{"RangeFilterBitsPerKey min", Options{RangeFilterBitsPerKey: 3}, Options{RangeFilterBitsPerKey: 2}},
		{"RangeFilterBitsPerKey max", Options{RangeFilterBitsPerKey: 48}, Options{RangeFilterBitsPerKey: 49}},
		{"L0CompactionThreshold max", Options{L0CompactionThreshold: 1000}, Options{L0CompactionThreshold: 1001}},
		{"MaxOpenFiles min", Options{MaxOpenFiles: 16}, Options{MaxOpenFiles: 15}},
		{"IdlePurgeMinShare max", Options{IdlePurgeMinShare: 1}, Options{IdlePurgeMinShare: 1.5}},
	} {
		if _, err := c.ok.withDefaults(); err != nil {
			t.Errorf("%s: bound refused: %v", c.name, err)
		}
		if _, err := c.bad.withDefaults(); !errors.Is(err, ErrInvalidOptions) {
			t.Errorf("%s: past the bound: %v, want ErrInvalidOptions", c.name, err)
		}
	}
}
