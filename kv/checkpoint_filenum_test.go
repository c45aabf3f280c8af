package kv

import (
	"errors"
	"testing"

	"github.com/sievekv/sievekv/vfs"
)

// TestCheckpointAtTheEndOfTheFileNumbers: a checkpoint names its MANIFEST
// with the source's next file number (and CURRENT's temp file with the
// one after). With the counter exhausted, past maxFileNum, Checkpoint
// reported success and wrote a CURRENT naming "MANIFEST-281474976710656",
// which Open does not take for a manifest: no DB. It must fail with
// ErrFileNumbersExhausted and leave nothing. With the last number left
// the checkpoint is written, and opens read-only (a writable Open needs
// numbers, and says so).
func TestCheckpointAtTheEndOfTheFileNumbers(t *testing.T) {
	for _, next := range []uint64{uint64(maxFileNum), uint64(maxFileNum) + 1} {
		fs := vfs.NewMem()
		d := openMem(t, fs, nil)
		if err := d.Set([]byte("a"), []byte("1"), Sync); err != nil {
			t.Fatal(err)
		}
		if err := d.Flush(); err != nil {
			t.Fatal(err)
		}
		d.manifest.nextFileNum.Store(next)
		err := d.Checkpoint("cp")
		if cerr := d.Close(); cerr != nil {
			t.Fatal(cerr)
		}
		if next > uint64(maxFileNum) {
			if !errors.Is(err, ErrFileNumbersExhausted) {
				t.Errorf("next file number %d: Checkpoint = %v, want ErrFileNumbersExhausted", next, err)
			}
			if names, lerr := fs.List("cp"); lerr == nil {
				t.Errorf("next file number %d: the failed Checkpoint left cp holding %q", next, names)
			}
			continue
		}
		if err != nil {
			t.Fatalf("next file number %d: Checkpoint: %v", next, err)
		}
		if _, err := Open("cp", &Options{FS: fs}); !errors.Is(err, ErrFileNumbersExhausted) {
			t.Errorf("next file number %d: writable Open of the checkpoint = %v, want ErrFileNumbersExhausted", next, err)
		}
		c, err := Open("cp", &Options{FS: fs, ReadOnly: true})
		if err != nil {
			t.Fatalf("next file number %d: read-only Open of the checkpoint: %v", next, err)
		}
		if v, err := c.Get([]byte("a")); err != nil || string(v) != "1" {
			t.Errorf("next file number %d: checkpoint Get = %q, %v", next, v, err)
		}
		c.Close()
	}
}
