package tests

import (
	"sync"
	"testing"

	"github.com/sievekv/sievekv/kv"
)

var (
	fuzzBaseOnce sync.Once
	fuzzBase     *corruptDB
)

// FuzzOpenDamagedDB overwrites (or truncates) one file of the corruption
// test's DB with fuzzer-chosen bytes at a fuzzer-chosen offset, then runs
// Check, Open and every read under the corruption test's rules: a refusal
// is ErrCorruption naming the file, every read is right or such an error,
// lost writes only as a WAL prefix, and nothing panics.
func FuzzOpenDamagedDB(f *testing.F) {
	f.Add(uint8(0), uint32(0), []byte("x"), false)
	f.Add(uint8(1), uint32(10), []byte{0, 0, 0, 0}, false)
	f.Add(uint8(2), uint32(100), []byte{}, true)
	f.Add(uint8(3), uint32(7), []byte("MANIFEST-000001\n"), false)
	f.Add(uint8(4), uint32(4000), []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, false)
	f.Fuzz(func(t *testing.T, fileIdx uint8, off uint32, patch []byte, truncate bool) {
		fuzzBaseOnce.Do(func() { fuzzBase = buildCorruptDB(t) })
		c := fuzzBase
		if c == nil {
			t.Skip("base DB not built")
		}
		file := c.files[int(fileIdx)%len(c.files)]
		fs := c.fs.CrashClone()
		b, err := memRead(fs, "db/"+file)
		if err != nil {
			t.Fatal(err)
		}
		at := int(off % uint32(len(b)+1))
		if truncate {
			b = b[:at]
		} else {
			if need := at + len(patch); need > len(b) {
				b = append(b, make([]byte, need-len(b))...)
			}
			copy(b[at:], patch)
		}
		if err := memWrite(fs, "db/"+file, b); err != nil {
			t.Fatal(err)
		}
		if _, err := kv.Check("db", &kv.Options{FS: fs}); err != nil && file != "CURRENT" {
			t.Fatalf("Check could not run: %v", err)
		}
		judgeCorruptOpen(t, c, fs, corruptVariant{file: file, flipAt: -1, trunc: at})
	})
}
