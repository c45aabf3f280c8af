package main

import (
	"io"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
)

// handshakeTransport is a raft network transport over TCP with the
// cluster handshake, naming whatever *id holds; every AppendEntries it
// receives is counted and answered with success.
func handshakeTransport(t *testing.T, id *atomic.Pointer[clusterID]) (*raft.NetworkTransport, *clusterStreamLayer, *atomic.Int64) {
	t.Helper()
	tcp, err := listenTCP("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	layer := &clusterStreamLayer{StreamLayer: tcp, cluster: func() clusterID { return *id.Load() }}
	tr := raft.NewNetworkTransportWithConfig(&raft.NetworkTransportConfig{Stream: layer, MaxPool: 3, Timeout: 2 * time.Second,
		Logger: hclog.New(&hclog.LoggerOptions{Output: io.Discard})})
	t.Cleanup(func() { tr.Close() })
	var got atomic.Int64
	go func() {
		for rpc := range tr.Consumer() {
			got.Add(1)
			rpc.Respond(&raft.AppendEntriesResponse{Success: true}, nil)
		}
	}()
	return tr, layer, &got
}

func appendEntries(from, to *raft.NetworkTransport) error {
	var resp raft.AppendEntriesResponse
	return from.AppendEntries("peer", to.LocalAddr(), &raft.AppendEntriesRequest{RPCHeader: raft.RPCHeader{ProtocolVersion: raft.ProtocolVersionMax}, Term: 1}, &resp)
}

// TestUncheckedConnectionClosedOnceTheClusterIsLearnt caught a hole in
// S13's handshake (a review's reproduction): a hello compares nothing
// while an end knows no ID, and raft keeps a connection for RPC after
// RPC, so one opened while this node knew none went on carrying another
// cluster's AppendEntries after it learnt its own. Such connections are
// now closed when the node learns its ID; raft dials again, and the new
// hello refuses the other cluster.
func TestUncheckedConnectionClosedOnceTheClusterIsLearnt(t *testing.T) {
	a, b, none := newClusterID(), newClusterID(), clusterID{}
	var acceptorID, dialerID atomic.Pointer[clusterID]
	acceptorID.Store(&none)
	dialerID.Store(&b)
	acceptor, layer, got := handshakeTransport(t, &acceptorID)
	dialer, _, _ := handshakeTransport(t, &dialerID)
	if err := appendEntries(dialer, acceptor); err != nil {
		t.Fatalf("AppendEntries to a node that knows no cluster yet: %v", err)
	}
	acceptorID.Store(&a)
	layer.learnt()
	for i := range 3 {
		if err := appendEntries(dialer, acceptor); err == nil {
			t.Fatalf("AppendEntries %d of cluster %s reached the node after it learnt it is of cluster %s", i+2, b, a)
		}
	}
	if n := got.Load(); n != 1 {
		t.Fatalf("the node served %d AppendEntries; want only the one before it learnt its cluster", n)
	}
}

// TestHeldHandshakeRefusesEveryPeer: a fresh joiner's transport, holding
// until its join is answered, serves no RPC, even one of its own cluster's;
// released, it does.
func TestHeldHandshakeRefusesEveryPeer(t *testing.T) {
	a, none := newClusterID(), clusterID{}
	var acceptorID, dialerID atomic.Pointer[clusterID]
	acceptorID.Store(&none)
	dialerID.Store(&a)
	acceptor, layer, got := handshakeTransport(t, &acceptorID)
	dialer, _, _ := handshakeTransport(t, &dialerID)
	layer.hold(true)
	if err := appendEntries(dialer, acceptor); err == nil || got.Load() != 0 {
		t.Fatalf("AppendEntries to a held node: %v, %d served; want refused", err, got.Load())
	}
	acceptorID.Store(&a)
	layer.hold(false)
	if err := appendEntries(dialer, acceptor); err != nil || got.Load() != 1 {
		t.Fatalf("AppendEntries once released: %v, %d served", err, got.Load())
	}
}

// TestNewNodeAtReusedAddressJoinsOnlyItsCluster caught a node taking
// another cluster's entries (a review's reproduction, 5 runs in 9): b3 of
// cluster B stopped without being removed, and a new node was started at
// its raft address to join cluster A. B's leader, still sending to b3's
// address, reached it, and the hello let it through, as the new node knew
// no cluster. Its join's answer now names A, it hellos with that, and
// until the answer it takes no peer.
func TestNewNodeAtReusedAddressJoinsOnlyItsCluster(t *testing.T) {
	b1 := serveNode(t, Config{ID: "b1", RaftAddr: "127.0.0.1:0"})
	b1.waitLeader(t)
	b2 := serveNode(t, Config{ID: "b2", RaftAddr: "127.0.0.1:0", Join: b1.url})
	waitVoter(t, b1.Node, "b2")
	b3 := serveNode(t, Config{ID: "b3", RaftAddr: "127.0.0.1:0", Join: b1.url})
	shared := b3.trans.LocalAddr()
	waitVoter(t, b1.Node, "b3")
	if err := b1.apply(command{op: opSet, key: []byte("x"), value: []byte("B")}); err != nil {
		t.Fatal(err)
	}
	idB := waitClusterID(t, b3.Node)
	waitClusterID(t, b2.Node)
	b3.Shutdown() // b1 leads on with b2, and sends to b3's address

	a1 := serveNode(t, Config{ID: "a1", RaftAddr: "127.0.0.1:0"})
	a1.waitLeader(t)
	if err := a1.apply(command{op: opSet, key: []byte("x"), value: []byte("A")}); err != nil {
		t.Fatal(err)
	}
	idA := waitClusterID(t, a1.Node)
	since := time.Now()
	n := serveNode(t, Config{ID: "n", RaftAddr: string(shared), Join: a1.url})
	waitFor(t, "n to apply A's x", 10*time.Second, func() bool {
		v, err := n.staleRead([]byte("x"))
		return err == nil && string(v) == "A"
	})
	time.Sleep(8 * b1.heartbeat) // b1 heartbeats b3's address ten times a timeout
	if got := n.fsm.clusterID(); got != idA {
		t.Fatalf("n holds cluster %s; want A's %s (B is %s)", got, idA, idB)
	}
	if b1.beats.answeredSince(shared, since) {
		t.Fatalf("b1 got answers from %s, where the new node of cluster A runs, as b3's", shared)
	}
	if leader, _ := n.raft.LeaderWithID(); leader != raft.ServerAddress(a1.trans.LocalAddr()) {
		t.Fatalf("n follows %q; want a1 at %s", leader, a1.trans.LocalAddr())
	}
	if v, err := n.staleRead([]byte("x")); err != nil || string(v) != "A" {
		t.Fatalf("n's x = %q, %v; want A's", v, err)
	}
}
