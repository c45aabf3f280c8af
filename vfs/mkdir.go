package vfs

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// MkdirAllDurable is MkdirAll whose new directories survive a power loss
// (V1): a directory's name is an entry of its parent like a file's, so
// each parent that gained a new entry is synced, top down. Syncing the
// new directory's own entries stays its user's job. It uses
// filepath.Dir, which FS paths follow (PathJoin on both implementations).
func MkdirAllDurable(fsys FS, dir string, perm os.FileMode) error {
	// The directories to create, deepest first: up to the first that
	// exists.
	var created []string
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		if _, err := fsys.Stat(d); err == nil || !errors.Is(err, fs.ErrNotExist) {
			break
		}
		created = append(created, d)
		if p := filepath.Dir(d); p == d {
			break
		}
	}
	if err := fsys.MkdirAll(dir, perm); err != nil {
		return err
	}
	for i := len(created) - 1; i >= 0; i-- {
		parent := filepath.Dir(created[i])
		if err := SyncDir(fsys, parent); err != nil {
			return fmt.Errorf("vfs: make %s durable: %w", created[i], err)
		}
	}
	return nil
}

// SyncDir makes dir's entries durable (V1): the names of the files and
// directories created in it, renamed into it or removed from it.
func SyncDir(fsys FS, dir string) error {
	f, err := fsys.OpenDir(dir)
	if err != nil {
		return fmt.Errorf("open directory %s: %w", dir, err)
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("sync directory %s: %w", dir, err)
	}
	return nil
}
