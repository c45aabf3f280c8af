package base

import (
	"errors"
	"fmt"
)

// ErrCorruption is the sentinel every corruption error wraps (B4): a
// checksum mismatch, a malformed block, an impossible length, a bad magic.
var ErrCorruption = errors.New("corruption")

// corruptionError carries a formatted message while matching ErrCorruption
// and any error the message itself wrapped with %w.
type corruptionError struct {
	err error
}

func (e *corruptionError) Error() string   { return e.err.Error() }
func (e *corruptionError) Unwrap() []error { return []error{ErrCorruption, e.err} }

// CorruptionErrorf formats an error that satisfies errors.Is(err,
// ErrCorruption) (B4). By convention the message starts with the package and
// names the file and offset: "sstable: 000012.sst: block at offset 4096:
// checksum mismatch". %w verbs in format are honoured, so the result also
// matches whatever they wrap.
func CorruptionErrorf(format string, args ...any) error {
	return &corruptionError{err: fmt.Errorf(format, args...)}
}

// IsCorruption is errors.Is(err, ErrCorruption).
func IsCorruption(err error) bool { return errors.Is(err, ErrCorruption) }
