package memtable

import (
	"encoding/binary"
	"math/rand/v2"
	"testing"

	"github.com/sievekv/sievekv/internal/base"
)

// BenchmarkSet inserts random 16-byte keys with 100-byte values, starting
// a new memtable every 30k entries (about 4 MiB, the engine's default):
// the cost of one insert under the commit leader.
func BenchmarkSet(b *testing.B) {
	b.Run("unsized", func(b *testing.B) { benchSet(b, 0) })
	// The engine's case: each memtable's key filter sized from the one
	// before (MT11), so it never rebuilds.
	b.Run("sized", func(b *testing.B) { benchSet(b, 30000+30000/4) })
}

func benchSet(b *testing.B, expected int) {
	rng := rand.New(rand.NewPCG(1, 2))
	k, v := make([]byte, 16), make([]byte, 100)
	m := NewSized(nil, expected)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if m.Len() == 30000 {
			m = NewSized(nil, expected)
		}
		binary.BigEndian.PutUint64(k, rng.Uint64())
		binary.BigEndian.PutUint64(k[8:], rng.Uint64())
		m.Set(k, base.SeqNum(i), v)
	}
}

// BenchmarkGet looks up present keys in a 30k-entry memtable.
func BenchmarkGet(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	m := New()
	keys := make([][]byte, 30000)
	for i := range keys {
		k := make([]byte, 16)
		binary.BigEndian.PutUint64(k, rng.Uint64())
		keys[i] = k
		m.Set(k, base.SeqNum(i+1), make([]byte, 100))
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if _, _, ok := m.Get(keys[i%len(keys)], base.SeqNumMax); !ok {
			b.Fatal("missing key")
		}
	}
}

// BenchmarkIterScan walks a 30k-entry memtable end to end with a bounded
// iterator, forward (First, Next) and backward (Last, Prev): the refills
// from the tree are what a scan of the memtable costs per entry.
func BenchmarkIterScan(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	m := New()
	for i := range 30000 {
		k := make([]byte, 16)
		binary.BigEndian.PutUint64(k, rng.Uint64())
		m.Set(k, base.SeqNum(i+1), make([]byte, 100))
	}
	lower, upper := []byte{0x01}, []byte{0xfe}
	for _, dir := range []struct {
		name        string
		start, step func(*Iter) bool
	}{
		{"forward", (*Iter).First, (*Iter).Next},
		{"backward", (*Iter).Last, (*Iter).Prev},
	} {
		b.Run(dir.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				it := m.NewIter(lower, upper)
				n := 0
				for ok := dir.start(it); ok; ok = dir.step(it) {
					n++
				}
				it.Close()
				if n == 0 {
					b.Fatal("empty scan")
				}
			}
		})
	}
}
