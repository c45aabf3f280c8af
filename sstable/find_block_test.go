package sstable

import (
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/sievekv/sievekv/internal/base"
	"github.com/sievekv/sievekv/vfs"
)

// TestFindBlockMatchesSeparatorOrder checks findBlock's prefix search
// against the definition it shortcuts, the first separator >= the search
// key by base.Compare, for every key shape: keys whose first 8 bytes are
// all alike (plain, longprefix), where every step falls back to the full
// comparison, and short binary keys, where the zero padding could
// mislead. Probes are the table's own keys at several sequence numbers
// and random keys of the same shape.
func TestFindBlockMatchesSeparatorOrder(t *testing.T) {
	for name, gen := range keyGens {
		t.Run(name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(5, 9))
			entries := makeEntries(rng, 3000, gen, func() int { return rng.IntN(40) })
			fs := vfs.NewMem()
			writeTable(t, fs, "/t.sst", entries, WriterOptions{BlockSize: 128})
			r := openTable(t, fs, "/t.sst", ReaderOptions{})
			defer r.Close()
			if len(r.index) < 20 {
				t.Fatalf("only %d blocks: the test needs many separators", len(r.index))
			}
			want := func(k base.InternalKey) int {
				return sort.Search(len(r.index), func(i int) bool { return base.Compare(r.index[i].sep, k) >= 0 })
			}
			for i := range 20000 {
				var uk []byte
				if i%2 == 0 {
					uk = entries[rng.IntN(len(entries))].key.UserKey
				} else {
					uk = gen(rng, rng.IntN(4000))
				}
				seq := []base.SeqNum{0, 1, base.SeqNum(rng.IntN(10000)), base.SeqNumMax}[rng.IntN(4)]
				k := base.MakeSearchKey(uk, seq)
				if got, w := r.findBlock(k), want(k); got != w {
					t.Fatalf("findBlock(%x @%d) = %d, want %d", uk, seq, got, w)
				}
			}
		})
	}
}
