package vfs

import (
	"bytes"
	"fmt"
	"io"
	"path/filepath"
	"testing"
)

// An Appender's segment size need not be a multiple of the page size: the
// OS file's Map wants page-aligned offsets, so a segment of 5000 bytes once
// made the second segment's Map fail and every Write after it with it.
func TestAppenderOddSegmentSize(t *testing.T) {
	for _, seg := range []int64{1, 1000, 5000, 4097} {
		f, err := Default.Create(filepath.Join(t.TempDir(), "log"))
		if err != nil {
			t.Fatal(err)
		}
		a := NewAppender(f, seg)
		want := bytes.Repeat([]byte("0123456789abcdef"), 2000) // 32000 bytes
		for p := want; len(p) > 0; p = p[min(len(p), 700):] {
			if _, err := a.Write(p[:min(len(p), 700)]); err != nil {
				t.Fatalf("segment %d: Write at %d: %v", seg, a.Size(), err)
			}
		}
		if err := a.Sync(); err != nil {
			t.Fatal(err)
		}
		a.Close()
		got := make([]byte, len(want))
		if _, err := f.ReadAt(got, 0); err != nil && err != io.EOF {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("segment %d: file does not hold what was written", seg)
		}
		f.Close()
	}
}

// Write after Close fails whatever the Appender had done: it once failed
// only when a segment was mapped, so an Appender closed before its first
// Write (or one writing through Write, as on MemFS) took more bytes, and a
// mapped one mapped a segment that nothing would unmap.
func TestAppenderWriteAfterClose(t *testing.T) {
	for _, c := range []struct {
		name string
		fs   FS
		dir  string
	}{{"os", Default, t.TempDir()}, {"mem", NewMem(), "/"}} {
		for _, wrote := range []bool{false, true} {
			f, err := c.fs.Create(c.fs.PathJoin(c.dir, fmt.Sprintf("log-%v", wrote)))
			if err != nil {
				t.Fatal(err)
			}
			a := NewAppender(f, 0)
			if wrote {
				if _, err := a.Write([]byte("x")); err != nil {
					t.Fatal(err)
				}
			}
			a.Close()
			if _, err := a.Write([]byte("y")); err == nil {
				t.Errorf("%s, wrote before Close %v: Write after Close succeeded", c.name, wrote)
			}
			a.Close()
			f.Close()
		}
	}
}
