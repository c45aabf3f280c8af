package kv

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/sievekv/sievekv/vfs"
)

// currentWriteFS calls onWrite with the directory's listing at the
// instant a file under dir is written a CURRENT's body (a MANIFEST name):
// what a process killed just then would leave.
type currentWriteFS struct {
	vfs.FS
	dir     string
	onWrite func(listing []string)
}

func (c *currentWriteFS) Create(name string) (vfs.File, error) {
	f, err := c.FS.Create(name)
	if err != nil || !strings.HasPrefix(name, c.dir+"/") {
		return f, err
	}
	return &currentWriteFile{File: f, fs: c}, nil
}

type currentWriteFile struct {
	vfs.File
	fs *currentWriteFS
}

func (f *currentWriteFile) Write(p []byte) (int, error) {
	if bytes.HasPrefix(p, []byte("MANIFEST-")) && bytes.HasSuffix(p, []byte("\n")) {
		listing, err := f.fs.FS.List(f.fs.dir)
		if err != nil {
			panic(err)
		}
		f.fs.onWrite(listing)
	}
	return f.File.Write(p)
}

// TestCheckpointCurrentAppearsWhole: at the instant a checkpoint writes
// CURRENT's body, no file named CURRENT exists yet. Written in place, a
// kill between its create and its write left an empty CURRENT, which
// Open reports as corruption instead of an unfinished checkpoint
// (TestCheckpointKillLeavesSourceIntact hit it once in a few hundred
// kills); written as a temp file and renamed, CURRENT appears whole.
func TestCheckpointCurrentAppearsWhole(t *testing.T) {
	mem := vfs.NewMem()
	writes := 0
	fs := &currentWriteFS{FS: mem, dir: "cp", onWrite: func(listing []string) {
		writes++
		if slices.Contains(listing, fileName(fileKindCurrent, 0)) {
			t.Errorf("CURRENT exists before its body is written: %v", listing)
		}
	}}
	d := openMem(t, fs, nil)
	defer d.Close()
	if err := d.Set([]byte("k"), []byte("v"), Sync); err != nil {
		t.Fatal(err)
	}
	if err := d.Checkpoint("cp"); err != nil {
		t.Fatal(err)
	}
	if writes != 1 {
		t.Fatalf("saw %d writes of CURRENT's body, want 1", writes)
	}
	c, err := Open("cp", &Options{FS: mem})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if v, err := c.Get([]byte("k")); err != nil || string(v) != "v" {
		t.Fatalf("checkpoint Get = %q, %v", v, err)
	}
	names, _ := mem.List("cp")
	for _, n := range names {
		if strings.HasSuffix(n, ".tmp") {
			t.Errorf("the checkpoint kept its temp file %s", n)
		}
	}
}
