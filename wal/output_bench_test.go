package wal

import (
	"bytes"
	"io"
	"path/filepath"
	"testing"

	"github.com/sievekv/sievekv/vfs"
)

// BenchmarkCommitOutput compares the two ways a commit group's records can
// reach the OS (docs/design.md, "WAL output"): write(2) per group, groups
// of one (a single writer) and of eight (eight writers batched by group
// commit), against stores into a preallocated mapped segment; and the same
// with a Sync per group. Records are 130 bytes, a 16-byte key and 100-byte
// value Set.
//
//	go test -run '^$' -bench CommitOutput -count 6 ./wal
func BenchmarkCommitOutput(b *testing.B) {
	rec := bytes.Repeat([]byte{0x5a}, 130)
	for _, sync := range []bool{false, true} {
		for _, c := range []struct {
			name   string
			group  int
			mapped bool
		}{{"write/group=1", 1, false}, {"write/group=8", 8, false}, {"mmap/group=1", 1, true}, {"mmap/group=8", 8, true}} {
			name := c.name
			if sync {
				name = "sync/" + name
			}
			b.Run(name, func(b *testing.B) {
				f, err := vfs.Default.Create(filepath.Join(b.TempDir(), "000001.log"))
				if err != nil {
					b.Fatal(err)
				}
				defer f.Close()
				var out interface {
					io.Writer
					Syncer
				} = f
				if c.mapped {
					a := vfs.NewAppender(f, 0)
					if !a.Mapped() {
						b.Skip("OS file system cannot map files here")
					}
					defer a.Close()
					out = a
				}
				w := NewWriter(out, out, 1)
				b.SetBytes(int64(len(rec)))
				b.ReportAllocs()
				i := 0
				for b.Loop() {
					if _, err := w.WriteRecord(rec); err != nil {
						b.Fatal(err)
					}
					i++
					if i%c.group != 0 {
						continue
					}
					if sync {
						err = w.Sync()
					} else {
						err = w.Flush()
					}
					if err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(w.Size())/float64(b.N), "logB/op")
			})
		}
	}
}
