package kv

import (
	"fmt"
	"sync"
	"testing"
)

// TestMappedWALGroupCommitSharesSyncs checks that writers syncing at once
// through the memory-mapped WAL still share fdatasyncs: fewer syncs than
// synced writes, and every write readable after reopening.
func TestMappedWALGroupCommitSharesSyncs(t *testing.T) {
	dir := t.TempDir()
	d, err := Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	const goroutines, each = 8, 40
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				if err := d.Set([]byte(fmt.Sprintf("%d/%d", g, i)), []byte("v"), Sync); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	d.mu.Lock()
	mapped := d.mem.logOut != nil && d.mem.logOut.Mapped()
	d.mu.Unlock()
	if !mapped {
		t.Skip("the WAL is not memory-mapped on this file system")
	}
	m := d.Metrics()
	t.Logf("%d synced writes took %d fdatasyncs", goroutines*each, m.WAL.Syncs)
	if m.WAL.Syncs == 0 || m.WAL.Syncs >= goroutines*each {
		t.Fatalf("%d WAL syncs for %d concurrent synced writes: group commit shared none", m.WAL.Syncs, goroutines*each)
	}
	d = reopen(t, d, dir, nil)
	defer d.Close()
	for g := range goroutines {
		for i := range each {
			if _, err := d.Get([]byte(fmt.Sprintf("%d/%d", g, i))); err != nil {
				t.Fatalf("%d/%d after reopen: %v", g, i, err)
			}
		}
	}
}
