package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/hashicorp/raft"
	"github.com/sievekv/sievekv/kv"
)

// waitClusterID waits until n's state holds a cluster ID and returns it.
func waitClusterID(t *testing.T, n *Node) clusterID {
	t.Helper()
	waitFor(t, n.cfg.ID+" to hold a cluster ID", 10*time.Second, func() bool { return n.fsm.clusterID().known() })
	return n.fsm.clusterID()
}

// waitVoter waits until leader's configuration has id as a voter (S12's
// promotion done).
func waitVoter(t *testing.T, leader *Node, id raft.ServerID) {
	t.Helper()
	waitFor(t, string(id)+" to be a voter", 10*time.Second, func() bool {
		for _, s := range leader.configServers() {
			if s.ID == id && s.Suffrage == raft.Voter {
				return true
			}
		}
		return false
	})
}

// TestClusterIDNamedOnceAndShared: the first leader names the cluster, every
// member learns the same ID through the log, /status shows it, and neither
// a restart nor a new leader changes it (S13).
func TestClusterIDNamedOnceAndShared(t *testing.T) {
	t.Parallel()
	c := newTestCluster(t)
	id := waitClusterID(t, c.nodes[0])
	for _, n := range c.nodes {
		if got := waitClusterID(t, n); got != id {
			t.Fatalf("%s holds cluster %s; %s holds %s", n.cfg.ID, got, c.nodes[0].cfg.ID, id)
		}
		if got := n.status().Cluster; got != id.String() {
			t.Fatalf("%s's status names cluster %q; want %q", n.cfg.ID, got, id)
		}
	}
	old := c.leader()
	c.stop(old)
	c.start(old)
	waitFor(t, "a leader", 10*time.Second, func() bool { return c.leader() >= 0 })
	// A second leader's barrier has run: had it proposed a new ID, a
	// write it commits after would follow that proposal.
	c.put(c.leader(), "after", "restart")
	for _, n := range c.nodes {
		waitFor(t, n.cfg.ID+" to apply the write", 10*time.Second, func() bool {
			v, err := n.staleRead([]byte("after"))
			return err == nil && string(v) == "restart"
		})
		if got := n.fsm.clusterID(); got != id {
			t.Fatalf("%s holds cluster %s after a restart and a write; want %s", n.cfg.ID, got, id)
		}
	}
}

