package kv

import (
	"fmt"
	"os"
	"slices"

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
// Two logs are kept in preparation, not one. Creating a log takes a
// directory fsync and a fallocate, and on the loaded 2-core test machine
// each took 5-20 ms while a 4 MiB memtable of 4 KiB values filled in 5-9
// ms after a write stall: with one log ahead, a third of the rotations
// waited 7-21 ms for it under the commit queue, and the log it got had
// had no time to warm, so its writers prefaulted their own pages (the
// 99th percentile of such a fill; docs/design.md, "Prefaulted WAL
// pages"). With two, each log has two memtables' time.
//
// A crash can therefore leave empty logs newer than the one being
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
// written through one mapping. Warming covers what such a log fills
// (walWarmBytes), not the segment's rounding up or its 2 MiB floor: a DB
// of 64 KiB memtables warmed 2 MiB per log, 30 times what it wrote, in
// page cache and in zeros written back. It is capped, so a large
// memtable's log costs the preparation at most maxWarmWALBytes of page
// cache ahead.
const (
	maxWALSegmentBytes = 64 << 20
	maxWarmWALBytes    = 16 << 20
)

// walSegmentSize is the mapping size of the DB's WALs: MemTableSize plus
// an eighth, in whole MiB, between vfs.DefaultSegmentSize and
// maxWALSegmentBytes.
func (d *DB) walSegmentSize() int64 {
	return min(max(d.memTableLogBytes(1<<20), vfs.DefaultSegmentSize), maxWALSegmentBytes)
}

// walWarmBytes is how much of a prepared WAL's first segment is warmed:
// MemTableSize plus an eighth, in whole pages, at most the segment and
// maxWarmWALBytes.
func (d *DB) walWarmBytes() int {
	return int(min(d.memTableLogBytes(int64(os.Getpagesize())), d.walSegmentSize(), maxWarmWALBytes))
}

// memTableLogBytes is about what a full memtable's WAL holds, MemTableSize
// plus an eighth, rounded up to a multiple of unit.
func (d *DB) memTableLogBytes(unit int64) int64 {
	return (int64(d.opts.MemTableSize)*9/8 + unit - 1) / unit * unit
}

// logPrep is one WAL being created ahead: its number, taken under d.mu
// when the preparation starts, and the outcome, set before done closes.
// The log's warming, started before done closes, goes on beside whoever
// takes the log (vfs.Appender.StartWarm), until the Appender's Close.
type logPrep struct {
	num  fileNum
	done chan struct{}
	log  *preparedLog
	err  error
}

// walPrepareDepth is how many WALs are made ahead.
const walPrepareDepth = 2

// maybePrepareLogLocked starts creating WALs until walPrepareDepth are
// ready or being made. REQUIRES: d.mu held.
func (d *DB) maybePrepareLogLocked() {
	for len(d.nextLogs) < walPrepareDepth && d.prepareOneLogLocked() {
	}
}

// prepareOneLogLocked starts creating one more WAL, reporting whether it
// did. REQUIRES: d.mu held.
func (d *DB) prepareOneLogLocked() bool {
	if d.opts.DisableWAL || d.opts.ReadOnly || d.closed || d.bgErr != nil {
		return false
	}
	// The number is taken here, under d.mu, and the rotation that needs
	// the log waits for this preparation rather than creating another:
	// file numbers then follow the DB's own steps, not the scheduler's,
	// so one sequence of operations always names its files alike
	// (kvshell's transcripts and explain output name tables by number).
	num, err := d.allocFileNum()
	if err != nil {
		d.opts.Logger("kv: prepare the next WAL: %v", err)
		return false
	}
	lp := &logPrep{num: num, done: make(chan struct{})}
	d.nextLogs = append(d.nextLogs, lp)
	d.bg.Add(1)
	go d.prepareLog(lp)
	return true
}

func (d *DB) prepareLog(lp *logPrep) {
	defer d.bg.Done()
	lp.log, lp.err = d.createLogNum(lp.num)
	if lp.err == nil {
		// Before done: the taker writes the Appender, and mapping its
		// first segment must be over by then. A taker waits for done while
		// holding d.mu, so none is taken here.
		if err := lp.log.out.StartWarm(d.walWarmBytes()); err != nil {
			d.opts.Logger("kv: warm the next WAL: %v", err)
		}
	}
	close(lp.done)
	d.mu.Lock()
	defer d.mu.Unlock()
	i := slices.Index(d.nextLogs, lp)
	if i < 0 {
		return // taken meanwhile by a rotation (or by Close)
	}
	switch {
	case lp.err != nil:
		// Not sticky: a rotation with no log ready creates its log
		// itself and reports the failure to the writer that needs it.
		d.nextLogs = slices.Delete(d.nextLogs, i, i+1)
		d.opts.Logger("kv: prepare the next WAL: %v", lp.err)
	case d.closed:
		// Closed meanwhile. (No newer log can be in use: while this one
		// is among d.nextLogs, a rotation takes it or an older one
		// rather than making another.)
		d.nextLogs = slices.Delete(d.nextLogs, i, i+1)
		d.discardLog(lp.log)
	}
}

// takePreparedLog returns the oldest WAL created ahead, waiting for its
// creation if it is under way (a file create, a directory sync and a
// mapping, which need no lock); one whose creation failed is dropped and
// the next is taken, so nil means that none is left (the rotation then
// creates one). A rotation that created its own log while a newer
// prepared one was queued would give the memtable after it a lower log
// number than its own, and recovery reads logs in number order as one
// chain (K11). The log's warming goes on: the writes that follow skip
// what it has done and prefault the rest themselves. (The rotation used
// to stop the warming and wait for it, which on the busy 2-core test
// machine took up to 2.5 ms under d.mu whenever the warming goroutine was
// waiting for a P between its chunks.)
// REQUIRES: d.mu held.
func (d *DB) takePreparedLog() *preparedLog {
	for len(d.nextLogs) > 0 {
		lp := d.nextLogs[0]
		d.nextLogs = slices.Delete(d.nextLogs, 0, 1)
		<-lp.done
		if lp.err == nil {
			return lp.log
		}
	}
	return nil
}

// discardLog closes and removes a prepared WAL that will not be used. A
// failure leaves an empty log, which recovery reads as empty and Open
// removes as obsolete.
func (d *DB) discardLog(p *preparedLog) {
	p.out.Close() // stops the warming and unmaps what it mapped
	p.f.Close()
	if err := d.fs.Remove(d.path(fileKindLog, p.num)); err != nil {
		d.opts.Logger("kv: remove unused WAL %06d: %v", p.num, err)
	}
}
