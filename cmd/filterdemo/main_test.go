package main

import (
	"bytes"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/sievekv/sievekv/filters"
)

// TestTableRows runs the real entries on a few thousand keys and checks each
// row is sane: plausible size, measured FP near its target, fill in (0, 1).
func TestTableRows(t *testing.T) {
	const n, q = 3000, 60000
	rows, err := table(entries, sampleKeys("user", n), sampleKeys("miss", q))
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != len(entries) {
		t.Fatalf("%d rows for %d entries", len(rows), len(entries))
	}
	for i, r := range rows {
		if r.name != entries[i].name {
			t.Fatalf("row %d is %q, want %q", i, r.name, entries[i].name)
		}
		if r.bitsPerKey < 4 || r.bitsPerKey > 64 {
			t.Errorf("%s: %.2f bits/key is implausible at 1%%", r.name, r.bitsPerKey)
		}
		// At 1% about 600 false positives are expected, and 1.5x is far
		// outside noise; the 16-bit fuse filter expects about one, so it
		// gets a Poisson allowance instead.
		expected := r.targetFP * q
		got := r.measuredFP * q
		if expected >= 50 && (got > 1.5*expected || got == 0) {
			t.Errorf("%s: measured FP %.4f for target %.4f", r.name, r.measuredFP, r.targetFP)
		}
		if expected < 50 && got > expected+5*math.Sqrt(expected)+5 {
			t.Errorf("%s: %v false positives where %.1f are expected", r.name, got, expected)
		}
		wantFill := entries[i].fill != nil || hasFillRatio(entries[i])
		if r.hasFill != wantFill || (r.hasFill && (r.fill <= 0 || r.fill >= 1)) {
			t.Errorf("%s: fill ratio %v (present %v, want present %v)", r.name, r.fill, r.hasFill, wantFill)
		}
	}
	var out bytes.Buffer
	if err := render(&out, rows, n, q); err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !strings.Contains(out.String(), e.name) {
			t.Fatalf("rendered table lacks %q:\n%s", e.name, out.String())
		}
	}
	if !strings.Contains(out.String(), "measured FP") {
		t.Fatalf("rendered table lacks its header:\n%s", out.String())
	}
}

// hasFillRatio reports whether e's filter type offers FillRatio.
func hasFillRatio(e entry) bool {
	f, err := e.build([][]byte{[]byte("probe")})
	if err != nil {
		return false
	}
	_, ok := f.(interface{ FillRatio() float64 })
	return ok
}

// fakeFilter claims nothing is present: table must report the false
// negative instead of printing a row.
type fakeFilter struct{}

func (fakeFilter) MayContain([]byte) bool         { return false }
func (fakeFilter) MayContainHash(uint64) bool     { return false }
func (fakeFilter) MarshalBinary() ([]byte, error) { return []byte{1}, nil }

func TestTableCatchesFalseNegativesAndBuildErrors(t *testing.T) {
	keys := sampleKeys("user", 10)
	lying := []entry{{name: "liar", targetFP: 0.01,
		build: func([][]byte) (filters.Filter, error) { return fakeFilter{}, nil }}}
	if _, err := table(lying, keys, keys); err == nil || !strings.Contains(err.Error(), "false negative") {
		t.Fatalf("err = %v, want a false-negative report", err)
	}
	failing := []entry{{name: "broken", targetFP: 0.01,
		build: func([][]byte) (filters.Filter, error) { return nil, filters.ErrInvalidArgument }}}
	if _, err := table(failing, keys, keys); !errors.Is(err, filters.ErrInvalidArgument) {
		t.Fatalf("err = %v, want the build error", err)
	}
	// A filter without FillRatio prints "-".
	noFill := []entry{{name: "nofill", targetFP: 0.5,
		build: func([][]byte) (filters.Filter, error) { return allFilter{}, nil }}}
	rows, err := table(noFill, keys, keys)
	if err != nil || rows[0].hasFill {
		t.Fatalf("rows %+v err %v: want no fill ratio", rows, err)
	}
	var out bytes.Buffer
	_ = render(&out, rows, 10, 10)
	if !strings.Contains(out.String(), " -") {
		t.Fatalf("missing '-' for fill:\n%s", out.String())
	}
}

type allFilter struct{}

func (allFilter) MayContain([]byte) bool         { return true }
func (allFilter) MayContainHash(uint64) bool     { return true }
func (allFilter) MarshalBinary() ([]byte, error) { return []byte{1}, nil }

// TestCheckFlags: a table of nothing (an FP rate "measured" on one absent
// key), sizes that only die allocating, and a stray argument are refused.
func TestCheckFlags(t *testing.T) {
	if err := checkFlags(100_000, 1_000_000, nil); err != nil {
		t.Fatalf("defaults: %v", err)
	}
	for _, tc := range []struct {
		n, absent int
		rest      []string
	}{
		{0, 1000, nil},
		{1, 1, nil},
		{1 << 40, 1000, nil},
		{1000, 1 << 40, nil},
		{1000, 1000, []string{"1000"}},
	} {
		if err := checkFlags(tc.n, tc.absent, tc.rest); err == nil {
			t.Errorf("%+v: no error", tc)
		}
	}
}
