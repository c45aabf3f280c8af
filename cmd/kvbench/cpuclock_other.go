//go:build !unix

package main

import "time"

// processCPUTime is 0 where getrusage is missing: every chunk's CPU is 0,
// and pairedCPUSpeed reports none rather than a wall-clock figure under a
// CPU label.
func processCPUTime() time.Duration { return 0 }
