package main

import (
	"errors"
	"io"
	"testing"
	"time"

	"github.com/hashicorp/raft"
)

// TestJoinIntoOwnClusterRefused caught a node started once without -join
// (so it bootstrapped a cluster of its own) and restarted with -join
// silently ignoring the flag: it went on leading its one-node cluster and
// acknowledging writes the cluster it was meant to join never saw.
// StartNode refuses that with ErrJoinIgnored; without -join the node
// serves its own cluster as before.
func TestJoinIntoOwnClusterRefused(t *testing.T) {
	cfg := Config{ID: "n2", Dir: t.TempDir(), HTTPAddr: "127.0.0.1:1", HeartbeatTimeout: 100 * time.Millisecond, LogOutput: io.Discard, LogLevel: "ERROR"}
	start := func(join string) (*Node, error) {
		_, tr := raft.NewInmemTransport("inmem-n2")
		c := cfg
		c.Join, c.Transport = join, tr
		return StartNode(c)
	}
	n, err := start("") // the mistake: no -join, so it bootstraps
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "leadership", 5*time.Second, func() bool { return n.isLeader() })
	if err := n.Shutdown(); err != nil {
		t.Fatal(err)
	}
	if n, err := start("http://127.0.0.1:8001"); !errors.Is(err, ErrJoinIgnored) {
		if err == nil {
			n.Shutdown()
		}
		t.Fatalf("StartNode with -join in a directory of a one-node cluster = %v; want ErrJoinIgnored", err)
	}
	n, err = start("")
	if err != nil {
		t.Fatalf("restart without -join after the refusal: %v", err)
	}
	defer n.Shutdown()
	waitFor(t, "leadership again", 5*time.Second, func() bool { return n.isLeader() })
}
