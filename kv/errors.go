package kv

import (
	"errors"
	"fmt"

	"github.com/sievekv/sievekv/internal/base"
)

var (
	// ErrNotFound is returned by Get for a key with no visible value.
	ErrNotFound = errors.New("kv: not found")
	// ErrClosed is returned by every operation on a closed DB, iterator or
	// snapshot.
	ErrClosed = errors.New("kv: closed")
	// ErrCorruption is matched (errors.Is) by every error that reports
	// damaged persistent data, from any layer: a WAL record, the MANIFEST,
	// a table block. It is the same sentinel the lower layers wrap.
	ErrCorruption = base.ErrCorruption
	// ErrLocked is returned by Open when another DB holds the directory:
	// a writer excludes every other open, a ReadOnly open excludes writers.
	ErrLocked = errors.New("kv: database directory is locked by another process")
	// ErrInvalidOptions is returned by Open for out-of-range options.
	ErrInvalidOptions = errors.New("kv: invalid options")
	// ErrInvalidArgument is returned for an argument no call could accept,
	// such as an empty directory name given to Open or a DeleteRange whose
	// start is not before its end.
	ErrInvalidArgument = errors.New("kv: invalid argument")
	// ErrFileNumbersExhausted is returned (wrapped) by the write that would
	// need a file number past the engine's range: the counter never wraps
	// onto numbers of live files.
	ErrFileNumbersExhausted = errors.New("kv: file numbers exhausted")
	// ErrDBDoesNotExist is returned (wrapped, with fs.ErrNotExist) by Open
	// when the directory holds no DB and Options.ErrorIfNotExists or
	// ReadOnly forbids creating one.
	ErrDBDoesNotExist = errors.New("kv: no database in the directory")
	// ErrDBExists is returned (wrapped) by Open when the directory holds a
	// DB and Options.ErrorIfExists is set.
	ErrDBExists = errors.New("kv: database already exists")
	// ErrReadOnly is returned by writes to a DB opened with ReadOnly, and by
	// writes after a background failure left the DB read-only.
	ErrReadOnly = errors.New("kv: database is read-only")
)

// setBackgroundErrorLocked records the first failure of background work or
// of the WAL as the DB's sticky error (LevelDB's bg_error_): from then on
// every write returns it. It wraps both ErrReadOnly, as the package
// promises for this state, and the cause. REQUIRES: d.mu held.
func (d *DB) setBackgroundErrorLocked(what string, err error) {
	if d.bgErr != nil {
		return
	}
	d.bgErr = fmt.Errorf("%w: %s failed: %w", ErrReadOnly, what, err)
	d.counters.bgErrors.Add(1)
}
