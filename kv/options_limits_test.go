package kv

import (
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/sievekv/sievekv/vfs"
)

// TestHugeL0CompactionThresholdIsInvalid caught L0CompactionThreshold
// math.MaxInt accepted by Open and crashing the process out of memory at
// the first flush, whose filter sizing listed that many L0 runs.
func TestHugeL0CompactionThresholdIsInvalid(t *testing.T) {
	for _, n := range []int{maxL0CompactionThreshold + 1, math.MaxInt} {
		o := &Options{FS: vfs.NewMem(), L0CompactionThreshold: n, L0SlowdownWritesThreshold: math.MaxInt, L0StopWritesThreshold: math.MaxInt}
		if d, err := Open("db", o); !errors.Is(err, ErrInvalidOptions) {
			if err == nil {
				d.Close()
			}
			t.Fatalf("Open with L0CompactionThreshold %d = %v, want ErrInvalidOptions", n, err)
		}
	}
}

// TestOptionsAtTheirLimitsWork: every option at the edge of its range
// opens, takes writes through flushes and a compaction, and reopens.
func TestOptionsAtTheirLimitsWork(t *testing.T) {
	for name, o := range map[string]Options{
		"L0 at its maximum, never stop": {L0CompactionThreshold: maxL0CompactionThreshold, L0SlowdownWritesThreshold: math.MaxInt, L0StopWritesThreshold: math.MaxInt},
		"huge MaxOpenFiles":             {MaxOpenFiles: math.MaxInt},
		"huge BlockCacheSize":           {BlockCacheSize: math.MaxInt64},
		"huge level and file sizes":     {LBaseMaxBytes: math.MaxInt64, TargetFileSize: math.MaxInt64},
		"one-byte level and file sizes": {LBaseMaxBytes: 1, TargetFileSize: 1},
		"smallest memtable and block":   {MemTableSize: minMemTableSize, BlockSize: 256},
		"tombstone age 1ns":             {TombstoneMaxAge: 1},
		"tombstone age forever":         {TombstoneMaxAge: math.MaxInt64},
		"idle purge at any share":       {IdlePurgeMinShare: math.SmallestNonzeroFloat64},
		"idle purge of the whole tree":  {IdlePurgeMinShare: 1},
	} {
		t.Run(name, func(t *testing.T) {
			fs := vfs.NewMem()
			o.FS = fs
			d, err := Open("db", &o)
			if err != nil {
				t.Fatal(err)
			}
			for i := range 600 {
				if err := d.Set(fmt.Appendf(nil, "k%05d", i), make([]byte, 100), nil); err != nil {
					t.Fatal(err)
				}
				if i%100 == 99 {
					if err := d.Flush(); err != nil {
						t.Fatal(err)
					}
				}
			}
			if err := d.DeleteRange([]byte("k00100"), []byte("k00200"), nil); err != nil {
				t.Fatal(err)
			}
			if err := d.Compact(nil, nil); err != nil {
				t.Fatal(err)
			}
			if err := d.Close(); err != nil {
				t.Fatal(err)
			}
			if d, err = Open("db", &o); err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			if _, err := d.Get([]byte("k00150")); !errors.Is(err, ErrNotFound) {
				t.Fatalf("Get of a range-deleted key = %v", err)
			}
			if v, err := d.Get([]byte("k00599")); err != nil || len(v) != 100 {
				t.Fatalf("Get = %d bytes, %v", len(v), err)
			}
		})
	}
}
