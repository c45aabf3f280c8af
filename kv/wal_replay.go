package kv

import (
	"errors"
	"fmt"
	"io"

	"github.com/sievekv/sievekv/internal/base"
	"github.com/sievekv/sievekv/wal"
)

// walRecord is one batch read back from a WAL by readLogChain.
type walRecord struct {
	log   fileNum
	data  []byte // valid until the callback returns
	end   int64  // file offset just past the record
	first base.SeqNum
	count uint32
}

// readLogChain reads the WALs recovery replays (logs, sorted, oldest
// first) as one chain and hands each batch to apply, in order, keeping
// K11: the records returned are a prefix of the chain's records.
//
// The chain breaks where a crash or a power loss cut it: a torn tail in
// some log, an empty log followed by one holding records, or a log whose
// first batch does not continue the previous log's sequence numbers (the
// previous log lost its unsynced tail to zeros, which reads as a clean end
// by wal's W6). Everything after a break is dropped with a note: it can
// only hold writes acknowledged without Sync, since a Sync waits for every
// older log to be durable. If a log after the break holds a synced mark
// (wal's W4), an older log had been durable whole, so the break is
// corruption, as is damage the wal Reader itself proves.
func (d *DB) readLogChain(logs []fileNum, note func(string), apply func(walRecord) error) error {
	var (
		prevLast  base.SeqNum // last sequence number of the chain so far
		havePrev  bool
		emptyLog  fileNum // an earlier log holding no record, 0 if none
		haveEmpty bool
	)
	for i, num := range logs {
		name := fileName(fileKindLog, num)
		broken, err := d.readChainLog(num, func(rec walRecord, firstOfLog bool) (string, error) {
			if rec.count == 0 {
				return "", apply(rec)
			}
			if firstOfLog {
				switch {
				case haveEmpty:
					return fmt.Sprintf("WAL %s holds records after the empty WAL %s", name, fileName(fileKindLog, emptyLog)), nil
				case havePrev && rec.first != prevLast+1:
					return fmt.Sprintf("WAL %s starts at sequence %d, not %d where the WAL before it ends", name, rec.first, prevLast+1), nil
				}
			}
			prevLast, havePrev = rec.first+base.SeqNum(rec.count)-1, true
			return "", apply(rec)
		})
		if err != nil {
			return err
		}
		switch {
		case broken.reason == "" && broken.records == 0 && !haveEmpty:
			emptyLog, haveEmpty = num, true
		case broken.reason != "":
			// A break before this log's first record leaves this log as
			// the first to prove anything; after it, the later logs.
			rest := logs[i+1:]
			if broken.beforeLog {
				rest = logs[i:]
			}
			if proof, ok := d.syncedLogAmong(rest); ok {
				return base.CorruptionErrorf("kv: %s, but WAL %s holds a synced record, so the logs before it were durable", broken.reason, fileName(fileKindLog, proof))
			}
			note(fmt.Sprintf("kv: %s: keeping the records before it, dropping the rest of the write-ahead log (%d later WALs), as a crash or power loss leaves writes not yet synced", broken.reason, len(rest)))
			return nil
		}
	}
	return nil
}

// chainBreak says how one log of the chain ended.
type chainBreak struct {
	reason    string // "" at a clean end
	beforeLog bool   // the break lies before the log's first record
	records   int    // records handed on
}

// readChainLog reads WAL num, handing each record to each (firstOfLog is
// true for the log's first record carrying sequence numbers), and stops at
// the first break each reports or at a torn tail. Damage the wal Reader
// proves is corruption.
func (d *DB) readChainLog(num fileNum, each func(rec walRecord, firstOfLog bool) (string, error)) (chainBreak, error) {
	name := fileName(fileKindLog, num)
	f, err := d.fs.Open(d.path(fileKindLog, num))
	if err != nil {
		return chainBreak{}, fmt.Errorf("kv: open WAL %s: %w", name, err)
	}
	defer f.Close()
	r := wal.NewReader(io.NewSectionReader(f, 0, 1<<62), uint64(num))
	var b chainBreak
	sawSeq := false
	for {
		data, err := r.Next()
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			if errors.Is(err, wal.ErrTornTail) {
				b.reason = fmt.Sprintf("WAL %s has a torn tail after offset %d (%v)", name, r.LastRecordEnd(), err)
				return b, nil
			}
			if errors.Is(err, wal.ErrRead) {
				// The file could not be read: a fault of the device or
				// the file system, not damaged data.
				return b, fmt.Errorf("kv: WAL %s: %w", name, err)
			}
			return b, base.CorruptionErrorf("kv: WAL %s: %w", name, err)
		}
		first, count, err := decodeBatch(data, nil)
		if err != nil {
			return b, base.CorruptionErrorf("kv: WAL %s: record ending at offset %d: %w", name, r.LastRecordEnd(), err)
		}
		rec := walRecord{log: num, data: data, end: r.LastRecordEnd(), first: first, count: count}
		firstOfLog := count > 0 && !sawSeq
		sawSeq = sawSeq || count > 0
		reason, err := each(rec, firstOfLog)
		if err != nil {
			return b, err
		}
		if reason != "" {
			b.reason, b.beforeLog = reason, firstOfLog
			return b, nil
		}
		b.records++
	}
}

// syncedLogAmong returns the first of logs holding a chunk with a synced
// mark: proof that a Sync of that log completed, and so (K11) that every
// older log was durable whole. Unreadable logs prove nothing.
func (d *DB) syncedLogAmong(logs []fileNum) (fileNum, bool) {
	for _, num := range logs {
		f, err := d.fs.Open(d.path(fileKindLog, num))
		if err != nil {
			continue
		}
		r := wal.NewReader(io.NewSectionReader(f, 0, 1<<62), uint64(num))
		for {
			if _, err := r.Next(); err != nil {
				break
			}
		}
		f.Close()
		if r.SyncedMark() > 0 {
			return num, true
		}
	}
	return 0, false
}
