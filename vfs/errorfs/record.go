package errorfs

import (
	"slices"
	"sync"

	"github.com/sievekv/sievekv/vfs"
)

// Record wraps inner counting the operations in ops, as Wrap, and also
// returns the names those operations touched so far, in order: a test
// sees which files and directories were synced, say, and may still make
// one fail with FailAt. It replaces any SetMatch.
func Record(inner vfs.FS, ops Op) (*FS, func() []string) {
	fs := Wrap(inner, ops)
	var mu sync.Mutex
	var names []string
	fs.SetMatch(func(_ Op, name string) bool {
		mu.Lock()
		names = append(names, name)
		mu.Unlock()
		return true
	})
	return fs, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(names)
	}
}
