package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestStaleJoinedClusterRecordIgnored: a node whose fresh join to
// cluster A was interrupted keeps kvserver.JoinedCluster=A in its raft
// store. Started again without -join it bootstraps its own cluster C; the
// record is never cleared. Once C has members and this node's state dir
// is lost (raft dir kept, no snapshot yet), the node hellos A (the state
// names no cluster, so helloCluster falls back to the stale record), C's
// peers refuse every hello, and the node never learns C again (a review
// found this). The record is now read only for a state with applied
// entries and no ID, so the node relearns C, as the control does.
func TestStaleJoinedClusterRecordIgnored(t *testing.T) { staleJoinedCluster(t, true) }

// Control: the same without the interrupted join to A relearns C.
func TestStaleJoinedClusterControl(t *testing.T) { staleJoinedCluster(t, false) }

func staleJoinedCluster(t *testing.T, interrupted bool) {
	a1 := serveNode(t, Config{ID: "a1", RaftAddr: "127.0.0.1:0"})
	a1.waitLeader(t)
	idA := waitClusterID(t, a1.Node)

	dirB := t.TempDir()
	if interrupted {
		testAfterFreshJoin = func() error { return errors.New("stopped after the fresh join, as by a crash") }
		cfg, sec, ln := testNodeConfig(t, Config{ID: "b1", Dir: dirB, RaftAddr: "127.0.0.1:0", Join: a1.url})
		_, err := startNode(context.Background(), cfg, sec)
		ln.Close()
		testAfterFreshJoin = nil
		if err == nil {
			t.Fatal("interrupted start succeeded")
		}
	}

	big := uint64(1 << 30)
	b, stopB := serveStoppableNode(t, Config{ID: "b1", Dir: dirB, RaftAddr: "127.0.0.1:0", SnapshotThreshold: big})
	b.waitLeader(t)
	idC := waitClusterID(t, b.Node)
	if idC == idA {
		t.Fatal("same ID")
	}
	serveNode(t, Config{ID: "c1", RaftAddr: "127.0.0.1:0", Join: b.url, SnapshotThreshold: big})
	waitVoter(t, b.Node, "c1")
	d1 := serveNode(t, Config{ID: "d1", RaftAddr: "127.0.0.1:0", Join: b.url, SnapshotThreshold: big})
	waitVoter(t, b.Node, "d1")
	t.Logf("b1 bootstrapped %s with JoinedCluster %s still stored; hello %s", idC, idA, b.helloCluster())
	raftB := string(b.trans.LocalAddr())
	stopB()
	if err := os.RemoveAll(filepath.Join(dirB, "state")); err != nil {
		t.Fatal(err)
	}
	again := serveNode(t, Config{ID: "b1", Dir: dirB, RaftAddr: raftB, SnapshotThreshold: big})
	t.Logf("restarted b1 hellos %s (A=%s, C=%s)", again.helloCluster(), idA, idC)
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if again.fsm.clusterID() == idC {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	_ = d1
	t.Fatalf("b1 never relearnt C: state names %v, hellos %v (stale JoinedCluster A=%v)", again.fsm.clusterID(), again.helloCluster(), idA)
}

// TestInterruptedJoinDoesNotBlockJoiningAnother: after a fresh join to A
// is interrupted (record A kept, no raft term or log, empty state), the
// node started with -join to another cluster B is refused as holding
// "the state of another cluster" although it holds no state at all.
func TestInterruptedJoinDoesNotBlockJoiningAnother(t *testing.T) {
	a1 := serveNode(t, Config{ID: "a1", RaftAddr: "127.0.0.1:0"})
	a1.waitLeader(t)
	waitClusterID(t, a1.Node)
	b1 := serveNode(t, Config{ID: "b1", RaftAddr: "127.0.0.1:0"})
	b1.waitLeader(t)
	waitClusterID(t, b1.Node)
	dir := t.TempDir()
	testAfterFreshJoin = func() error { return errors.New("crash") }
	cfg, sec, ln := testNodeConfig(t, Config{ID: "x1", Dir: dir, RaftAddr: "127.0.0.1:0", Join: a1.url})
	_, err := startNode(context.Background(), cfg, sec)
	ln.Close()
	testAfterFreshJoin = nil
	if err == nil {
		t.Fatal("interrupted start succeeded")
	}
	cfg, sec, ln = testNodeConfig(t, Config{ID: "x1", Dir: dir, RaftAddr: "127.0.0.1:0", Join: b1.url})
	defer ln.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	n, err := startNode(ctx, cfg, sec)
	if err != nil {
		t.Fatalf("x1, with no state and no raft term or log, refused by B: %v", err)
	}
	n.Shutdown()
}
