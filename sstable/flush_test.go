package sstable

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/sievekv/sievekv/internal/base"
	"github.com/sievekv/sievekv/memtable"
	"github.com/sievekv/sievekv/vfs"
)

// TestFlushMemtable is the path kv's flush takes: a memtable's iterator
// feeds a Writer, and the table must then answer every Get at every
// snapshot exactly as the memtable did, and iterate the same entries.
func TestFlushMemtable(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 31))
	m := memtable.New()
	const ops = 20000
	for seq := base.SeqNum(1); seq <= ops; seq++ {
		k := []byte(fmt.Sprintf("k%05d", rng.IntN(3000)))
		if rng.IntN(5) == 0 {
			m.Delete(k, seq)
		} else {
			m.Set(k, seq, bytes.Repeat([]byte{byte(seq)}, rng.IntN(64)))
		}
	}
	fs := vfs.NewMem()
	f, _ := fs.Create("/000001.sst")
	w := NewWriter(f, WriterOptions{})
	it := m.NewIter(nil, nil)
	for ok := it.First(); ok; ok = it.Next() {
		if err := w.Add(it.Key(), it.Value()); err != nil {
			t.Fatal(err)
		}
	}
	md, err := w.Finish()
	if err != nil {
		t.Fatal(err)
	}
	if md.Properties.NumEntries != uint64(m.Len()) {
		t.Fatalf("table has %d entries, memtable %d", md.Properties.NumEntries, m.Len())
	}
	r := openTable(t, fs, "/000001.sst", ReaderOptions{FileNum: 1, Cache: NewCache(1 << 20)})
	for range 20000 {
		k := []byte(fmt.Sprintf("k%05d", rng.IntN(3100)))
		seq := base.SeqNum(rng.IntN(ops + 2))
		mv, mk, mok := m.Get(k, seq)
		tv, tk, tok, err := r.Get(k, seq)
		if err != nil || mok != tok || (mok && (mk != tk || !bytes.Equal(mv, tv))) {
			t.Fatalf("Get(%s@%d): memtable %v %v %q, table %v %v %q (%v)", k, seq, mok, mk, mv, tok, tk, tv, err)
		}
	}
	ti := r.NewIter(nil, nil)
	ok2 := ti.Last()
	for ok := it.Last(); ok; ok = it.Prev() {
		if !ok2 || base.Compare(it.Key(), ti.Key()) != 0 || it.Key().Trailer != ti.Key().Trailer || !bytes.Equal(it.Value(), ti.Value()) {
			t.Fatalf("backward walks differ at %v", it.Key())
		}
		ok2 = ti.Prev()
	}
	if ok2 || ti.Error() != nil {
		t.Fatalf("table has extra entries or failed: %v", ti.Error())
	}
}
