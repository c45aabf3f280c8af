package kv

import (
	"fmt"
	"testing"
	"time"
)

// TestMetricsCountACompactionWithItsVersion caught Metrics showing a
// compaction's output tables without counting the compaction: a
// compaction counted itself after its install (after its tombstone-index
// update), and Metrics read the counters before it took DB.mu to read the
// levels, so a compaction installed in between showed in the levels
// only. Under load TestIdleDBReclaimsRangeDeletedSpace saw the space come
// back with no purge counted. Here a Metrics call is held between its
// lock-free reads and DB.mu while a compaction installs its version and
// is held in its index update: the snapshot it returns shows the
// compacted levels, and must count the compaction.
func TestMetricsCountACompactionWithItsVersion(t *testing.T) {
	key := func(i int) []byte { return fmt.Appendf(nil, "held%05d", i) }
	d := flushedKeysDB(t, key, 2000)
	defer d.Close()
	if err := deleteKeys(d, key, 0, 1000); err != nil {
		t.Fatal(err)
	}
	mustFlush(t, d)
	before := d.Metrics()
	paused, resume := make(chan struct{}), make(chan struct{})
	testMetricsBeforeLock = func() {
		testMetricsBeforeLock = nil // this call only
		close(paused)
		<-resume
	}
	defer func() { testMetricsBeforeLock = nil }()
	got := make(chan Metrics, 1)
	go func() { got <- d.Metrics() }()
	select {
	case <-paused:
	case <-time.After(5 * time.Second):
		t.Fatal("Metrics did not reach its hook")
	}
	// The compaction installs its version, then stops in its index
	// update, held: only then is Metrics let go.
	entered, letGo := holdFirstIndexEdit(t)
	defer letGo() // before Close, which waits for the held compaction
	compacted := make(chan error, 1)
	go func() { compacted <- d.Compact(nil, nil) }() // drops the 1000 tombstones
	mustEnter(t, entered, "the compaction dropping 1000 tombstones did not update the index")
	close(resume)
	m := <-got
	letGo()
	if err := <-compacted; err != nil {
		t.Fatal(err)
	}
	if m.Levels[0].Tables != 0 || m.Levels[NumLevels-1].Tables == 0 {
		t.Fatalf("the held Metrics does not show the compaction: L0 %d tables, L6 %d", m.Levels[0].Tables, m.Levels[NumLevels-1].Tables)
	}
	if m.Compaction.Count != before.Compaction.Count+1 || m.Compaction.BytesIn <= before.Compaction.BytesIn ||
		m.Levels[NumLevels-1].BytesWritten <= before.Levels[NumLevels-1].BytesWritten {
		t.Fatalf("Metrics shows the compacted levels but counts %d compactions (%d before), %d bytes in (%d before)",
			m.Compaction.Count, before.Compaction.Count, m.Compaction.BytesIn, before.Compaction.BytesIn)
	}
}
