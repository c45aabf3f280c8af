package kv

import (
	"fmt"
	"sync/atomic"

	"github.com/sievekv/sievekv/vfs"
)

// A memtable rotation used to create the next WAL while holding the head
// of the commit queue: a file create and a directory fsync, a few
// milliseconds on a loaded disk, paid by one writer in every memtable's
// worth and by every writer queued behind it. The next WAL is now created
// in the background as soon as the previous rotation is done, and the
// rotation takes it ready-made (docs/design.md, "Flushes the size
// Pebble's are", which has the measurements).
//
// A crash can therefore leave an empty log newer than the one being
// written, which recovery reads as the end of the chain of logs
// (readLogChain, K11).

// preparedLog is a WAL file created, with its directory entry synced (K1),
// and not yet written, and the Appender that will write it.
type preparedLog struct {
	num fileNum
	f   vfs.File
	out *vfs.Appender
}

// createLog allocates a file number and creates an empty WAL under it,
// syncing the directory so the log's name is durable before any synced
// write in it is acknowledged (K1). It touches no state guarded by d.mu.
func (d *DB) createLog() (*preparedLog, error) {
	num, err := d.allocFileNum()
	if err != nil {
		return nil, err
	}
	return d.createLogNum(num)
}

// createLogNum is createLog under a file number already allocated.
func (d *DB) createLogNum(num fileNum) (*preparedLog, error) {
	f, err := d.fs.Create(d.path(fileKindLog, num))
	if err != nil {
		return nil, fmt.Errorf("kv: create WAL %06d: %w", num, err)
	}
	if err := d.syncDir(); err != nil {
		f.Close()
		d.fs.Remove(d.path(fileKindLog, num))
		return nil, err
	}
	return &preparedLog{num: num, f: f, out: vfs.NewAppender(f, d.walSegmentSize())}, nil
}

// A log created ahead is also warmed ahead: its first segment is mapped
// and its pages made present while the memtable before it fills, so the
// commits that write it take no page faults. With 4 KiB values one Set in
// 16 used to prefault the next 64-128 KiB itself, 1.5 us a page, which
// set the 99th percentile of a WAL-on Set at 94-170 us against Pebble's
// 8-9 us (docs/design.md, "Prefaulted WAL pages"). The segment is sized
// to hold a memtable's log (the records take about what the memtable's
// entries do, plus chunk headers), so a log that rotates on size is
// written through one mapping; warming is capped, so a large memtable's
// log costs the preparation at most maxWarmWALBytes of page cache ahead.
const (
	maxWALSegmentBytes = 64 << 20
	maxWarmWALBytes    = 16 << 20
)

// walSegmentSize is the mapping size of the DB's WALs: MemTableSize plus
// an eighth, in whole MiB, between vfs.DefaultSegmentSize and
// maxWALSegmentBytes.
func (d *DB) walSegmentSize() int64 {
	const mib = 1 << 20
	n := (int64(d.opts.MemTableSize)*9/8 + mib - 1) / mib * mib
	return min(max(n, vfs.DefaultSegmentSize), maxWALSegmentBytes)
}

// logPrep is one WAL being created ahead: its number, taken under d.mu
// when the preparation starts, and the outcome, set before done closes.
// Warming goes on after done until it finishes or stopWarm is set, and
// warmed closes when it has returned: the log's taker sets one and waits
// for the other before it writes or discards the log.
type logPrep struct {
	num      fileNum
	done     chan struct{}
	log      *preparedLog
	err      error
	stopWarm atomic.Bool
	warmed   chan struct{}
}

// maybePrepareLogLocked starts creating the next memtable's WAL unless one
// is ready or being made. REQUIRES: d.mu held.
func (d *DB) maybePrepareLogLocked() {
	if d.opts.DisableWAL || d.opts.ReadOnly || d.closed || d.bgErr != nil || d.nextLog != nil {
		return
	}
	// The number is taken here, under d.mu, and the rotation that needs
	// the log waits for this preparation rather than creating another:
	// file numbers then follow the DB's own steps, not the scheduler's,
	// so one sequence of operations always names its files alike
	// (kvshell's transcripts and explain output name tables by number).
	num, err := d.allocFileNum()
	if err != nil {
		d.opts.Logger("kv: prepare the next WAL: %v", err)
		return
	}
	lp := &logPrep{num: num, done: make(chan struct{}), warmed: make(chan struct{})}
	d.nextLog = lp
	d.bg.Add(1)
	go d.prepareLog(lp)
}

func (d *DB) prepareLog(lp *logPrep) {
	defer d.bg.Done()
	lp.log, lp.err = d.createLogNum(lp.num)
	close(lp.done)
	if lp.err == nil {
		// Before d.mu: a taker waits for warmed while holding it.
		if err := lp.log.out.Warm(int(min(d.walSegmentSize(), maxWarmWALBytes)), &lp.stopWarm); err != nil {
			d.opts.Logger("kv: warm the next WAL: %v", err)
		}
	}
	close(lp.warmed)
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.nextLog != lp {
		return // taken meanwhile by a rotation (or by Close)
	}
	switch {
	case lp.err != nil:
		// Not sticky: the rotation then creates its log itself and
		// reports the failure to the writer that needs the log.
		d.nextLog = nil
		d.opts.Logger("kv: prepare the next WAL: %v", lp.err)
	case d.closed:
		// Closed meanwhile. (No newer log can be in use: while this one
		// is d.nextLog, a rotation takes it rather than making another.)
		d.nextLog = nil
		d.discardLog(lp.log)
	}
}

// takePreparedLog returns the WAL created ahead, waiting for its creation
// if it is under way (a file create and a directory sync, which need no
// lock) and stopping its warming, and leaves none; nil if there is none or
// its creation failed.
// REQUIRES: d.mu held.
func (d *DB) takePreparedLog() *preparedLog {
	lp := d.nextLog
	if lp == nil {
		return nil
	}
	d.nextLog = nil
	<-lp.done
	if lp.err != nil {
		return nil
	}
	// Warming stops at its next chunk (64 KiB, tens of microseconds):
	// what it has done the writer keeps, the rest it prefaults itself.
	lp.stopWarm.Store(true)
	<-lp.warmed
	return lp.log
}

// discardLog closes and removes a prepared WAL that will not be used. A
// failure leaves an empty log, which recovery reads as empty and Open
// removes as obsolete.
func (d *DB) discardLog(p *preparedLog) {
	p.out.Close() // unmaps what warming mapped
	p.f.Close()
	if err := d.fs.Remove(d.path(fileKindLog, p.num)); err != nil {
		d.opts.Logger("kv: remove unused WAL %06d: %v", p.num, err)
	}
}
