//go:build unix

package main

import (
	"syscall"
	"time"
)

// processCPUTime is the CPU time the process has used on every thread:
// the paired phases charge each chunk the difference across it, which
// leaves out time spent waiting for a core on a shared machine.
func processCPUTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0 // a chunk of 0 CPU: pairedCPUSpeed reports none
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
