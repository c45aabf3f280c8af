package kv

import (
	"errors"
	"fmt"
	"testing"

	"github.com/sievekv/sievekv/vfs"
)

// TestCompactDue: with automatic compactions off, L0 fills past its
// trigger and stays there until CompactDue, which leaves no level due;
// a read-only DB refuses it.
func TestCompactDue(t *testing.T) {
	fs := vfs.NewMem()
	o := &Options{FS: fs, DisableAutomaticCompactions: true, DisableWAL: true}
	d, err := Open("db", o)
	if err != nil {
		t.Fatal(err)
	}
	for f := range 6 {
		for i := range 50 {
			if err := d.Set([]byte(fmt.Sprintf("k%03d-%d", i, f)), []byte("v"), NoSync); err != nil {
				t.Fatal(err)
			}
		}
		if err := d.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	if n := d.Metrics().Levels[0].Tables; n != 6 {
		t.Fatalf("%d L0 tables before CompactDue, want 6", n)
	}
	if err := d.CompactDue(); err != nil {
		t.Fatal(err)
	}
	m := d.Metrics()
	if m.Levels[0].Tables != 0 || m.Compactions == 0 {
		t.Fatalf("after CompactDue: %d L0 tables, %d compactions", m.Levels[0].Tables, m.Compactions)
	}
	d.mu.Lock()
	due := d.picker.Pick(d.current)
	d.mu.Unlock()
	if due != nil {
		t.Fatalf("a compaction to L%d is still due", due.OutputLevel)
	}
	ro := reopen(t, d, "db", &Options{FS: fs, ReadOnly: true})
	defer ro.Close()
	if err := ro.CompactDue(); !errors.Is(err, ErrReadOnly) {
		t.Fatalf("CompactDue on a read-only DB: %v, want ErrReadOnly", err)
	}
}
