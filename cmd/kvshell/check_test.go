package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/sievekv/sievekv/kv"
	"github.com/sievekv/sievekv/vfs"
)

func TestCheckClosesVerifiesAndReopens(t *testing.T) {
	fs := vfs.NewMem()
	opts := kv.Options{FS: fs}
	db, err := kv.Open("db", &opts)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	in := NewInterp(db, &out, &out)
	in.check = &checkTarget{dir: "db", opts: opts}
	ctx := context.Background()
	for _, line := range []string{"put a 1", "put b 2", "flush", "put c 3", "check"} {
		if err := in.Exec(ctx, line); err != nil {
			t.Fatalf("%s: %v\n%s", line, err, out.String())
		}
	}
	if !strings.Contains(out.String(), "OK") || !strings.Contains(out.String(), "1 tables") && !strings.Contains(out.String(), "1 table") {
		t.Fatalf("check output:\n%s", out.String())
	}
	// The database is open again and holds everything.
	out.Reset()
	if err := in.Exec(ctx, "get c"); err != nil || strings.TrimSpace(out.String()) != "3" {
		t.Fatalf("get after check: %q, %v", out.String(), err)
	}
	in.db.Close()

	// Without a target the command says it is unavailable.
	db2, _ := kv.Open("db", &opts)
	defer db2.Close()
	in2 := NewInterp(db2, &out, &out)
	if err := in2.Exec(ctx, "check"); err == nil || !strings.Contains(err.Error(), "not available") {
		t.Fatalf("check without a target: %v", err)
	}
}
