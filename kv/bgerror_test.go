package kv

import (
	"errors"
	"strings"
	"testing"

	"github.com/sievekv/sievekv/vfs"
	"github.com/sievekv/sievekv/vfs/errorfs"
)

// TestBackgroundFlushFailureIsStickyReadOnlyAndInMetrics caught that a
// failed background flush left the DB refusing writes with an error that
// did not match ErrReadOnly (which the package documents for this case),
// and that Metrics had no way to show the failure.
func TestBackgroundFlushFailureIsStickyReadOnlyAndInMetrics(t *testing.T) {
	efs := errorfs.Wrap(vfs.NewMem(), errorfs.OpSync)
	// Fail the first sync of a table file: the flush's, never a WAL's.
	efs.SetMatch(func(_ errorfs.Op, name string) bool { return strings.HasSuffix(name, ".sst") })
	efs.FailAt(1, false)
	d, err := Open("db", &Options{FS: efs, MemTableSize: minMemTableSize})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if err := d.Set([]byte("a"), []byte("1"), Sync); err != nil {
		t.Fatal(err)
	}
	err = d.Flush()
	if !errors.Is(err, errorfs.ErrInjected) || !errors.Is(err, ErrReadOnly) {
		t.Fatalf("Flush = %v, want the injected error wrapped with ErrReadOnly", err)
	}
	// Sticky: the next write reports it, and so does every later one.
	for i := 0; i < 2; i++ {
		err = d.Set([]byte("b"), []byte("2"), Sync)
		if !errors.Is(err, ErrReadOnly) || !errors.Is(err, errorfs.ErrInjected) {
			t.Fatalf("write %d after failed flush = %v", i, err)
		}
	}
	m := d.Metrics()
	if m.BackgroundErrors != 1 || !strings.Contains(m.BackgroundError, "injected") {
		t.Fatalf("Metrics: BackgroundErrors=%d BackgroundError=%q", m.BackgroundErrors, m.BackgroundError)
	}
	if !strings.Contains(m.String(), "background error") {
		t.Fatalf("Metrics.String does not show the background error:\n%s", m)
	}
	// Reads still work and see the acknowledged write.
	if v, err := d.Get([]byte("a")); err != nil || string(v) != "1" {
		t.Fatalf("Get after failure = %q, %v", v, err)
	}
}

// TestWALFailureIsStickyReadOnlyAndInMetrics: a failed WAL sync fails the
// write that asked for it, and every later write, with ErrReadOnly.
func TestWALFailureIsStickyReadOnlyAndInMetrics(t *testing.T) {
	efs := errorfs.Wrap(vfs.NewMem(), errorfs.OpSync)
	efs.SetMatch(func(_ errorfs.Op, name string) bool { return strings.HasSuffix(name, ".log") })
	d, err := Open("db", &Options{FS: efs})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	efs.Reset()
	efs.FailAt(1, false)
	if err := d.Set([]byte("a"), []byte("1"), Sync); !errors.Is(err, errorfs.ErrInjected) {
		t.Fatalf("Set = %v, want injected", err)
	}
	if err := d.Set([]byte("b"), []byte("1"), NoSync); !errors.Is(err, ErrReadOnly) {
		t.Fatalf("next Set = %v, want ErrReadOnly", err)
	}
	if m := d.Metrics(); m.BackgroundErrors != 1 || m.BackgroundError == "" {
		t.Fatalf("Metrics: %d %q", m.BackgroundErrors, m.BackgroundError)
	}
}
