package kv

import (
	"errors"
	"strings"
	"testing"

	"github.com/sievekv/sievekv/vfs"
	"github.com/sievekv/sievekv/vfs/errorfs"
)

// TestLogReadFailureIsNotCorruption: a read of a WAL or of the MANIFEST
// that fails at Open (a device error, EIO) said nothing about the data,
// yet Open reported it as ErrCorruption, which callers take as damaged
// files to repair or discard. Now only damage the log's checksums prove
// is corruption; a failed read is the file system's error, and once
// reads work the DB opens with every write.
func TestLogReadFailureIsNotCorruption(t *testing.T) {
	for _, suffix := range []string{".log", "MANIFEST-"} {
		t.Run(strings.Trim(suffix, ".-"), func(t *testing.T) {
			mem := vfs.NewMem()
			d := openMem(t, mem, nil)
			if err := d.Set([]byte("k"), []byte("v"), Sync); err != nil {
				t.Fatal(err)
			}
			if err := d.Close(); err != nil {
				t.Fatal(err)
			}
			efs := errorfs.Wrap(mem, errorfs.OpRead)
			efs.SetMatch(func(_ errorfs.Op, name string) bool { return strings.Contains(name, suffix) })
			efs.FailAt(1, true)
			_, err := Open("db", &Options{FS: efs})
			if err == nil {
				t.Fatal("Open read nothing of the failing file")
			}
			if errors.Is(err, ErrCorruption) || !errors.Is(err, errorfs.ErrInjected) {
				t.Fatalf("Open with every %s read failing = %v; want the read error, not ErrCorruption", suffix, err)
			}
			d = openMem(t, mem, nil)
			defer d.Close()
			if v, err := d.Get([]byte("k")); err != nil || string(v) != "v" {
				t.Fatalf("Get after reads work again = %q, %v", v, err)
			}
		})
	}
}
