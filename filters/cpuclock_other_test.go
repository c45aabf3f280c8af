//go:build !linux

package filters

import "time"

var clockStart = time.Now()

// threadCPUTime falls back to wall-clock time where no per-thread CPU clock
// is wired up.
func threadCPUTime() time.Duration { return time.Since(clockStart) }
