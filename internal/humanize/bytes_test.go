package humanize

import (
	"math"
	"testing"
)

// TestBytes checks every unit at its first value and half-way to the next,
// the exact count below 1 KiB, and both ends of the range.
func TestBytes(t *testing.T) {
	check := func(n uint64, want string) {
		t.Helper()
		if got := Bytes(n); got != want {
			t.Errorf("Bytes(%d) = %q, want %q", n, got, want)
		}
	}
	check(0, "0 B")
	check(1023, "1023 B")
	for i, unit := range []string{"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"} {
		n := uint64(1) << (10 * (i + 1))
		check(n, "1.0 "+unit)
		check(n+n/2, "1.5 "+unit)
	}
	check(1<<20-1, "1024.0 KiB") // rounds up without moving to MiB
	check(math.MaxUint64, "16.0 EiB")
}
