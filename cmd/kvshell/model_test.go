package main

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/sievekv/sievekv/kv"
	"github.com/sievekv/sievekv/vfs"
)

// TestShellAgainstModel drives the shell with random commands built from
// random bytes (printed with formatBytes, so every key goes through the
// quoting and parsing), interleaved with loads, flushes and compactions
// (whole and ranged) and reopens, and
// checks get, count and scan (with bounds and limits) against a map. It
// reads scan output back with the shell's own parser, so it also checks
// that scan lines are valid "KEY VALUE" input.
func TestShellAgainstModel(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	fs := vfs.NewMem()
	db, err := kv.Open("db", &kv.Options{FS: fs, MemTableSize: 4 << 10})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { db.Close() }()
	var out bytes.Buffer
	in := NewInterp(db, &out, &out)
	exec := func(line string) string {
		t.Helper()
		out.Reset()
		if err := in.Exec(context.Background(), line); err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		return out.String()
	}
	// A small key space so overwrites and deletes hit existing keys.
	keys := make([][]byte, 60)
	for i := range keys {
		keys[i] = randomBytes(r)
	}
	model := map[string]string{}
	sortedLive := func(lo, hi []byte, bounded bool) []string {
		var ks []string
		for k := range model {
			if k >= string(lo) && (!bounded || k < string(hi)) {
				ks = append(ks, k)
			}
		}
		slices.Sort(ks)
		return ks
	}
	for i := range 1500 {
		k := keys[r.IntN(len(keys))]
		f := formatBytes(k)
		switch op := r.IntN(100); {
		case op < 45:
			v := randomBytes(r)
			exec(fmt.Sprintf("put %s %s", f, formatBytes(v)))
			model[string(k)] = string(v)
		case op < 60:
			exec("del " + f)
			delete(model, string(k))
		case op < 85:
			got := exec("get " + f)
			want := "(not found)\n"
			if v, ok := model[string(k)]; ok {
				want = formatBytes([]byte(v)) + "\n"
			}
			if got != want {
				t.Fatalf("op %d: get %s = %q, want %q", i, f, got, want)
			}
		case op < 95:
			lo, hi := keys[r.IntN(len(keys))], keys[r.IntN(len(keys))]
			if bytes.Compare(lo, hi) > 0 {
				lo, hi = hi, lo
			}
			want := sortedLive(lo, hi, true)
			rng := formatBytes(lo) + " " + formatBytes(hi)
			if got := exec("count " + rng); got != fmt.Sprintf("%d\n", len(want)) {
				t.Fatalf("op %d: count %s = %q, want %d", i, rng, got, len(want))
			}
			limit := r.IntN(len(want) + 2)
			lines := strings.Split(strings.TrimSuffix(exec(fmt.Sprintf("scan %s limit %d", rng, limit)), "\n"), "\n")
			footer := lines[len(lines)-1]
			lines = lines[:len(lines)-1]
			n := len(want)
			if limit > 0 && limit < n {
				n = limit
				if !strings.HasPrefix(footer, "(first ") {
					t.Fatalf("op %d: scan %s limit %d: footer %q", i, rng, limit, footer)
				}
			} else if footer != fmt.Sprintf("(%d %s)", n, plural(n, "key", "keys")) {
				t.Fatalf("op %d: scan %s limit %d: footer %q, want %d keys", i, rng, limit, footer, n)
			}
			if len(lines) != n {
				t.Fatalf("op %d: scan %s limit %d: %d lines, want %d", i, rng, limit, len(lines), n)
			}
			for j, l := range lines {
				stmts, err := splitStatements(l)
				if err != nil || len(stmts) != 1 || len(stmts[0]) != 2 {
					t.Fatalf("scan line %q does not parse as KEY VALUE: %v", l, err)
				}
				gk, _ := wordBytes(stmts[0][0])
				gv, _ := wordBytes(stmts[0][1])
				if string(gk) != want[j] || string(gv) != model[want[j]] {
					t.Fatalf("op %d: scan line %d = %q, want %q %q", i, j, l, want[j], model[want[j]])
				}
			}
		case op < 97:
			exec("flush")
		case op < 98:
			lo, hi := keys[r.IntN(len(keys))], keys[r.IntN(len(keys))]
			if bytes.Compare(lo, hi) > 0 {
				lo, hi = hi, lo
			}
			exec("compact " + formatBytes(lo) + " " + formatBytes(hi))
		case op < 99:
			n, size := 1+r.IntN(40), r.IntN(12)
			exec(fmt.Sprintf("load %d %d", n, size))
			v := make([]byte, size)
			for j := range n {
				loadValue(v, j)
				model[string(loadKey(j))] = string(v)
			}
		case r.IntN(2) == 0:
			exec("compact")
		default:
			// Reopen: the next commands read what recovery rebuilt.
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}
			if db, err = kv.Open("db", &kv.Options{FS: fs, MemTableSize: 4 << 10}); err != nil {
				t.Fatalf("op %d: reopen: %v", i, err)
			}
			in.db = db
		}
	}
	if got, want := exec("count"), fmt.Sprintf("%d\n", len(model)); got != want {
		t.Fatalf("final count %q, want %q", got, want)
	}
}
