package main

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// resetPeakRSS starts a new peak-RSS window where the kernel allows it:
// writing 5 to /proc/self/clear_refs resets VmHWM (Linux >= 4.0). Where it
// does not, peakRSSMB falls back to getrusage's lifetime peak.
func resetPeakRSS() {
	_ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0)
}

// peakRSSMB is the peak resident set in MiB since the last resetPeakRSS
// (VmHWM), or since the process started (getrusage ru_maxrss).
func peakRSSMB() float64 {
	if f, err := os.Open("/proc/self/status"); err == nil {
		defer f.Close()
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if rest, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
				kb, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 64)
				if err == nil {
					return kb / 1024
				}
			}
		}
	}
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return -1
	}
	return float64(ru.Maxrss) / 1024 // Linux reports KiB
}
