//go:build unix

package testutil

import (
	"syscall"
	"testing"
	"time"
)

// ProcessCPUTime is the CPU time the process has used on every thread (so
// the garbage collector's work counts). Paired benchmarks charge each side
// the difference across its chunk of work: on a shared, overloaded machine
// it leaves out time spent descheduled, which wall-clock timings cannot.
func ProcessCPUTime(tb testing.TB) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
