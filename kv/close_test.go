package kv

import (
	"errors"
	"testing"
)

// With DisableWAL and a sticky background failure, Close cannot flush the
// memtable: it must say so rather than return nil over lost writes.
func TestCloseReportsUnflushableNoWALWrites(t *testing.T) {
	d, err := Open(t.TempDir(), &Options{DisableWAL: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Set([]byte("k"), []byte("v"), Sync); err != nil {
		t.Fatal(err)
	}
	d.mu.Lock()
	d.setBackgroundErrorLocked("test", errors.New("disk gone"))
	d.mu.Unlock()
	if err := d.Close(); !errors.Is(err, ErrReadOnly) {
		t.Fatalf("Close with unflushable writes = %v, want the sticky error", err)
	}
}
