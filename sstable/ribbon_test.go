package sstable

import (
	"fmt"
	"math"
	"testing"

	"github.com/sievekv/sievekv/filters"
	"github.com/sievekv/sievekv/internal/base"
	"github.com/sievekv/sievekv/vfs"
)

// TestRibbonFilterTable writes tables with filters.TypeRibbon at a few result
// widths and checks that the properties record it, that the embedded
// filter decodes as a Ribbon of the requested width holding every key, and
// that absent-key Gets read a data block only on a false positive, at a
// rate within a binomial band of 2^-RibbonBits.
func TestRibbonFilterTable(t *testing.T) {
	const n, absent = 20000, 50000
	for _, bits := range []int{0, 5, 10} { // 0: DefaultRibbonBits
		t.Run(fmt.Sprintf("bits=%d", bits), func(t *testing.T) {
			r, _, entries := guardTable(t, n, WriterOptions{Filter: filters.TypeRibbon, RibbonBits: bits}, nil)
			want := bits
			if want == 0 {
				want = DefaultRibbonBits
			}
			p := r.Properties()
			if p.FilterType != filters.TypeRibbon || p.FilterType.String() != "ribbon" || p.FilterKeys != n {
				t.Fatalf("properties: %s over %d keys", p.FilterType, p.FilterKeys)
			}
			f, ok := r.filter.(*filters.Ribbon)
			if !ok {
				t.Fatalf("table filter is %T", r.filter)
			}
			if f.Options().ResultBits != want || f.Len() != n {
				t.Fatalf("filter has %d result bits over %d keys", f.Options().ResultBits, f.Len())
			}
			for _, e := range entries {
				if !f.MayContain(e.key.UserKey) {
					t.Fatalf("filter lost %q", e.key.UserKey)
				}
			}
			before := r.Stats().Snapshot()
			for i := range absent {
				if _, _, ok, err := r.Get(absentKey(i%n+i/n*n), base.SeqNumMax); ok || err != nil {
					t.Fatalf("absent key found: %v %v", ok, err)
				}
			}
			d := r.Stats().Snapshot().Sub(before)
			if d.FilterChecks != absent || d.FilterNegatives+d.FilterFalsePositives != absent || d.DataBlockReads != d.FilterFalsePositives {
				t.Fatalf("counters %+v", d)
			}
			mean := absent * math.Ldexp(1, -want)
			if fp := float64(d.FilterFalsePositives); fp > mean+5*math.Sqrt(mean)+5 || fp < mean-5*math.Sqrt(mean) {
				t.Fatalf("%v false positives in %d, expected %.1f", fp, absent, mean)
			}
		})
	}
	// An out-of-range width is refused when the table is finished.
	fs := vfs.NewMem()
	f, err := fs.Create("/bad.sst")
	if err != nil {
		t.Fatal(err)
	}
	w := NewWriter(f, WriterOptions{Filter: filters.TypeRibbon, RibbonBits: 17})
	if err := w.Add(base.MakeInternalKey([]byte("k"), 1, base.KindSet), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Finish(); err == nil {
		t.Fatal("RibbonBits 17 accepted")
	}
}