// TestApplyKeepsTheFirstClusterID: two leaders in a row may each propose an
// ID before applying the other's; every member keeps the first committed.
func TestApplyKeepsTheFirstClusterID(t *testing.T) {
	sm, err := openStateMachine(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer sm.close()
	first, second := newClusterID(), newClusterID()
	for i, id := range []clusterID{first, second} {
		l := &raft.Log{Type: raft.LogCommand, Index: uint64(i + 1), Data: command{op: opCluster, value: id.bytes()}.encode()}
		if res := sm.Apply(l); res != nil {
			t.Fatalf("apply cluster command %d: %v", i+1, res)
		}
	}
	if got := sm.clusterID(); got != first {
		t.Fatalf("cluster %s after applying %s then %s; want the first", got, first, second)
	}
	if stored, err := readClusterRecord(sm.db); err != nil || stored != (clusterRecord{first, 1}) {
		t.Fatalf("stored cluster %+v, %v; want %s named at index 1", stored, err, first)
	}
}

// snapshotOf returns the snapshot stream of a state machine that applied a
// cluster command with id and a set of key to value.
func snapshotOf(t *testing.T, id clusterID, key, value string) []byte {
	t.Helper()
	sm, err := openStateMachine(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer sm.close()
	for i, c := range []command{{op: opCluster, value: id.bytes()}, {op: opSet, key: []byte(key), value: []byte(value)}} {
		if res := sm.Apply(&raft.Log{Type: raft.LogCommand, Index: uint64(i + 1), Data: c.encode()}); res != nil {
			t.Fatal(res)
		}
	}
	snap := sm.db.NewSnapshot()
	defer snap.Close()
	var buf bytes.Buffer
	if err := writeSnapshotStream(&buf, snap, sm.applied.Load()); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestRestoreRefusesAnotherClustersSnapshot: a snapshot carries its
// cluster's ID; one of the node's own cluster is installed with it, one of
// another cluster is refused and leaves the state as it was (S13).
func TestRestoreRefusesAnotherClustersSnapshot(t *testing.T) {
	ours, theirs := newClusterID(), newClusterID()
	dir := t.TempDir()
	sm, err := openStateMachine(filepath.Join(dir, "state"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { sm.close() }()
	if err := sm.Restore(io.NopCloser(bytes.NewReader(snapshotOf(t, ours, "k", "ours")))); err != nil {
		t.Fatalf("restore a snapshot into a state without an ID: %v", err)
	}
	if sm.clusterID() != ours {
		t.Fatalf("after restoring cluster %s's snapshot the state names %s", ours, sm.clusterID())
	}
	err = sm.Restore(io.NopCloser(bytes.NewReader(snapshotOf(t, theirs, "k", "theirs"))))
	if !errors.Is(err, ErrClusterMismatch) {
		t.Fatalf("restore of another cluster's snapshot: %v; want ErrClusterMismatch", err)
	}
	if v, err := sm.get([]byte("k")); err != nil || string(v) != "ours" || sm.clusterID() != ours {
		t.Fatalf("after the refused restore: k = %q, %v, cluster %s; want %q and %s", v, err, sm.clusterID(), "ours", ours)
	}
	// The ID is durable: reopened, the state still refuses.
	sm.close()
	if sm, err = openStateMachine(filepath.Join(dir, "state"), nil); err != nil {
		t.Fatal(err)
	}
	if sm.clusterID() != ours {
		t.Fatalf("reopened state names cluster %s; want %s", sm.clusterID(), ours)
	}
	if err := sm.Restore(io.NopCloser(bytes.NewReader(snapshotOf(t, ours, "k", "again")))); err != nil {
		t.Fatalf("restore of its own cluster's snapshot after reopening: %v", err)
	}
}

// TestSnapshotStreamClusterRecordChecked: a cluster record must hold a
// whole, non-zero ID.
func TestSnapshotStreamClusterRecordChecked(t *testing.T) {
	good := snapshotOf(t, newClusterID(), "k", "v")
	// The cluster record comes first: tag, key length 1, 'c', length 24
	// (the ID, then the index that named it).
	at := len(snapshotMagic) + 1
	if !bytes.Equal(good[at:at+4], []byte{recordPair, 1, 'c', 24}) {
		t.Fatalf("stream does not start with the cluster record: %x", good[:at+4])
	}
	for name, bad := range map[string][]byte{
		"zero ID":                 append(append(append([]byte{}, good[:at+4]...), make([]byte, 16)...), good[at+4+16:]...),
		"short ID":                append(append(append([]byte{}, good[:at+3]...), 15), good[at+4:at+4+15]...),
		"ID and part of an index": append(append(append([]byte{}, good[:at+3]...), 20), good[at+4:at+4+20]...),
	} {
		db, err := kv.Open(t.TempDir(), nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := readSnapshotStream(bytes.NewReader(bad), db); !errors.Is(err, ErrBadCommand) {
			t.Errorf("%s: %v; want ErrBadCommand", name, err)
		}
		db.Close()
	}
}

// TestJoinWithAnotherClustersStateRefused caught a member of cluster A,
// restarted with -join naming a member of cluster B, being added to B
// (S9's rejoin): raft's log check compares indexes and terms only, so B's
// entries were appended after A's, the state machine skipped B's commands
// up to A's applied index, and the node served A's values as B's. The
// join now carries the joiner's cluster ID; B's leader answers 412, and
// the node gives up (Failed) instead of retrying for ever (S13).
func TestJoinWithAnotherClustersStateRefused(t *testing.T) {
	a1 := serveNode(t, Config{ID: "a1", RaftAddr: "127.0.0.1:0"})
	a1.waitLeader(t)
	dirA2 := t.TempDir()
	a2 := serveNode(t, Config{ID: "a2", Dir: dirA2, RaftAddr: "127.0.0.1:0", Join: a1.url})
	if err := a1.apply(command{op: opSet, key: []byte("x"), value: []byte("A")}); err != nil {
		t.Fatal(err)
	}
	idA := waitClusterID(t, a1.Node)
	waitFor(t, "a2 to apply x", 10*time.Second, func() bool {
		v, err := a2.staleRead([]byte("x"))
		return err == nil && string(v) == "A"
	})
	if err := a2.Shutdown(); err != nil {
		t.Fatal(err)
	}

	b1 := serveNode(t, Config{ID: "b1", RaftAddr: "127.0.0.1:0"})
	b1.waitLeader(t)
	if err := b1.apply(command{op: opSet, key: []byte("x"), value: []byte("B")}); err != nil {
		t.Fatal(err)
	}
	idB := waitClusterID(t, b1.Node)
	if idA == idB {
		t.Fatalf("two clusters named %s alike", idA)
	}

	stale := serveNode(t, Config{ID: "a2", Dir: dirA2, RaftAddr: "127.0.0.1:0", Join: b1.url})
	select {
	case err := <-stale.Failed():
		if !errors.Is(err, ErrClusterMismatch) {
			t.Fatalf("the node with cluster A's state gave up joining B with %v; want ErrClusterMismatch", err)
		}
	case <-time.After(15 * time.Second):
		v, _ := stale.staleRead([]byte("x"))
		t.Fatalf("the node with cluster A's state is still joining B (configuration of b1: %+v; its x = %q)", b1.configServers(), v)
	}
	if servers := b1.configServers(); len(servers) != 1 {
		t.Fatalf("b1's configuration after the refused join: %+v; want b1 alone", servers)
	}
	stale.Shutdown()

	// Its raft directory lost, the node asks for a fresh join (S8) before
	// raft starts: refused the same, and it does not start.
	if err := os.RemoveAll(filepath.Join(dirA2, "raft")); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	n, err := StartNodeContext(ctx, Config{ID: "a2", Dir: dirA2, RaftAddr: "127.0.0.1:0", HTTPAddr: "127.0.0.1:1", Join: b1.url,
		HeartbeatTimeout: 250 * time.Millisecond, LogOutput: io.Discard, LogLevel: "ERROR"})
	if err == nil {
		n.Shutdown()
	}
	if !errors.Is(err, ErrClusterMismatch) {
		t.Fatalf("fresh join of cluster A's state through B: %v; want ErrClusterMismatch", err)
	}

	// The leader's answer, as a client of the API sees it.
	body := []byte(`{"id":"a2","raft":"127.0.0.1:9","http":"127.0.0.1:9","cluster":"` + idA.String() + `"}`)
	if code, msg := send(t, http.MethodPost, b1.url+"/join", "", body); code != http.StatusPreconditionFailed {
		t.Fatalf("join naming cluster %s at b1: %d %s; want 412", idA, code, msg)
	}
	body = []byte(`{"id":"a2","raft":"127.0.0.1:9","http":"127.0.0.1:9","cluster":"not hex"}`)
	if code, msg := send(t, http.MethodPost, b1.url+"/join", "", body); code != http.StatusBadRequest {
		t.Fatalf("join naming a malformed cluster ID: %d %s; want 400", code, msg)
	}
}

// TestJoinWithPreS13StateOfAnotherClusterRefused caught a hole in S13
// (a review's reproduction): a state older than cluster IDs has applied
// entries but names no cluster, and passed every check, so a2, a member of
// cluster A, joined cluster B as in TestJoinWithAnotherClustersStateRefused
// and served A's x as B's; it never learnt B's ID either, as its state
// machine skipped B's commands up to its own applied index, the one naming
// B among them. The join now carries the joiner's applied index, and B's
// leader refuses a state that names no cluster yet has applied entries
// past the one that named B.
func TestJoinWithPreS13StateOfAnotherClusterRefused(t *testing.T) {
	a1 := serveNode(t, Config{ID: "a1", RaftAddr: "127.0.0.1:0"})
	a1.waitLeader(t)
	dirA2 := t.TempDir()
	a2 := serveNode(t, Config{ID: "a2", Dir: dirA2, RaftAddr: "127.0.0.1:0", Join: a1.url})
	for i := range 5 {
		if err := a1.apply(command{op: opSet, key: []byte("x"), value: fmt.Appendf(nil, "A%d", i)}); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, "a2 to apply x", 10*time.Second, func() bool {
		v, err := a2.staleRead([]byte("x"))
		return err == nil && string(v) == "A4"
	})
	if err := a2.Shutdown(); err != nil {
		t.Fatal(err)
	}
	// What a state written before S13 holds: no cluster record.
	sm, err := openStateMachine(filepath.Join(dirA2, "state"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := sm.db.Delete(clusterKey, kv.Sync); err != nil {
		t.Fatal(err)
	}
	sm.close()

	b1 := serveNode(t, Config{ID: "b1", RaftAddr: "127.0.0.1:0"})
	b1.waitLeader(t)
	if err := b1.apply(command{op: opSet, key: []byte("x"), value: []byte("B")}); err != nil {
		t.Fatal(err)
	}
	waitClusterID(t, b1.Node)
	stale := serveNode(t, Config{ID: "a2", Dir: dirA2, RaftAddr: "127.0.0.1:0", Join: b1.url})
	select {
	case err := <-stale.Failed():
		if !errors.Is(err, ErrClusterMismatch) {
			t.Fatalf("the node with cluster A's unnamed state gave up joining B with %v; want ErrClusterMismatch", err)
		}
	case <-time.After(15 * time.Second):
		v, _ := stale.staleRead([]byte("x"))
		t.Fatalf("the node with cluster A's unnamed state is still joining B (configuration of b1: %+v; its x = %q, cluster %q)",
			b1.configServers(), v, stale.fsm.clusterID())
	}
	if servers := b1.configServers(); len(servers) != 1 {
		t.Fatalf("b1's configuration after the refused join: %+v; want b1 alone", servers)
	}
}

// TestJoinableState: a joiner whose state names no cluster but has applied
// entries is taken only as a server of the leader's cluster that is
// behind the entry naming it.
func TestJoinableState(t *testing.T) {
	a, b, none := newClusterID(), newClusterID(), clusterID{}
	named := clusterRecord{a, 10}
	for _, tc := range []struct {
		ours    clusterRecord
		theirs  clusterID
		applied uint64
		member  bool
		want    error
	}{
		{named, a, 50, false, nil},                  // its own cluster's, named
		{named, none, 0, false, nil},                // a new node
		{named, none, 9, true, nil},                 // a member behind the naming entry
		{named, none, 10, true, ErrClusterMismatch}, // applied the naming entry, yet names none
		{named, none, 9, false, ErrClusterMismatch}, // no server of this cluster
		{clusterRecord{a, 0}, none, 50, true, nil},  // index unknown (the first record form): membership alone
		{clusterRecord{a, 0}, none, 50, false, ErrClusterMismatch},
		{clusterRecord{}, none, 5, true, errClusterIDPending}, // the leader cannot judge yet
		{clusterRecord{}, none, 0, false, nil},
		{named, b, 3, true, ErrClusterMismatch},
	} {
		err := joinableState(tc.ours, tc.theirs, tc.applied, tc.member)
		if (tc.want == nil) != (err == nil) || (tc.want != nil && !errors.Is(err, tc.want)) {
			t.Errorf("leader %+v, joiner %q applied %d member %v: %v; want %v", tc.ours, tc.theirs, tc.applied, tc.member, err, tc.want)
		}
	}
	if r, err := clusterRecordFrom(a.bytes()); err != nil || r != (clusterRecord{a, 0}) {
		t.Errorf("a record of the ID alone reads as %+v, %v", r, err)
	}
	if r, err := clusterRecordFrom(named.encode()); err != nil || r != named {
		t.Errorf("%+v reads back as %+v, %v", named, r, err)
	}
}

// TestRaftPeerOfAnotherClusterRefused caught raft taking a stranger's
// entries: cluster B's b2 has the raft address cluster A's a2 once had,
// and a2 is started there again from its old directory (a reused host, a
// stale service unit). B's leader, sending to b2's address, reached a2,
// whose log check (indexes and terms only) took B's entries after A's; B
// counted a2's answers as b2's. The raft handshake (S13) now closes every
// connection between the two before raft sends a byte.
func TestRaftPeerOfAnotherClusterRefused(t *testing.T) {
	a1 := serveNode(t, Config{ID: "a1", RaftAddr: "127.0.0.1:0"})
	a1.waitLeader(t)
	dirA2 := t.TempDir()
	a2 := serveNode(t, Config{ID: "a2", Dir: dirA2, RaftAddr: "127.0.0.1:0", Join: a1.url})
	shared := a2.trans.LocalAddr()
	idA := waitClusterID(t, a2.Node)
	waitVoter(t, a1.Node, "a2")
	a2.Shutdown()
	a1.Shutdown()

	b1 := serveNode(t, Config{ID: "b1", RaftAddr: "127.0.0.1:0"})
	b1.waitLeader(t)
	b2 := serveNode(t, Config{ID: "b2", RaftAddr: string(shared), Join: b1.url})
	idB := waitClusterID(t, b2.Node)
	if idA == idB {
		t.Fatalf("two clusters named %s alike", idA)
	}
	waitVoter(t, b1.Node, "b2")
	b2.Shutdown()

	back := serveNode(t, Config{ID: "a2", Dir: dirA2, RaftAddr: string(shared)})
	since := time.Now()
	last := back.raft.LastIndex()
	time.Sleep(8 * b1.heartbeat) // b1 heartbeats b2's address ten times a timeout
	if b1.beats.answeredSince(shared, since) {
		t.Fatalf("b1 got answers from %s, where cluster A's a2 runs, as b2's", shared)
	}
	if got := back.raft.LastIndex(); got != last || back.fsm.clusterID() != idA {
		t.Fatalf("a2 at %s: last index %d (was %d), cluster %s (was %s); B's leader reached its raft", shared, got, last, back.fsm.clusterID(), idA)
	}
	if leader, _ := back.raft.LeaderWithID(); leader != "" {
		t.Fatalf("a2 follows %s", leader)
	}
}

// TestJoinableCluster: a leader takes a joiner holding no ID, or its own;
// refuses for good one holding another; and asks one holding an ID to
// retry while it holds none itself.
func TestJoinableCluster(t *testing.T) {
	a, b, none := newClusterID(), newClusterID(), clusterID{}
	for _, tc := range []struct {
		ours, theirs clusterID
		want         error
	}{
		{a, a, nil}, {a, none, nil}, {none, none, nil},
		{a, b, ErrClusterMismatch},
		{none, a, errClusterIDPending},
	} {
		err := joinableCluster(tc.ours, tc.theirs)
		if (tc.want == nil) != (err == nil) || (tc.want != nil && !errors.Is(err, tc.want)) {
			t.Errorf("leader %q, joiner %q: %v; want %v", tc.ours, tc.theirs, err, tc.want)
		}
	}
}
