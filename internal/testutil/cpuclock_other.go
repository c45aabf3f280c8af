//go:build !unix

package testutil

import (
	"testing"
	"time"
)

var processStart = time.Now()

// ProcessCPUTime falls back to wall-clock time where getrusage is missing:
// paired ratios still compare like with like, with more noise.
func ProcessCPUTime(testing.TB) time.Duration { return time.Since(processStart) }
