package main

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/sievekv/sievekv/kv"
)

// TestPreS13StateRejoinsAfterLosingItsRaftState caught a member refused
// by its own cluster half-way through its rejoin (a review): its state is
// older than S13 (no cluster record, applied below the entry that named
// the cluster) and its raft directory was lost, so, as StartNode advises,
// it was started with -join. The fresh join passed joinableState (a
// server of the configuration, behind the naming entry), and the leader
// removed the old server; the ordinary join that followed was judged
// again, as no server of the cluster any more, and refused for good: the
// node stopped, and the cluster had lost a voter. The fresh join's answer
// names the cluster, and the ordinary join now carries that ID.
func TestPreS13StateRejoinsAfterLosingItsRaftState(t *testing.T) {
	a1 := serveNode(t, Config{ID: "a1", RaftAddr: "127.0.0.1:0"})
	a1.waitLeader(t)
	waitClusterID(t, a1.Node)
	dirA2 := t.TempDir()
	a2, stopA2 := serveStoppableNode(t, Config{ID: "a2", Dir: dirA2, RaftAddr: "127.0.0.1:0", Join: a1.url})
	waitVoter(t, a1.Node, "a2")
	serveNode(t, Config{ID: "a3", RaftAddr: "127.0.0.1:0", Join: a1.url})
	waitVoter(t, a1.Node, "a3")
	raftAddr := string(a2.trans.LocalAddr())
	stopA2() // its HTTP server too: a dead machine answers no /status
	// a2's state as a pre-S13 member down since before the cluster was
	// named: no record, applied below the naming entry.
	sm, err := openStateMachine(filepath.Join(dirA2, "state"), nil)
	if err != nil {
		t.Fatal(err)
	}
	b := sm.db.NewBatch()
	b.Delete(clusterKey)
	b.Set(appliedKey, binary.BigEndian.AppendUint64(nil, 1))
	if err := sm.db.Apply(b, kv.Sync); err != nil {
		t.Fatal(err)
	}
	sm.close()
	t.Logf("cluster named at index %d; a2's state applied through 1", a1.fsm.clusterRecord().index)
	if err := os.RemoveAll(filepath.Join(dirA2, "raft")); err != nil {
		t.Fatal(err)
	}
	again := serveNode(t, Config{ID: "a2", Dir: dirA2, RaftAddr: raftAddr, Join: a1.url})
	select {
	case err := <-again.Failed():
		t.Fatalf("a2 stopped after its fresh join was taken: %v; a1's configuration now %+v", err, a1.configServers())
	case <-time.After(8 * time.Second):
	}
	waitVoter(t, a1.Node, "a2")
}
