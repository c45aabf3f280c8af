package kv

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/sievekv/sievekv/vfs"
	"github.com/sievekv/sievekv/vfs/errorfs"
)

// TestFailedManifestSyncKeepsTheTablesItNames caught that when the sync
// of a MANIFEST edit failed after its record had been written, the flush
// (and a manual compaction) deleted the new tables although the record
// naming them was in the file: the next Open found the MANIFEST naming a
// missing table, i.e. a transient I/O error made the DB corrupt. A
// MANIFEST failure is now sticky and the tables are left for Open to
// delete if the MANIFEST does not name them.
func TestFailedManifestSyncKeepsTheTablesItNames(t *testing.T) {
	for _, op := range []string{"flush", "compact"} {
		for _, kind := range []errorfs.Op{errorfs.OpSync, errorfs.OpWrite} {
			t.Run(op+"-"+kind.String(), func(t *testing.T) {
				mem := vfs.NewMem()
				efs := errorfs.Wrap(mem, kind)
				efs.SetMatch(func(_ errorfs.Op, name string) bool { return strings.Contains(name, "MANIFEST-") })
				d, err := Open("db", &Options{FS: efs})
				if err != nil {
					t.Fatal(err)
				}
				put := func(i int) error {
					return d.Set([]byte(fmt.Sprintf("k%03d", i)), []byte(fmt.Sprintf("v%d", i)), Sync)
				}
				for i := 0; i < 10; i++ {
					if err := put(i); err != nil {
						t.Fatal(err)
					}
				}
				if op == "compact" {
					if err := d.Flush(); err != nil {
						t.Fatal(err)
					}
					for i := 10; i < 20; i++ {
						if err := put(i); err != nil {
							t.Fatal(err)
						}
					}
					// Flush here, so that the failing MANIFEST update
					// is the compaction's own edit.
					if err := d.Flush(); err != nil {
						t.Fatal(err)
					}
				}
				efs.Reset()
				efs.FailAt(1, false)
				if op == "flush" {
					err = d.Flush()
				} else {
					err = d.Compact(nil, nil)
				}
				if !errors.Is(err, errorfs.ErrInjected) {
					t.Fatalf("%s = %v, want the injected error", op, err)
				}
				// Sticky: the MANIFEST's tail is unknown now.
				if err := put(99); !errors.Is(err, ErrReadOnly) {
					t.Fatalf("write after a failed MANIFEST update = %v, want ErrReadOnly", err)
				}
				if err := d.Flush(); err == nil {
					t.Fatal("Flush after a failed MANIFEST update succeeded")
				}
				d.Close()
				if rep, err := Check("db", &Options{FS: mem}); err != nil || !rep.OK() {
					t.Fatalf("Check after the failure: %v\n%v", err, rep)
				}
				d, err = Open("db", &Options{FS: mem})
				if err != nil {
					t.Fatalf("reopen: %v", err)
				}
				defer d.Close()
				n := 10
				if op == "compact" {
					n = 20
				}
				for i := 0; i < n; i++ {
					v, err := d.Get([]byte(fmt.Sprintf("k%03d", i)))
					if err != nil || string(v) != fmt.Sprintf("v%d", i) {
						t.Fatalf("k%03d after reopen = %q, %v", i, v, err)
					}
				}
			})
		}
	}
}
