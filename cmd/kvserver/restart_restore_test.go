package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/hashicorp/raft"
)

// TestRestartKeepsAStateAsNewAsItsSnapshot: raft labels a snapshot with
// its last applied entry of any kind, and a barrier, a no-op or a
// configuration change after the last command never reaches the state
// machine, whose applied index counts commands (S2). The start's catch-up
// compared the two and restored the newest snapshot whenever its label
// passed the state's applied index: after a barrier, at every start, the
// whole state rewritten into a new generation for nothing. It compares
// the applied index the snapshot stream records now.
func TestRestartKeepsAStateAsNewAsItsSnapshot(t *testing.T) {
	_, trans := raft.NewInmemTransport("inmem-r1")
	dir := t.TempDir()
	n := serveNode(t, Config{ID: "r1", Dir: dir, Transport: trans})
	n.waitLeader(t)
	if err := n.apply(command{op: opSet, key: []byte("x"), value: []byte("v")}); err != nil {
		t.Fatal(err)
	}
	if err := n.raft.Barrier(time.Second).Error(); err != nil {
		t.Fatal(err)
	}
	if err := n.raft.Snapshot().Error(); err != nil {
		t.Fatal(err)
	}
	applied := n.fsm.applied.Load()
	if idx := n.raft.AppliedIndex(); idx <= applied {
		t.Fatalf("raft applied %d, the state %d: the barrier should be past the last command", idx, applied)
	}
	current := func() string {
		b, err := os.ReadFile(filepath.Join(dir, "state", currentFile))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	before := current()
	n.Shutdown()

	_, trans = raft.NewInmemTransport("inmem-r1")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	r, err := StartNodeContext(ctx, Config{ID: "r1", Dir: dir, Transport: trans, HTTPAddr: "127.0.0.1:1",
		HeartbeatTimeout: 250 * time.Millisecond, LogOutput: io.Discard, LogLevel: "ERROR"})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Shutdown()
	if after := current(); after != before {
		t.Errorf("the restart restored the snapshot over a state as new: generation %q became %q", before, after)
	}
	if v, err := r.staleRead([]byte("x")); err != nil || string(v) != "v" || r.fsm.applied.Load() != applied {
		t.Errorf("after the restart x = %q (%v), applied %d; want %q, %d", v, err, r.fsm.applied.Load(), "v", applied)
	}
}
