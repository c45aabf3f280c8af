package testutil

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// OpenFilesUnder returns the base names of the files in dir (or below it)
// this process holds a descriptor on (Linux /proc/self/fd; the test is
// skipped elsewhere): a leak check that other tests' files cannot disturb.
func OpenFilesUnder(t testing.TB, dir string) []string {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("no /proc/self/fd: %v", err)
	}
	var names []string
	for _, fd := range fds {
		target, err := os.Readlink(filepath.Join("/proc/self/fd", fd.Name()))
		if err == nil && strings.HasPrefix(target, dir+string(filepath.Separator)) {
			names = append(names, filepath.Base(target))
		}
	}
	return names
}
