package kv

import (
	"errors"
	"fmt"
	"testing"

	"github.com/sievekv/sievekv/filters"
	"github.com/sievekv/sievekv/vfs"
)

// TestFilterTypeSurvivesReopen writes a table with every accepted filter
// and checks that TableInfo names it by its canonical name both from the
// flush and, after a reopen with another filter, from the manifest: the
// manifest holds the table code, not the filters.Type value.
func TestFilterTypeSurvivesReopen(t *testing.T) {
	for _, f := range FilterTypes() {
		t.Run(FilterName(f), func(t *testing.T) {
			fs := vfs.NewMem()
			d, err := Open("db", &Options{FS: fs, Filter: f})
			if err != nil {
				t.Fatal(err)
			}
			for i := range 100 {
				if err := d.Set([]byte(fmt.Sprintf("k%03d", i)), []byte("v"), NoSync); err != nil {
					t.Fatal(err)
				}
			}
			if err := d.Flush(); err != nil {
				t.Fatal(err)
			}
			want := f.String()
			if f == FilterAuto {
				// A table records the concrete filter it got: the one
				// alone in the DB gets the whole 10 bits per key.
				c, err := filters.ChooseTableFilter(100, defaultFilterBitsPerKey)
				if err != nil {
					t.Fatal(err)
				}
				want = c.Type.String()
			}
			check := func(when string, d *DB) {
				ts, err := d.Tables()
				if err != nil || len(ts) != 1 || ts[0].Filter != want {
					t.Fatalf("%s: tables %+v, %v; want one %s table", when, ts, err, want)
				}
				if v, err := d.Get([]byte("k042")); err != nil || string(v) != "v" {
					t.Fatalf("%s: Get = %q, %v", when, v, err)
				}
			}
			check("after flush", d)
			if err := d.Close(); err != nil {
				t.Fatal(err)
			}
			other := FilterBloom
			if f == FilterBloom {
				other = FilterNone
			}
			if d, err = Open("db", &Options{FS: fs, Filter: other}); err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			check("after reopen", d)
		})
	}
}

// TestParseFilterTypeVocabulary: every canonical name and the older
// spellings parse; a filter no table can embed is an invalid option.
func TestParseFilterTypeVocabulary(t *testing.T) {
	for _, f := range FilterTypes() {
		if got, err := ParseFilterType(FilterName(f)); err != nil || got != f {
			t.Errorf("ParseFilterType(%q) = %v, %v", FilterName(f), got, err)
		}
	}
	for s, want := range map[string]FilterType{"binaryfuse8": FilterBinaryFuse8, "binaryfuse16": FilterBinaryFuse16,
		"xor8": FilterXor8, "blockedbloom": FilterBlockedBloom} {
		if got, err := ParseFilterType(s); err != nil || got != want {
			t.Errorf("ParseFilterType(%q) = %v, %v; want %s", s, got, err, want)
		}
	}
	for _, s := range []string{"cuckoo", "bogus", ""} {
		if _, err := ParseFilterType(s); !errors.Is(err, ErrInvalidOptions) {
			t.Errorf("ParseFilterType(%q) = %v, want ErrInvalidOptions", s, err)
		}
	}
	if _, err := Open("db", &Options{FS: vfs.NewMem(), Filter: filters.TypeCuckoo}); !errors.Is(err, ErrInvalidOptions) {
		t.Errorf("Open with a cuckoo table filter: %v", err)
	}
}
