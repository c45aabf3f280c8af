package kv

import (
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/sievekv/sievekv/vfs"
)

// TestRibbonFilterGuardsGets opens a DB whose tables carry Ribbon filters,
// flushes a table, and checks that absent-key Gets inside its key range are
// answered by the filter (negatives, at most the filter's FP rate reaching
// a data block), that present keys are found, and that both still hold
// after a reopen, which decodes the filters from disk.
func TestRibbonFilterGuardsGets(t *testing.T) {
	for _, bits := range []int{0, 4, 12} { // 0: the default (7)
		t.Run(fmt.Sprintf("bits=%d", bits), func(t *testing.T) {
			fs := vfs.NewMem()
			opts := func() *Options {
				return &Options{Filter: FilterRibbon, RibbonBits: bits, BlockCacheSize: -1, DisableAutomaticCompactions: true}
			}
			d := openMem(t, fs, opts())
			const n = 5000
			for i := 0; i < n; i++ {
				if err := d.Set([]byte(fmt.Sprintf("present%06d", i)), []byte(fmt.Sprintf("v%d", i)), NoSync); err != nil {
					t.Fatal(err)
				}
			}
			if err := d.Flush(); err != nil {
				t.Fatal(err)
			}
			check := func(d *DB, phase string) {
				t.Helper()
				for i := 0; i < n; i += 7 {
					v, err := d.Get([]byte(fmt.Sprintf("present%06d", i)))
					if err != nil || string(v) != fmt.Sprintf("v%d", i) {
						t.Fatalf("%s: present key %d: %q %v", phase, i, v, err)
					}
				}
				before := d.Metrics()
				const misses = 20000
				for i := 0; i < misses; i++ {
					if _, err := d.Get([]byte(fmt.Sprintf("present%06dx%d", i%n, i/n))); !errors.Is(err, ErrNotFound) {
						t.Fatalf("%s: absent key: %v", phase, err)
					}
				}
				m := d.Metrics()
				checks := m.Filter.Checks - before.Filter.Checks
				negatives := m.Filter.Negatives - before.Filter.Negatives
				fps := m.Filter.FalsePositives - before.Filter.FalsePositives
				if checks < misses*99/100 || negatives+fps != checks {
					t.Fatalf("%s: %d checks = %d negatives + %d false positives? (%d absent Gets)", phase, checks, negatives, fps, misses)
				}
				eff := bits
				if eff == 0 {
					eff = defaultRibbonBits
				}
				// Five standard deviations above the mean of a binomial at
				// 2^-bits, plus a cushion for small means.
				p := 1 / float64(uint(1)<<eff)
				mean := float64(checks) * p
				if limit := mean + 5*math.Sqrt(mean) + 5; float64(fps) > limit {
					t.Fatalf("%s: %d false positives in %d checks, above %.1f for 2^-%d", phase, fps, checks, limit, eff)
				}
			}
			check(d, "before reopen")
			if err := d.Close(); err != nil {
				t.Fatal(err)
			}
			d = openMem(t, fs, opts())
			defer d.Close()
			check(d, "after reopen")
		})
	}
}

// TestRibbonOptions: RibbonBits is validated, and the filter name round
// trips through ParseFilterType (kvbench's -filter flag).
func TestRibbonOptions(t *testing.T) {
	for _, bits := range []int{-1, 17, 64} {
		if _, err := Open("db", &Options{FS: vfs.NewMem(), Filter: FilterRibbon, RibbonBits: bits}); !errors.Is(err, ErrInvalidOptions) {
			t.Errorf("RibbonBits %d: err = %v, want ErrInvalidOptions", bits, err)
		}
	}
	if f, err := ParseFilterType("ribbon"); err != nil || f != FilterRibbon {
		t.Fatalf("ParseFilterType(ribbon) = %v, %v", f, err)
	}
	if got := FilterRibbon.String(); got != "ribbon" {
		t.Fatalf("FilterRibbon.String() = %q", got)
	}
	if _, err := Open("db", &Options{FS: vfs.NewMem(), Filter: FilterRibbon + 1}); !errors.Is(err, ErrInvalidOptions) {
		t.Fatalf("Filter past the last type: err = %v", err)
	}
}
