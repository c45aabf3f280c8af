package sstable

import (
	"math/rand/v2"
	"testing"

	"github.com/sievekv/sievekv/filters"
	"github.com/sievekv/sievekv/vfs"
)

// TestLastUserKeyHash checks that after every Add the writer reports the
// filters.Hash of the entry's user key, for every version of a key (not
// only its first), and reports nothing when it builds no filter.
func TestLastUserKeyHash(t *testing.T) {
	rng := rand.New(rand.NewPCG(19, 4))
	entries := makeEntries(rng, 500, keyGens["binary"], func() int { return 4 })
	for _, tc := range []struct {
		name   string
		opts   WriterOptions
		hashes bool
	}{
		{"bloom", WriterOptions{Filter: filters.TypeBloom, BloomBitsPerKey: 10}, true},
		{"none", WriterOptions{Filter: filters.TypeNone}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs := vfs.NewMem()
			f, err := fs.Create("/t")
			if err != nil {
				t.Fatal(err)
			}
			w := NewWriter(f, tc.opts)
			if _, ok := w.LastUserKeyHash(); ok {
				t.Fatal("an empty writer reports a hash")
			}
			for i, e := range entries {
				if err := w.Add(e.key, e.value); err != nil {
					t.Fatal(err)
				}
				h, ok := w.LastUserKeyHash()
				if ok != tc.hashes {
					t.Fatalf("entry %d: reported a hash = %v, want %v", i, ok, tc.hashes)
				}
				if ok && h != filters.Hash(e.key.UserKey) {
					t.Fatalf("entry %d (%v): hash %#x, want %#x", i, e.key, h, filters.Hash(e.key.UserKey))
				}
			}
			if _, err := w.Finish(); err != nil {
				t.Fatal(err)
			}
		})
	}
}
