package kv

import "fmt"

// CompactDue runs, one after another on the caller's goroutine, the
// compactions the leveled policy finds due (as the background loop would),
// and returns when none is. Opened with DisableAutomaticCompactions, a DB
// driven by its writes, Flush and CompactDue alone reaches a tree that is
// a function of those calls, not of background timing: benchmarks use it
// to compare filter configurations on identical trees (kvbench's budget
// sweep, BenchmarkFilterMonkeyEqualShape). Manual and background
// compactions queue with it on compactMu.
func (d *DB) CompactDue() error {
	d.compactMu.Lock()
	defer d.compactMu.Unlock()
	d.mu.Lock()
	defer d.mu.Unlock()
	for {
		if err := d.writableLocked(); err != nil {
			return err
		}
		c := d.picker.Pick(d.current)
		if c == nil {
			return nil
		}
		if err := d.runPickedLocked(c); err != nil {
			return fmt.Errorf("kv: compaction to L%d: %w", c.OutputLevel, err)
		}
	}
}
