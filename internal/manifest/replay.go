package manifest

import (
	"fmt"
	"io"
)

// Records yields a MANIFEST's records in order, one encoded VersionEdit
// each, and io.EOF after the last. The engine's is a wal.Reader over the
// MANIFEST file (docs/format.md, "MANIFEST").
type Records interface {
	Next() ([]byte, error)
}

// Replay decodes every record of a MANIFEST and folds it onto an empty
// version: the replay Open does. It returns the fold, for the caller to
// Apply, and the number of records folded, so the caller can refuse a
// MANIFEST without one. A record that does not decode or does not fold
// (M4) fails the replay with an error naming it (record N, counted from 1)
// and wrapping ErrCorruption. An error from r is returned as it came,
// together with the fold of the records before it, so that a caller that
// tolerates a torn last record can tell one and keep what was read.
func Replay(r Records) (*BulkVersionEdit, int, error) {
	var fold BulkVersionEdit
	n := 0
	for {
		rec, err := r.Next()
		if err == io.EOF {
			return &fold, n, nil
		}
		if err != nil {
			return &fold, n, err
		}
		var e VersionEdit
		if err := e.Decode(rec); err != nil {
			return &fold, n, fmt.Errorf("record %d: %w", n+1, err)
		}
		if err := fold.Accumulate(&e); err != nil {
			return &fold, n, fmt.Errorf("record %d: %w", n+1, err)
		}
		n++
	}
}
