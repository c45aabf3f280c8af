package sstable

import (
	"fmt"
	"testing"

	"github.com/sievekv/sievekv/internal/base"
)

// TestEstimateDataBytes: the estimate of a range is the data bytes of the
// blocks holding its keys, high by at most the two edge blocks; the whole
// key space gives the table's data size and a range beside the keys
// little or nothing.
func TestEstimateDataBytes(t *testing.T) {
	const n, valueLen = 2000, 400
	var entries []kv
	for i := range n {
		entries = append(entries, kv{base.MakeInternalKey([]byte(fmt.Sprintf("k%05d", i)), base.SeqNum(i+1), base.KindSet), make([]byte, valueLen)})
	}
	r, err := openBytes(t, tableBytes(t, entries, WriterOptions{BlockSize: 4096, Compression: NoCompression}), "est.sst")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	p := r.Properties()
	blockBytes := p.DataSize / p.NumDataBlocks
	key := func(i int) []byte { return []byte(fmt.Sprintf("k%05d", i)) }
	if got := r.EstimateDataBytes([]byte("a"), []byte("z")); got != p.DataSize {
		t.Errorf("whole range: %d, want the data size %d", got, p.DataSize)
	}
	for _, c := range []struct{ lo, hi int }{{0, n / 2}, {n / 4, 3 * n / 4}, {100, 101}, {n - 10, n}} {
		want := p.DataSize * uint64(c.hi-c.lo) / n
		got := r.EstimateDataBytes(key(c.lo), key(c.hi))
		if got+blockBytes < want || got > want+2*blockBytes+blockBytes/2 {
			t.Errorf("[%d, %d): %d bytes, want %d within the edge blocks (%d each)", c.lo, c.hi, got, want, blockBytes)
		}
	}
	if got := r.EstimateDataBytes([]byte("z"), []byte("zz")); got != 0 {
		t.Errorf("range past the last key: %d, want 0", got)
	}
	if got := r.EstimateDataBytes(key(5), key(5)); got != 0 {
		t.Errorf("empty range: %d, want 0", got)
	}
	if got := r.EstimateDataBytes([]byte("a"), []byte("b")); got > blockBytes+blockBytes/2 {
		t.Errorf("range before the first key: %d, want at most one block (%d)", got, blockBytes)
	}
}
