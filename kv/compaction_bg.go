package kv

import (
	"github.com/sievekv/sievekv/compaction"
)

// pickerVersion describes v the way the compaction picker sees it.
func (v *version) pickerVersion() *compaction.Version {
	pv := &compaction.Version{}
	for l, ts := range v.levels {
		for _, t := range ts {
			pv.Levels[l] = append(pv.Levels[l], compaction.Table{
				FileNum: uint64(t.fileNum), Size: t.size,
				Smallest: t.smallest.UserKey, Largest: t.largest.UserKey,
			})
		}
	}
	return pv
}

// maybeScheduleCompactionLocked starts the compaction goroutine when the
// picker finds a level due and none is running. At most one background
// compaction runs at a time (the right number for two cores; manual
// compactions queue behind it on compactMu). REQUIRES: d.mu held.
func (d *DB) maybeScheduleCompactionLocked() {
	if d.compacting || d.closed || d.bgErr != nil || d.opts.ReadOnly || d.opts.DisableAutomaticCompactions {
		return
	}
	if d.picker.Pick(d.current.pickerVersion()) == nil {
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
			c = d.picker.Pick(d.current.pickerVersion())
		}
		if c == nil {
			d.compacting = false
			d.flushDone.Broadcast()
			d.mu.Unlock()
			return
		}
		v := d.current
		v.ref()
		job := d.jobFor(v, c)
		snaps := d.snapshots.seqs()
		d.mu.Unlock()

		err := d.runCompaction(job, snaps)
		v.unref()

		d.mu.Lock()
		if err != nil && !d.closed {
			d.setBackgroundErrorLocked("kv: background compaction", err)
		}
		// Writers stalled on L0 wait on flushDone too.
		d.flushDone.Broadcast()
		d.mu.Unlock()
	}
}

// jobFor turns the picker's choice into a job over v's tables.
// REQUIRES: d.mu held.
func (d *DB) jobFor(v *version, c *compaction.Compaction) *compactionJob {
	byNum := map[uint64]*tableMeta{}
	for _, ts := range v.levels {
		for _, t := range ts {
			byNum[uint64(t.fileNum)] = t
		}
	}
	job := &compactionJob{outputLevel: c.OutputLevel, trivialMove: c.TrivialMove, picked: c}
	for i, level := range [2]int{c.Level, c.OutputLevel} {
		for _, t := range c.Inputs[i] {
			job.inputs = append(job.inputs, levelTable{level: level, meta: byNum[t.FileNum]})
		}
	}
	// A tombstone can go when no table below the output level may hold
	// its key: the filters prove it (compaction's C2).
	job.elide = func(k []byte) bool { return d.noOlderVersion(v, c.OutputLevel+1, k) }
	job.split = compaction.NewSplitter(c, d.picker.Opts).ShouldSplit
	return job
}
