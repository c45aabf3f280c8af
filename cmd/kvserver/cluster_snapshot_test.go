package main

import (
	"bytes"
	"context"
	"io"
	"testing"
	"time"

	"github.com/hashicorp/raft"
)

// TestRefusedSnapshotDoesNotBrickRestart caught a node that had refused
// another cluster's snapshot (S13) unable to start again: raft saves an
// installed snapshot before the state machine restores it, so the refused
// one stayed the newest in snapshots/, and every start's catch-up
// restored it and failed with ErrClusterMismatch. The start now removes
// such a snapshot and starts on its own state. (Found by a review helper.)
func TestRefusedSnapshotDoesNotBrickRestart(t *testing.T) {
	addrA, transA := raft.NewInmemTransport("inmem-a1")
	dir := t.TempDir()
	a1 := serveNode(t, Config{ID: "a1", Dir: dir, Transport: transA})
	a1.waitLeader(t)
	if err := a1.apply(command{op: opSet, key: []byte("x"), value: []byte("A")}); err != nil {
		t.Fatal(err)
	}
	idA := waitClusterID(t, a1.Node)

	stream := snapshotOf(t, newClusterID(), "x", "B")
	addrB, transB := raft.NewInmemTransport("inmem-b1")
	transB.Connect(addrA, transA)
	transA.Connect(addrB, transB)
	term := a1.raft.CurrentTerm() + 5
	conf := raft.Configuration{Servers: []raft.Server{{ID: "b1", Address: addrB}, {ID: "a1", Address: addrA}}}
	req := &raft.InstallSnapshotRequest{
		RPCHeader:       raft.RPCHeader{ProtocolVersion: raft.ProtocolVersionMax, ID: []byte("b1"), Addr: []byte(addrB)},
		SnapshotVersion: 1, Term: term, LastLogIndex: 1000, LastLogTerm: term,
		Configuration: raft.EncodeConfiguration(conf), ConfigurationIndex: 1, Size: int64(len(stream)),
	}
	var resp raft.InstallSnapshotResponse
	if err := transB.InstallSnapshot("a1", addrA, req, &resp, bytes.NewReader(stream)); err == nil && resp.Success {
		t.Fatal("a1 installed another cluster's snapshot")
	}
	a1.Shutdown()
	_, trans := raft.NewInmemTransport("inmem-a1")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	n, err := StartNodeContext(ctx, Config{ID: "a1", Dir: dir, Transport: trans, HTTPAddr: "127.0.0.1:1",
		HeartbeatTimeout: 250 * time.Millisecond, LogOutput: io.Discard, LogLevel: "ERROR"})
	if err != nil {
		t.Fatalf("a1 restarted after refusing another cluster's snapshot: %v", err)
	}
	defer n.Shutdown()
	if v, err := n.staleRead([]byte("x")); err != nil || string(v) != "A" || n.fsm.clusterID() != idA {
		t.Fatalf("after the restart a1 holds x = %q (%v), cluster %s; want %q, %s", v, err, n.fsm.clusterID(), "A", idA)
	}
	// The refused snapshot's applied index (2) is below a1's own: it must
	// still go, or raft would start from its label and configuration.
	if last := n.raft.LastIndex(); last >= req.LastLogIndex {
		t.Errorf("after the restart raft's last index is %d: it took the refused snapshot's %d", last, req.LastLogIndex)
	}
}
