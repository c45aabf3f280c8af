//go:build linux

package filters

import (
	"syscall"
	"time"
	"unsafe"
)

// threadCPUTime returns the CPU time the calling OS thread has used
// (clock_gettime(CLOCK_THREAD_CPUTIME_ID)). On a shared, overloaded machine
// it excludes the time the thread spent descheduled, which wall-clock
// timings cannot. Callers lock the goroutine to its thread.
func threadCPUTime() time.Duration {
	const clockThreadCPUTimeID = 3
	var ts syscall.Timespec
	_, _, errno := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, clockThreadCPUTimeID, uintptr(unsafe.Pointer(&ts)), 0)
	if errno != 0 {
		panic(errno)
	}
	return time.Duration(ts.Nano())
}
