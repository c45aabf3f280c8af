package kv

import (
	"errors"
	"fmt"
	"testing"

	"github.com/sievekv/sievekv/vfs"
	"github.com/sievekv/sievekv/vfs/errorfs"
)

// TestIteratorCloseReportsOnceThenErrClosed: Close returns the error that
// stopped the iterator, and a second Close returns ErrClosed, as the doc
// says. After a read error the second Close returned the read error
// again, so a deferred Close beside an explicit one reported it twice.
func TestIteratorCloseReportsOnceThenErrClosed(t *testing.T) {
	efs := errorfs.Wrap(vfs.NewMem(), errorfs.OpRead)
	d := openMem(t, efs, &Options{DisableAutomaticCompactions: true, BlockCacheSize: -1})
	defer d.Close()
	for i := range 200 {
		if err := d.Set(fmt.Appendf(nil, "k%04d", i), make([]byte, 100), NoSync); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.Flush(); err != nil {
		t.Fatal(err)
	}
	efs.Reset()
	efs.FailAt(1, true)
	it := d.NewIter(nil)
	for ok := it.First(); ok; ok = it.Next() {
	}
	efs.FailAt(0, false)
	if efs.Injected() == 0 {
		t.Fatal("the scan read no table block: nothing was failed")
	}
	if err := it.Close(); err == nil || errors.Is(err, ErrClosed) {
		t.Fatalf("first Close = %v, want the read error", err)
	}
	if err := it.Close(); !errors.Is(err, ErrClosed) {
		t.Fatalf("second Close = %v, want ErrClosed", err)
	}
}
