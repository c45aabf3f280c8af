package filters

import (
	"errors"
	"fmt"
)

var (
	// ErrCorrupt is wrapped by every decoding error: wrong magic, unknown type
	// or version, truncation, checksum mismatch or impossible parameters.
	ErrCorrupt = errors.New("filters: corrupt encoding")
	// ErrInvalidArgument reports a constructor argument out of range, such as
	// n <= 0 or a false-positive rate outside (0, 1).
	ErrInvalidArgument = errors.New("filters: invalid argument")
	// ErrFull reports that a dynamic filter could not take another key. The
	// filter is unchanged (invariant F2).
	ErrFull = errors.New("filters: filter is full")
	// ErrNotMember reports a Remove of a key the filter proves was never added.
	ErrNotMember = errors.New("filters: key is definitely not a member")
	// ErrBuildFailed reports that a static filter's construction did not
	// succeed within its bounded number of seeds. With well-distributed
	// hashes and deduplicated input this is astronomically unlikely.
	ErrBuildFailed = errors.New("filters: construction failed for every seed tried")
	// ErrUnknownType reports a filter name ParseType does not know, or a Type
	// with no table policy (NewPolicy).
	ErrUnknownType = errors.New("filters: unknown filter type")
)

// errZeroValueFull is what Add on the zero value of a dynamic filter returns:
// a filter no constructor or UnmarshalBinary made has no slots, so it is
// full before its first key. It is static so that the path allocates nothing.
var errZeroValueFull = fmt.Errorf("filters: zero-value filter has no slots (make it with its constructor): %w", ErrFull)

// loadOf is count/capacity, 0 for a zero-capacity (zero-value) filter
// rather than NaN: an empty filter is not loaded.
func loadOf(count, capacity uint64) float64 {
	if capacity == 0 {
		return 0
	}
	return float64(count) / float64(capacity)
}

// corruptf returns an error wrapping ErrCorrupt with a formatted detail.
func corruptf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrCorrupt, fmt.Sprintf(format, args...))
}

// invalidf returns an error wrapping ErrInvalidArgument with a formatted detail.
func invalidf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalidArgument, fmt.Sprintf(format, args...))
}

// checkSizing validates the (n, fpRate) pair every sized constructor takes.
func checkSizing(n int, fpRate float64) error {
	if n <= 0 {
		return invalidf("n must be positive, got %d", n)
	}
	if !(fpRate > 0 && fpRate < 1) { // also rejects NaN
		return invalidf("false-positive rate must be in (0, 1), got %v", fpRate)
	}
	return nil
}
