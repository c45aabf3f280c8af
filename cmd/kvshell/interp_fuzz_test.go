package main

import (
	"context"
	"io"
	"strings"
	"testing"

	"github.com/sievekv/sievekv/kv"
	"github.com/sievekv/sievekv/vfs"
)

// FuzzInterp runs arbitrary input lines, in text and then JSON mode,
// against a fresh in-memory database: whatever a user types, a command
// fails with an error (S2) and never panics or hangs. Lines naming load
// or check are skipped: a valid load of millions of keys is slow by
// design, and check closes and reopens the directory, which the
// transcript and check tests cover.
func FuzzInterp(f *testing.F) {
	for _, s := range []string{
		"put a 1; get a", "scan a b limit 3", "delrange a z; count", "explain get a",
		"explain scan a b", "compact a b", "checkpoint cp", "tables; stats", "help scan",
		"del \"\\x00\"", "scan limit limit", "get 'a", "put \"\\xff\\xfe\" ''; scan '' \"\\xff\"",
		"compact b a", "delrange b a", "explain scan b a", "checkpoint ''", "scan a a",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, script string) {
		db, err := kv.Open("db", &kv.Options{FS: vfs.NewMem(), MemTableSize: 4 << 10})
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		in := NewInterp(db, io.Discard, io.Discard)
		lines := strings.Split(script, "\n")
		for _, json := range []bool{false, true} {
			in.json = json
			for _, line := range lines {
				if strings.Contains(line, "load") || strings.Contains(line, "check") {
					continue
				}
				if err := in.Exec(context.Background(), line); err == errQuit {
					break
				}
			}
		}
	})
}
