package kv

import (
	"cmp"
	"fmt"

	"github.com/sievekv/sievekv/vfs"
	"github.com/sievekv/sievekv/wal"
)

// A memtable rotation used to fdatasync the old WAL while holding the head
// of the commit queue: 3.5-13 ms on a loaded disk, paid once per memtable
// by the writer that filled it and by every writer queued behind it. The
// old log is now synced and closed in the background (syncRetiredLog), and
// K11 keeps recovery sound without that sync on the writer's path:
//
//   - a Sync commit's own fsync waits until every older log is durable
//     (waitOlderLogs), so a log holding a synced mark (wal's W4) proves
//     every older log whole;
//   - recovery replays the logs as one chain and stops at the first place
//     the chain breaks (a torn tail, an empty log, a gap in the sequence
//     numbers), dropping everything after it, unless a later log holds a
//     synced mark, which makes the break corruption (readLogChain).
//
// docs/design.md, "Old logs sync in the background", has the reasoning,
// the failure modes and the measurements.

// logSync is the background sync and close of one retired WAL. err is set
// before done closes; it is the first failure of this log's sync or of any
// older retired log's, so waiting on the newest logSync waits for all.
type logSync struct {
	num  fileNum
	done chan struct{}
	err  error
}

// wait blocks until this log and every older retired log are durable and
// returns the first failure among them. A nil logSync has nothing to wait
// for.
func (s *logSync) wait() error {
	if s == nil {
		return nil
	}
	<-s.done
	return s.err
}

// retireWALLocked hands the memtable's WAL to a background sync and close.
// Every commit group has already flushed its bytes into the file (the
// mapping, or write(2) where there is none), so a process crash loses no
// acknowledged write from here on; the Flush below only catches bytes a
// caller left buffered.
//
// The mapping is unmapped here, before the sync rather than after it: the
// stores stay in the page cache and the file's fsync writes them back
// (vfs V4), and writeback then finds no mapped page to write-protect,
// which on Linux means page-table changes (and TLB shootdowns) in the
// process whose writer is storing into the next log's mapping meanwhile.
// A munmap costs the rotation far less than the fdatasync it no longer
// waits for. REQUIRES: d.mu held by the commit leader.
func (d *DB) retireWALLocked(m *memTable) error {
	if m.wal == nil {
		return nil
	}
	if err := m.wal.Flush(); err != nil {
		return fmt.Errorf("kv: close WAL %06d: %w", m.logNum, err)
	}
	if err := m.logOut.Close(); err != nil {
		return fmt.Errorf("kv: close WAL %06d: %w", m.logNum, err)
	}
	s := &logSync{num: m.logNum, done: make(chan struct{})}
	older := d.lastLogSync
	d.lastLogSync = s
	m.logSync = s
	f := m.logFile
	m.wal, m.logOut, m.logFile = nil, nil, nil
	d.bg.Add(1)
	go d.syncRetiredLog(s, older, f)
	return nil
}

// syncRetiredLog syncs and closes one retired WAL, then waits for the
// older ones so that s.done closing means all of them are durable (K11). A
// failure is sticky for the DB: the log's tail is then unknown, and a
// later Sync commit must not claim durability over it.
func (d *DB) syncRetiredLog(s, older *logSync, f vfs.File) {
	defer d.bg.Done()
	err := f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		err = fmt.Errorf("kv: sync WAL %06d: %w", s.num, err)
	}
	if oerr := older.wait(); err == nil {
		err = oerr
	}
	s.err = err
	close(s.done)
	if err != nil {
		d.mu.Lock()
		d.setBackgroundErrorLocked("kv: sync of a retired write-ahead log", err)
		d.mu.Unlock()
	}
}

// waitOlderLogs returns once every WAL retired before the one a Sync is
// about to fsync is durable (K11), with the first failure among them.
// Called by the commit leader without d.mu.
func waitOlderLogs(older *logSync) error {
	if err := older.wait(); err != nil {
		return fmt.Errorf("kv: an older write-ahead log did not sync: %w", err)
	}
	return nil
}

// closeLogFiles syncs the log (wal.Writer.Close) and closes its output and
// file, all three, returning the first failure (cmp.Or).
func closeLogFiles(num fileNum, w *wal.Writer, out *vfs.Appender, f vfs.File) error {
	if err := cmp.Or(w.Close(), out.Close(), f.Close()); err != nil {
		return fmt.Errorf("kv: close WAL %06d: %w", num, err)
	}
	return nil
}
