package kv

import (
	"github.com/sievekv/sievekv/compaction"
	"github.com/sievekv/sievekv/internal/manifest"
)

// maybeScheduleCompactionLocked starts the compaction goroutine when the
// picker finds a level due and none is running. At most one background
// compaction runs at a time (the right number for two cores; manual
// compactions queue behind it on compactMu). The picker reads the published
// current version itself (manifest's V1: immutable, nothing to copy).
// REQUIRES: d.mu held (for d.current).
func (d *DB) maybeScheduleCompactionLocked() {
	if d.compacting || d.closed || d.bgErr != nil || d.opts.ReadOnly || d.opts.DisableAutomaticCompactions {
		return
	}
	if d.pickLocked() == nil {
		return
	}
	d.compacting = true
	d.bg.Add(1)
	go d.compactLoop()
}

// compactLoop runs picked compactions until no level is due.
func (d *DB) compactLoop() {
	defer d.bg.Done()
	d.compactMu.Lock()
	defer d.compactMu.Unlock()
	for {
		d.mu.Lock()
		var c *compaction.Compaction
		if !d.closed && d.bgErr == nil {
			c = d.pickLocked()
		}
		if c == nil {
			d.compacting = false
			d.flushDone.Broadcast()
			d.mu.Unlock()
			return
		}
		err := d.runPickedLocked(c)
		if err != nil && !d.closed {
			d.setBackgroundErrorLocked("kv: background compaction", err)
		}
		// Writers stalled on L0 wait on flushDone too.
		d.flushDone.Broadcast()
		d.mu.Unlock()
	}
}

// runPickedLocked runs c, which the picker chose on d.current, with d.mu
// released while it merges.
// REQUIRES: d.compactMu and d.mu held; d.mu is held again on return.
func (d *DB) runPickedLocked(c *compaction.Compaction) error {
	v := d.current
	v.Ref()
	job := d.jobFor(v, c)
	snaps := d.snapshots.seqs()
	d.mu.Unlock()
	err := d.runCompaction(job, snaps)
	v.Unref()
	d.mu.Lock()
	return err
}

// jobFor turns the picker's choice, made on v, into a job over v's tables
// (the picker's inputs are v's own TableMetadata).
func (d *DB) jobFor(v *manifest.Version, c *compaction.Compaction) *compactionJob {
	job := &compactionJob{outputLevel: c.OutputLevel, trivialMove: c.TrivialMove, picked: c, v: v}
	add := func(level int, ts []*manifest.TableMetadata) {
		for _, t := range ts {
			job.inputs = append(job.inputs, levelTable{level: level, meta: t})
		}
	}
	add(c.Level, c.Inputs[0])
	for level := c.Level + 1; level < c.OutputLevel; level++ {
		add(level, c.Between[level])
	}
	add(c.OutputLevel, c.Inputs[1])
	job.split = compaction.NewSplitter(c, d.picker.Opts).ShouldSplit
	return job
}
