//go:build !linux

package vfs

import "os"

// Elsewhere OS files have no Mapper capability: Appender writes them.
func wrapOSFile(f *os.File) File { return f }
