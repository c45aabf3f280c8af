package memtable

import (
	"bytes"
	"runtime"
	"runtime/debug"
	"testing"
	"time"

	"github.com/sievekv/sievekv/internal/base"
)

// TestSlicesOutliveGCWhileMemtableReachable pins MT2 as it holds with
// mapped chunks (MT12): values from Get and keys from an iterator stay
// intact through collections while the memtable is reachable. MT2 used to
// promise more, validity until Release whatever became of the memtable;
// but a slice does not keep a mapped chunk alive, and with the memtables
// dropped unreleased the values read back as zeros once the GC had run
// their chunks' cleanups (a fault, or another mapping's bytes). Only the
// contract could be fixed: the memory is outside the heap on purpose.
func TestSlicesOutliveGCWhileMemtableReachable(t *testing.T) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	want := bytes.Repeat([]byte("v"), 100)
	var ms []*MemTable
	var vals, keys [][]byte
	for i := 0; i < 50; i++ {
		m := New()
		m.Set([]byte("key"), 1, want)
		v, _, ok := m.Get([]byte("key"), base.SeqNumMax)
		if !ok {
			t.Fatal("not found")
		}
		it := m.NewIter(nil, nil)
		if !it.First() {
			t.Fatal("empty iterator")
		}
		ms, vals, keys = append(ms, m), append(vals, v), append(keys, it.Key().UserKey)
	}
	for range 3 {
		runtime.GC()
		time.Sleep(5 * time.Millisecond)
	}
	for i := range vals {
		if !bytes.Equal(vals[i], want) || string(keys[i]) != "key" {
			t.Fatalf("slices of memtable %d changed while it was reachable", i)
		}
	}
	runtime.KeepAlive(ms)
}
