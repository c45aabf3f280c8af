package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/raft"
	"github.com/sievekv/sievekv/kv"
	"github.com/sievekv/sievekv/raftstore"
)

// Node is one member of the replicated service: raft over a raftstore log,
// a file snapshot store, and the sievekv state machine.
type Node struct {
	cfg   Config
	raft  *raft.Raft
	fsm   *stateMachine
	store *raftstore.Store
	trans raft.Transport
	sec   *security
	// peers is the client of this node's requests to other members (joins,
	// probes): one transport, so a probe reuses a kept-alive connection
	// instead of stranding one per call until its idle timeout.
	peers *http.Client
	// handshake is trans's cluster handshake (S13), nil with a transport
	// set in Config; joined is the cluster a join's answer named
	// (helloCluster).
	handshake *clusterStreamLayer
	joined    atomic.Pointer[clusterID]
	// beats is which members this node's heartbeats, as leader, fail to
	// reach: a member they reach is not removed by a join (S10); and
	// which they reach: a removal keeps a majority of those (S11).
	beats *heartbeatWatch
	// heartbeat is raft's heartbeat timeout.
	heartbeat time.Duration
	// removing serializes removals (S11).
	removing sync.Mutex
	// joining serializes joins on the leader (addMember): each reads the
	// configuration, changes it, and may wait for its joiner's answer
	// (S12), and a second join of the same ID interleaved would otherwise
	// promote or remove the first's server.
	joining sync.Mutex
	// leftOutAt is when a member's GET /members, answered by the
	// leader, last listed a configuration without this node (unix ns; 0
	// for never): a removal raft never delivered here (S11).
	leftOutAt atomic.Int64

	// readyTerm is the term in which this node, as leader, has applied
	// everything committed before it led (a barrier), which linearizable
	// reads need (S4).
	readyTerm atomic.Uint64

	// failed gets the error that ended this node's service on its own:
	// a join its cluster refused for good (S13). Failed hands it out.
	failed chan error

	stop     chan struct{}
	bg       sync.WaitGroup
	stopOnce sync.Once
}

// Failed delivers, once, the error for which this node gave up serving
// on its own: its state belongs to another cluster than the one -join
// names (ErrClusterMismatch, S13). The caller shuts the node down.
func (n *Node) Failed() <-chan error { return n.failed }

// ErrNoLeader is returned when the cluster has no leader to serve a request.
var ErrNoLeader = errors.New("kvserver: no leader")

// StartNode opens the node's directory and starts raft: bootstrapping a
// one-node cluster in a directory without raft state and without
// cfg.Join, and rejoining from the stored state otherwise. With cfg.Join
// and no raft term or log it first has the leader remove any member of
// its ID or raft address and returns only once that is committed,
// retrying through cfg.Join until it is (S8); without cfg.Join, snapshots
// or applied entries in the state DB without a term or log are
// ErrRaftStateLost. With cfg.Join and state it
// asks to be added back in case it was removed (S9), unless the stored
// cluster is this node alone (ErrJoinIgnored).
//
// It refuses settings that would expose the node (K1) with ErrInsecure.
func StartNode(cfg Config) (*Node, error) {
	return StartNodeContext(context.Background(), cfg)
}

// StartNodeContext is StartNode, giving up the wait for a fresh join's
// removal (S8) once ctx ends: it returns an error wrapping ctx.Err(), with
// raft not started and the directory closed, still without raft state,
// so a restart with cfg.Join asks again.
func StartNodeContext(ctx context.Context, cfg Config) (*Node, error) {
	cfg.normalizeAddrs()
	sec, err := loadSecurity(&cfg)
	if err != nil {
		return nil, err
	}
	return startNode(ctx, cfg, sec)
}

// startNode is StartNodeContext with the security settings loaded.
func startNode(ctx context.Context, cfg Config, sec *security) (*Node, error) {
	if cfg.ID == "" || cfg.Dir == "" || cfg.HTTPAddr == "" || (cfg.RaftAddr == "" && cfg.Transport == nil) {
		return nil, fmt.Errorf("kvserver: -id, -dir, -raft and -http are required")
	}
	if cfg.LogOutput == nil {
		cfg.LogOutput = os.Stderr
	}
	cfg.Limits = cfg.Limits.withDefaults()
	if err := cfg.Limits.check(); err != nil {
		return nil, err
	}
	// Checked before anything reaches the network: a fresh join asks the
	// leader to remove this node's old server first (S8), which a node
	// that then fails on its own settings would have done for nothing.
	if err := cfg.checkStartable(); err != nil {
		return nil, err
	}
	n := &Node{cfg: cfg, sec: sec, peers: sec.httpClient(cfg.Token), stop: make(chan struct{}), failed: make(chan error, 1)}
	if err := n.open(ctx); err != nil {
		if n.raft != nil {
			// Started, and failed after: its goroutines must not go on
			// calling into the stores closed below.
			n.raft.Shutdown().Error()
		}
		n.closeStores()
		return nil, err
	}
	return n, nil
}

func (n *Node) open(ctx context.Context) error {
	cfg := &n.cfg
	var err error
	if n.store, err = raftstore.Open(filepath.Join(cfg.Dir, "raft"), cfg.DB); err != nil {
		return err
	}
	if n.fsm, err = openStateMachine(filepath.Join(cfg.Dir, "state"), cfg.DB); err != nil {
		return err
	}
	// The record serves a state older than cluster IDs (applied entries,
	// no ID) between its fresh join and learning the ID; any other state
	// ignores it, so a stale one (its raft directory kept, the state
	// wiped, a bootstrap since) cannot make the node hello a cluster it
	// no longer belongs to (a review).
	if n.fsm.applied.Load() > 0 && !n.fsm.clusterID().known() {
		if err := n.loadJoinedCluster(); err != nil {
			return err
		}
	}
	snaps, err := raft.NewFileSnapshotStoreWithLogger(cfg.Dir, 2, cfg.logger("snapshot"))
	if err != nil {
		return fmt.Errorf("kvserver: snapshot store: %w", err)
	}
	if err := n.catchUpFromSnapshot(snaps); err != nil {
		return err
	}
	existing, err := raft.HasExistingState(n.store, n.store, snaps)
	if err != nil {
		return fmt.Errorf("kvserver: inspect state: %w", err)
	}
	// Whether the raft store holds a term or a log: snapshots alone (the
	// raft directory lost, snapshots/ kept) do not hold this node's vote
	// nor what it acknowledged after them.
	logged, err := raft.HasExistingState(n.store, n.store, raft.NewInmemSnapshotStore())
	if err != nil {
		return fmt.Errorf("kvserver: inspect state: %w", err)
	}
	freshJoin := !logged && cfg.Join != ""
	if n.trans, n.handshake, err = newTransport(cfg, n.sec, n.helloCluster, freshJoin); err != nil {
		return err
	}
	n.fsm.onNamed = n.clusterLearnt
	switch {
	case freshJoin:
		// Before raft runs, so that nothing this node says in raft can
		// count as what a member of the same ID or address said before
		// it lost its state (S8). Its transport, listening already,
		// takes no peer until then: an RPC read now would wait for raft
		// and be served, from whatever cluster it came (S13).
		if err := n.requestJoin(ctx, n.joinRequest(true)); errors.Is(err, ErrClusterMismatch) {
			return fmt.Errorf("kvserver: %s: %s holds the state of another cluster than %s's: %w; start it from an empty -dir to join that cluster", cfg.ID, cfg.Dir, cfg.Join, err)
		} else if errors.Is(err, errKeepJoined) {
			return err
		} else if err != nil {
			return fmt.Errorf("kvserver: %s stopped waiting for %s to remove any member of its ID or raft address (raft not started; %s still has no raft state, so started again with -join it asks again): %w",
				cfg.ID, cfg.Join, cfg.Dir, err)
		}
		if testAfterFreshJoin != nil {
			if err := testAfterFreshJoin(); err != nil {
				return err
			}
		}
		if n.handshake != nil {
			n.handshake.hold(false)
		}
	case !logged && existing:
		return fmt.Errorf("%w: %s holds snapshots but no raft term or log, so this node's vote and the entries it acknowledged after the last snapshot are lost; start it with -join to rejoin its cluster as a new member, or restore %s",
			ErrRaftStateLost, cfg.Dir, filepath.Join(cfg.Dir, "raft"))
	case !logged && n.fsm.applied.Load() > 0:
		// Before any snapshot: the state DB has applied entries of a log
		// that is gone. Bootstrapping a new cluster on it would number
		// the new log from 1 again, and the state machine, which skips
		// what it has applied (raft replays from the last snapshot at
		// start, S2), would skip every new command up to its old applied
		// index while each was acknowledged.
		return fmt.Errorf("%w: %s has applied raft entries through index %d but %s holds no raft term or log, so this node's vote and its log are lost; start it with -join to rejoin its cluster as a new member, or restore %s",
			ErrRaftStateLost, filepath.Join(cfg.Dir, "state"), n.fsm.applied.Load(), filepath.Join(cfg.Dir, "raft"), filepath.Join(cfg.Dir, "raft"))
	}
	rc := cfg.raftConfig()
	n.heartbeat = rc.HeartbeatTimeout
	n.beats = newHeartbeatWatch(rc.HeartbeatTimeout)
	if n.raft, err = raft.NewRaft(rc, n.fsm, n.store, n.store, snaps, n.beats.transport(n.trans)); err != nil {
		return fmt.Errorf("kvserver: start raft: %w", err)
	}
	switch {
	case existing && cfg.Join != "":
		if err := n.checkJoinHonoured(); err != nil {
			return err
		}
	case existing:
		// Rejoin from the stored configuration.
	case cfg.Join == "":
		// A node without state and without -join cannot know of a
		// cluster that still counts its ID: it starts a new one (S8).
		boot := raft.Configuration{Servers: []raft.Server{{ID: raft.ServerID(cfg.ID), Address: n.trans.LocalAddr()}}}
		if err := n.raft.BootstrapCluster(boot).Error(); err != nil {
			return fmt.Errorf("kvserver: bootstrap: %w", err)
		}
	}
	if cfg.Join != "" {
		// With state too: a node removed while it was down is in no
		// configuration its peers hold, and only a join adds it back (S9).
		n.bg.Add(1)
		go n.joinLoop()
	}
	n.raft.RegisterObserver(n.beats.obs)
	n.bg.Add(3)
	go func() {
		defer n.bg.Done()
		n.beats.run(n.stop)
	}()
	go n.leaderLoop()
	go n.removalWatch()
	return nil
}

// catchUpFromSnapshot restores the newest snapshot when the state DB is
// behind it (its directory lost or replaced): raft, which does not restore
// at start (S2), would otherwise replay only the entries after it. Behind
// is by the applied index the stream records, not raft's label: raft
// labels a snapshot with its last applied entry of any kind, and a
// barrier, no-op or configuration entry after the last command never
// reaches the state, so by the label a state as new as the snapshot was
// restored, whole, at every start. A snapshot of another cluster (S13) is
// restored, refused and removed whatever its applied index.
func (n *Node) catchUpFromSnapshot(snaps raft.SnapshotStore) error {
	for {
		list, err := snaps.List()
		if err != nil || len(list) == 0 || list[0].Index <= n.fsm.applied.Load() {
			return err
		}
		_, rc, err := snaps.Open(list[0].ID)
		if err != nil {
			return fmt.Errorf("kvserver: open snapshot %s: %w", list[0].ID, err)
		}
		applied, id, herr := readSnapshotHead(rc)
		if ours := n.fsm.clusterID(); herr == nil && applied <= n.fsm.applied.Load() && ours.known() && id == ours {
			// Kept only when it is this cluster's: another's goes on to
			// Restore, refused and removed below, as does a damaged one,
			// which Restore reports.
			return rc.Close()
		}
		rc.Close()
		if _, rc, err = snaps.Open(list[0].ID); err != nil {
			return fmt.Errorf("kvserver: open snapshot %s: %w", list[0].ID, err)
		}
		err = n.fsm.Restore(rc)
		if !errors.Is(err, ErrClusterMismatch) {
			return err
		}
		// raft saves an installed snapshot before the state machine
		// restores it, so one Restore refused (another cluster's, S13)
		// stays in the store as the newest: removed, or every start
		// would refuse it again and raft would count its index as its
		// own. The file store keeps each snapshot in a directory named
		// by its ID.
		fmt.Fprintf(n.cfg.LogOutput, "kvserver: %s: removing snapshot %s, of another cluster: %v\n", n.cfg.ID, list[0].ID, err)
		if rerr := os.RemoveAll(filepath.Join(n.cfg.Dir, "snapshots", list[0].ID)); rerr != nil {
			return fmt.Errorf("kvserver: remove snapshot %s of another cluster: %w", list[0].ID, rerr)
		}
	}
}

// ErrRaftStateLost is returned by StartNode without Join for a directory
// whose raft store is empty while its snapshots remain, or while its state
// DB records entries applied from the lost log (S8).
var ErrRaftStateLost = errors.New("kvserver: raft state lost")

// ErrJoinIgnored is returned by StartNode for a -join it would ignore in
// a directory that holds a one-node cluster of this node alone.
var ErrJoinIgnored = errors.New("kvserver: -join would be ignored")

// checkJoinHonoured refuses to start with cfg.Join when the stored
// configuration is this node alone: a node started once without -join by
// mistake bootstrapped a cluster of its own, and restarted with -join it
// would silently go on serving that one, acknowledging writes the cluster
// it was meant to join never sees.
func (n *Node) checkJoinHonoured() error {
	cf := n.raft.GetConfiguration()
	if err := cf.Error(); err != nil {
		return fmt.Errorf("kvserver: read the stored configuration: %w", err)
	}
	servers := cf.Configuration().Servers
	if len(servers) == 1 && servers[0].ID == raft.ServerID(n.cfg.ID) {
		return fmt.Errorf("%w: %s holds a cluster of %s alone (started once without -join?); start it without -join to serve that cluster, or from an empty -dir to join %s",
			ErrJoinIgnored, n.cfg.Dir, n.cfg.ID, n.cfg.Join)
	}
	return nil
}

// leaderLoop runs a barrier each time this node becomes leader, so reads
// see every entry committed before it led (S4), and registers this node's
// HTTP address if the state does not have it yet.
func (n *Node) leaderLoop() {
	defer n.bg.Done()
	for {
		select {
		case <-n.stop:
			return
		case isLeader := <-n.raft.LeaderCh():
			if !isLeader {
				continue
			}
			term := n.raft.CurrentTerm()
			if n.await(n.raft.Barrier(applyTimeout)) != nil {
				continue
			}
			n.readyTerm.Store(term)
			if !n.fsm.clusterID().known() {
				// A new cluster, or one older than S13: name it. Every
				// leader until one commits proposes; the first applied
				// wins (stateMachine.Apply).
				c := command{op: opCluster, value: newClusterID().bytes()}
				n.raft.Apply(c.encode(), applyTimeout)
			}
			if n.fsm.memberHTTP(n.cfg.ID) != n.cfg.advertisedHTTP() {
				c := command{op: opMember, key: []byte(n.cfg.ID), value: []byte(n.cfg.advertisedHTTP())}
				n.raft.Apply(c.encode(), applyTimeout)
			}
		}
	}
}

// joinRequest is the body of POST /join.
type joinRequest struct {
	ID   string `json:"id"`
	Raft string `json:"raft"`
	HTTP string `json:"http"`
	// Fresh marks the join of a node that has no raft state and has not
	// started raft: the leader removes every member with its ID or raft
	// address and adds nothing; the node starts raft once that is
	// committed, and then joins again without Fresh (S8).
	Fresh bool `json:"fresh,omitempty"`
	// Cluster is the ID of the cluster whose state the joiner holds, ""
	// if none (S13): the leader of another cluster refuses the join.
	Cluster string `json:"cluster,omitempty"`
	// Applied is the index through which the joiner's state has applied
	// entries: with no Cluster, a leader tells state older than S13 of
	// another cluster from its own members' by it (joinableState).
	Applied uint64 `json:"applied,omitempty"`
	// Ops is the highest command op the joiner applies, absent from
	// kvservers older than op 6: a leader adding an older one ends every
	// fresh-join record first (endFreshJoinRecords).
	Ops int `json:"ops,omitempty"`
}

// joinReply is the body of a 200 answer to POST /join. Fresh tells a
// fresh joiner that the leader knew the flag: one that did not (an older
// kvserver) took the join as an ordinary one. Cluster is the leader's
// cluster ID, "" if it holds none yet: a joiner whose state names none
// hellos with it from then on (S13), before its state learns it.
type joinReply struct {
	Fresh   bool   `json:"fresh"`
	Cluster string `json:"cluster,omitempty"`
}

// helloCluster is the ID this node's raft handshake names: its state's,
// or, until the state holds one, the one its join's answer named.
func (n *Node) helloCluster() clusterID {
	if id := n.fsm.clusterID(); id.known() {
		return id
	}
	if id := n.joined.Load(); id != nil {
		return *id
	}
	return clusterID{}
}

// joinedCluster records the cluster a join's answer named, if this
// node's state names none and it knew none before. It is kept in the
// raft stable store too (joinedClusterKey), before the node acts on the
// answer: a node with state older than cluster IDs whose fresh join was
// taken, and that restarts before its state learns the ID, must name the
// cluster in its next join, since the fresh join removed the server its
// state was judged by (joinableState).
func (n *Node) joinedCluster(s string) error {
	id, err := parseClusterID(s)
	if err != nil || !id.known() || n.helloCluster().known() {
		return nil
	}
	if err := n.store.Set(joinedClusterKey, []byte(id.String())); err != nil {
		return fmt.Errorf("%w %s: %w", errKeepJoined, id, err)
	}
	n.joined.Store(&id)
	n.clusterLearnt()
	return nil
}

// testAfterFreshJoin, if set, runs once a fresh join is taken, before raft
// starts; an error ends the start there, as a crash would.
var testAfterFreshJoin func() error

// errKeepJoined is a failure to keep the cluster a join's answer named:
// the raft stable store failed, and the node stops.
var errKeepJoined = errors.New("kvserver: keep the cluster ID a join named")

// joinedClusterKey is the raft stable store's key for the cluster a join's
// answer named (joinedCluster). It lives beside raft's term and vote: if
// the raft directory is lost, so is the join it records, and the node
// joins afresh.
var joinedClusterKey = []byte("kvserver.JoinedCluster")

// loadJoinedCluster reads the cluster a join's answer named before a
// restart, if any.
func (n *Node) loadJoinedCluster() error {
	v, err := n.store.Get(joinedClusterKey)
	if errors.Is(err, raftstore.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	id, err := parseClusterID(string(v))
	if err != nil || !id.known() {
		return fmt.Errorf("kvserver: %s: the cluster ID a join named, %q: %w", filepath.Join(n.cfg.Dir, "raft"), v, kv.ErrCorruption)
	}
	n.joined.Store(&id)
	return nil
}

// clusterLearnt closes the raft connections whose hellos could not
// compare IDs, now that this node has one (clusterStreamLayer).
func (n *Node) clusterLearnt() {
	if n.handshake != nil {
		n.handshake.learnt()
	}
}

func (r joinRequest) validate() error {
	if r.ID == "" || r.Raft == "" || r.HTTP == "" {
		return fmt.Errorf("%w: join needs id, raft and http", ErrBadCommand)
	}
	// The HTTP address goes into the redirects every follower sends while
	// the joiner leads (scheme://HTTP/kv/...): a URL or a bare host there
	// would make them all unfollowable.
	if !isHostPort(r.HTTP) {
		return fmt.Errorf("%w: join http %q is not HOST:PORT", ErrBadCommand, r.HTTP)
	}
	if isUnspecifiedHost(r.HTTP) {
		return fmt.Errorf("%w: join http %q has an unspecified host nobody can dial", ErrBadCommand, r.HTTP)
	}
	if _, err := parseClusterID(r.Cluster); err != nil {
		return fmt.Errorf("join: %w", err)
	}
	return nil
}

// isHostPort reports whether addr is HOST:PORT with a host and a port in
// 1-65535: no scheme, path or user.
func isHostPort(addr string) bool {
	host, port, err := net.SplitHostPort(addr)
	p, perr := strconv.ParseUint(port, 10, 16)
	return err == nil && perr == nil && p != 0 && host != "" && !strings.ContainsAny(host, "/?#@")
}

// validateRaftAddr refuses a joiner's raft address that this node's
// transport cannot dial. A voter at such an address never answers, and
// added to a one-node cluster it leaves no majority: no leader, so not
// even the removal that would undo it can commit. The TCP transport (and
// its TLS form) dials HOST:PORT; a transport set in Config (tests' raft
// in-memory one) has addresses of its own form, which only it knows.
func (n *Node) validateRaftAddr(addr string) error {
	if n.cfg.Transport == nil && !isHostPort(addr) {
		return fmt.Errorf("%w: join raft %q is not HOST:PORT", ErrBadCommand, addr)
	}
	return nil
}

func (n *Node) joinRequest(fresh bool) joinRequest {
	// The cluster a fresh join's answer named counts as the state's: that
	// leader judged the state (joinableState) before it removed this
	// node's old server, and the join after, of a server no longer in
	// the configuration, would be judged again and refused.
	return joinRequest{ID: n.cfg.ID, Raft: string(n.trans.LocalAddr()), HTTP: n.cfg.advertisedHTTP(), Fresh: fresh,
		Cluster: n.helloCluster().String(), Applied: n.fsm.applied.Load(), Ops: int(lastOp)}
}

// joinLoop asks cfg.Join to add this node until it is a member or the node
// stops; any member forwards the request to the leader.
func (n *Node) joinLoop() {
	defer n.bg.Done()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-n.stop: // Shutdown must not wait for a join in flight
			cancel()
		case <-ctx.Done():
		}
	}()
	if err := n.requestJoin(ctx, n.joinRequest(false)); errors.Is(err, ErrClusterMismatch) {
		// Its raft runs, on the configuration of the cluster its state
		// is from, and the node must serve neither that one (it was told
		// to join another) nor, with a stranger's state, this one.
		fmt.Fprintf(n.cfg.LogOutput, "kvserver: %s: %s holds the state of another cluster than %s's: %v; stopping (start it from an empty -dir to join that cluster)\n", n.cfg.ID, n.cfg.Dir, n.cfg.Join, err)
		n.failed <- err
	} else if errors.Is(err, errKeepJoined) {
		fmt.Fprintf(n.cfg.LogOutput, "kvserver: %s: %v; stopping\n", n.cfg.ID, err)
		n.failed <- err
	}
}

// ErrJoinRefused is returned when the leader answered a join 400: the
// request itself is malformed (an -http address it refuses, say), and
// asking again changes nothing.
var ErrJoinRefused = errors.New("kvserver: the leader refused the join as malformed")

// requestJoin posts req to cfg.Join until the leader accepts it or ctx
// ends. A fresh join is accepted only by a leader that says it took it as
// one (joinReply). A leader of another cluster (412, S13) is final:
// ErrClusterMismatch; so is a 400, ErrJoinRefused.
func (n *Node) requestJoin(ctx context.Context, req joinRequest) error {
	body, _ := json.Marshal(req)
	client := n.peers
	for delay := 100 * time.Millisecond; ; delay = min(2*delay, 2*time.Second) {
		reply, err := postJoin(ctx, client, n.cfg.Join, body)
		if err == nil && req.Fresh && !reply.Fresh {
			err = fmt.Errorf("the leader took the join of a node without raft state as an ordinary one (a kvserver that predates fresh joins?); raft stays stopped, as a member of ID %s or address %s may still be counted with the state this node lost", req.ID, req.Raft)
		}
		if err == nil {
			return n.joinedCluster(reply.Cluster)
		}
		if errors.Is(err, ErrClusterMismatch) || errors.Is(err, ErrJoinRefused) {
			return err
		}
		fmt.Fprintf(n.cfg.LogOutput, "kvserver: join through %s: %v (retrying)\n", n.cfg.Join, err)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(delay):
		}
	}
}

func postJoin(ctx context.Context, client *http.Client, base string, body []byte) (joinReply, error) {
	var reply joinReply
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/join", bytes.NewReader(body))
	if err != nil {
		return reply, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return reply, err
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	switch resp.StatusCode {
	case http.StatusPreconditionFailed:
		return reply, fmt.Errorf("%w: %s: %s", ErrClusterMismatch, resp.Status, bytes.TrimSpace(msg))
	case http.StatusBadRequest:
		return reply, fmt.Errorf("%w: %s: %s", ErrJoinRefused, resp.Status, bytes.TrimSpace(msg))
	}
	if resp.StatusCode != http.StatusOK {
		return reply, fmt.Errorf("%s: %s", resp.Status, bytes.TrimSpace(msg))
	}
	// An empty body is an older leader's 200: Fresh stays false.
	json.Unmarshal(msg, &reply)
	return reply, nil
}

// join is addMember with the answer for the joiner: it names this
// leader's cluster (S13).
func (n *Node) join(req joinRequest) (joinReply, error) {
	if err := n.addMember(req); err != nil {
		return joinReply{}, err
	}
	return joinReply{Fresh: req.Fresh, Cluster: n.fsm.clusterID().String()}, nil
}

// ErrJoinerUnreachable is returned for a join whose server did not answer
// the leader at its raft address (S12): it is not made a voter.
var ErrJoinerUnreachable = errors.New("kvserver: joiner does not answer at its raft address")

// ErrMemberConflict is returned for a join that would replace a live
// member: its ID or raft address is a member's, the other half differs,
// and that member answers as itself.
var ErrMemberConflict = errors.New("kvserver: join conflicts with a live member")

// addMember makes req's server a voter and records its HTTP address. A
// member with req's ID at another address, or at req's address with
// another ID, is taken to be the machine req replaces and is removed
// first, unless it is alive (memberAlive, S10): a node started by
// mistake with a live member's ID must not vote that member out (nor,
// naming the leader, depose it) and take over its clients' redirects.
//
// A fresh join (req.Fresh) only removes: every member with req's ID or
// raft address, whatever its suffrage, unless alive as above, and
// returns once the removal is committed (S8), its own or one an earlier
// request proposed. The joiner, which starts
// raft only then, joins again to be added.
//
// A server is added as a nonvoter and made a voter only once it has
// answered this leader at its raft address (S12, addVoterOnceAnswered).
// Its vote would be safe at once (a new server's empty log is its true
// state), but a voter that never answers (a mistyped or unreachable
// address) counts towards every majority: added to a cluster of one, it
// leaves no majority, not even for the removal that would undo it.
// REQUIRES: this node is the leader (else raft.ErrNotLeader).
func (n *Node) addMember(req joinRequest) error {
	if err := req.validate(); err != nil {
		return err
	}
	if err := n.validateRaftAddr(req.Raft); err != nil {
		return err
	}
	theirs, _ := parseClusterID(req.Cluster) // checked by validate
	if err := joinableCluster(n.fsm.clusterID(), theirs); err != nil {
		return fmt.Errorf("join of %s at %s: %w", req.ID, req.Raft, err)
	}
	n.joining.Lock()
	defer n.joining.Unlock()
	cf := n.raft.GetConfiguration()
	if err := cf.Error(); err != nil {
		return err
	}
	// A server of the configuration, or one whose fresh join with state
	// older than cluster IDs this cluster took (its answer may never have
	// reached it: the joiner, asking again, names no cluster yet).
	member := slices.ContainsFunc(cf.Configuration().Servers, func(s raft.Server) bool {
		return s.ID == raft.ServerID(req.ID) && s.Address == raft.ServerAddress(req.Raft)
	}) || n.fsm.freshJoined(req.ID) == req.Raft
	if err := joinableState(n.fsm.clusterRecord(), theirs, req.Applied, member); err != nil {
		return fmt.Errorf("join of %s at %s: %w", req.ID, req.Raft, err)
	}
	var stale []raft.ServerID
	already, ownServer := false, false
	for _, s := range cf.Configuration().Servers {
		sameID, sameAddr := s.ID == raft.ServerID(req.ID), s.Address == raft.ServerAddress(req.Raft)
		switch {
		case sameID && sameAddr && string(s.ID) == n.cfg.ID && req.HTTP != n.cfg.advertisedHTTP():
			// This leader, alive by definition, named with another HTTP
			// address: taken, every follower would redirect the clients
			// (and their tokens) there until the next election.
			return fmt.Errorf("%w: %s at %s is this leader, serving HTTP at %s; join asked to register %s", ErrMemberConflict, s.ID, s.Address, n.cfg.advertisedHTTP(), req.HTTP)
		case sameID && sameAddr && !req.Fresh && s.Suffrage == raft.Voter:
			already = true // joining again is not an error
		case sameID && sameAddr && !req.Fresh:
			// The joiner itself, without a vote (an earlier join that
			// stopped short of S12's promotion): it is promoted below.
		case sameID || sameAddr:
			if n.memberAlive(s) {
				return fmt.Errorf("%w: %s at %s answers as itself (to raft's heartbeats or at /status); join asked for %s at %s", ErrMemberConflict, s.ID, s.Address, req.ID, req.Raft)
			}
			stale = append(stale, s.ID)
			ownServer = ownServer || (sameID && sameAddr)
		}
	}
	if req.Fresh && ownServer && !theirs.known() && req.Applied > 0 {
		// The removal below takes the joiner's own server out of the
		// configuration, which made its state this cluster's: record
		// that first. Only then: a join refused above (its server alive)
		// or one removing another server vouches for no state.
		if err := n.recordFreshJoin(cf.Configuration(), stale, req); err != nil {
			return err
		}
	}
	if !req.Fresh {
		if err := n.endFreshJoinRecords(req); err != nil {
			return err
		}
		c := command{op: opMember, key: []byte(req.ID), value: []byte(req.HTTP)}
		if err := n.apply(c); err != nil || already {
			return err
		}
	}
	for _, id := range stale {
		if err := n.await(n.raft.RemoveServer(id, 0, applyTimeout)); err != nil {
			return err
		}
	}
	if req.Fresh {
		// The answer starts the joiner's raft (S8), so it waits for every
		// removal to commit: also one an earlier request (this joiner's,
		// given up and sent again) proposed, which leaves nothing in the
		// latest configuration above to remove while it is uncommitted.
		return n.await(n.raft.Barrier(applyTimeout))
	}
	return n.addVoterOnceAnswered(raft.ServerID(req.ID), raft.ServerAddress(req.Raft))
}

// recordFreshJoin applies opFreshJoin for req, a fresh join with state
// older than cluster IDs whose own server the leader is about to remove
// (S13), unless a server of cf that stays (not this leader, not one of
// stale) does not report at /status that it applies that op: a member
// older than op 5 refuses every snapshot that holds the record, and so
// could never catch up again. Without the record the join still goes
// ahead, as before op 5: only a lost answer then leaves the joiner
// refused, which the log line says.
func (n *Node) recordFreshJoin(cf raft.Configuration, stale []raft.ServerID, req joinRequest) error {
	for _, s := range cf.Servers {
		if string(s.ID) == n.cfg.ID || slices.Contains(stale, s.ID) {
			continue
		}
		var st statusReply
		if addr := n.fsm.memberHTTP(string(s.ID)); addr == "" || !n.askMember(addr, "/status", &st) || st.Ops < int(opFreshJoinEnd) {
			n.cfg.logger("join").Warn("fresh join taken without a fresh-join record: a member does not report that it applies one (older kvserver, or not answering /status); should this answer be lost, the joiner's next join names no cluster and is refused",
				"joiner", req.ID, "member", s.ID, "ops", st.Ops)
			return nil
		}
	}
	return n.apply(command{op: opFreshJoin, key: []byte(req.ID), value: []byte(req.Raft)})
}

// endFreshJoinRecords ends every fresh-join record before req's server,
// older than op 6 (req.Ops), is added: it would refuse every snapshot
// holding one, and could never catch up by snapshot. A joiner whose
// record ends so, should its answer have been lost, is refused as before
// op 5 (recordFreshJoin's fallback).
func (n *Node) endFreshJoinRecords(req joinRequest) error {
	if req.Ops >= int(opFreshJoinEnd) {
		return nil
	}
	ids, err := n.fsm.freshJoinedIDs()
	if err != nil {
		return err
	}
	for _, id := range ids {
		if id == req.ID {
			continue // its own member command ends it
		}
		n.cfg.logger("join").Warn("fresh-join record ended: a kvserver older than op 6 joins, and would refuse every snapshot holding it",
			"joiner", req.ID, "record", id)
		if err := n.apply(command{op: opFreshJoinEnd, key: []byte(id)}); err != nil {
			return err
		}
	}
	return nil
}

// joinAnswerWait is how long a leader waits, in heartbeat timeouts, for a
// joiner added as a nonvoter to answer (S12). Raft sends a new server its
// first AppendEntries as soon as the configuration naming it is appended,
// and heartbeats ten times per heartbeat timeout after that, so a server
// that is up answers within milliseconds; five timeouts leave room for a
// loaded machine and still answer the joiner (5 s with raft's default
// timeout) inside its HTTP client's timeout.
const joinAnswerWait = 5

// joinAnswerWaitMax caps the wait, so that with a long heartbeat timeout
// the joiner still hears why its join failed before its HTTP client
// (applyTimeout + 5 s) gives up: an answer comes within a round trip
// whatever the timeout.
const joinAnswerWaitMax = 5 * time.Second

// addVoterOnceAnswered adds id at addr as a nonvoter, waits for addr to
// answer one of this leader's AppendEntries, and then makes it a voter
// (S12). A server that does not answer in time is removed again and the
// join fails with ErrJoinerUnreachable; the joiner's retry starts over.
// Without a transport that reports answers (heartbeatWatch.reporting)
// nothing could show an answer, and the server is added as a voter
// straight away, as before S12.
func (n *Node) addVoterOnceAnswered(id raft.ServerID, addr raft.ServerAddress) error {
	if !n.beats.reporting {
		return n.await(n.raft.AddVoter(id, addr, 0, applyTimeout))
	}
	start := time.Now()
	added := n.raft.AddNonvoter(id, addr, 0, applyTimeout)
	if err := n.await(added); err != nil {
		return err
	}
	// The promotion or removal below applies only to the configuration
	// this addition made: one changed meanwhile (a removal, S11) fails
	// it rather than have it act on another server of the same ID.
	at := added.Index()
	wait := min(joinAnswerWait*n.heartbeat, joinAnswerWaitMax)
	deadline := time.NewTimer(wait)
	defer deadline.Stop()
	poll := time.NewTicker(min(n.heartbeat/10, 50*time.Millisecond))
	defer poll.Stop()
	for !n.beats.answeredSince(addr, start) {
		select {
		case <-n.stop:
			return raft.ErrRaftShutdown
		case <-poll.C:
		case <-deadline.C:
			return n.dropUnanswered(id, addr, at, wait)
		}
	}
	return n.await(n.raft.AddVoter(id, addr, at, applyTimeout))
}

// dropUnanswered removes the nonvoter id, added at configuration index
// at, that did not answer in wait, and returns the join's
// ErrJoinerUnreachable.
func (n *Node) dropUnanswered(id raft.ServerID, addr raft.ServerAddress, at uint64, wait time.Duration) error {
	err := fmt.Errorf("%w: %s at %s answered none of this leader's AppendEntries in %v; it was added as a nonvoter and removed again, not made a voter (check its -raft address, and that its raft port is reachable from here)",
		ErrJoinerUnreachable, id, addr, wait)
	if rmErr := n.await(n.raft.RemoveServer(id, at, applyTimeout)); rmErr != nil {
		return fmt.Errorf("%w; removing it again: %v", err, rmErr)
	}
	return err
}

// memberProbeTimeout bounds the /status request memberAlive sends.
const memberProbeTimeout = 2 * time.Second

// memberAlive reports whether member m is this node, is reached by this
// node's heartbeats (S10), or answers GET /status at its registered HTTP
// address as m's ID and as a member at m's raft address. A fresh node
// taking over m's ID (even its HTTP address or raft address) is in no
// configuration yet and has not started raft, so it passes for m on
// neither count.
func (n *Node) memberAlive(m raft.Server) bool {
	if string(m.ID) == n.cfg.ID {
		return true
	}
	addr := n.fsm.memberHTTP(string(m.ID))
	if addr == "" {
		return false
	}
	if !n.beats.unreachable(m.ID) {
		return true
	}
	var s statusReply
	if !n.askMember(addr, "/status", &s) || s.ID != string(m.ID) {
		return false
	}
	for _, sm := range s.Members {
		if sm.ID == string(m.ID) && sm.Raft == string(m.Address) {
			return true
		}
	}
	return false
}

// askMember sends GET path to the member at HTTP address addr and
// decodes its 200 answer into v, within memberProbeTimeout and while
// this node runs; it reports whether it did.
func (n *Node) askMember(addr, path string, v any) bool {
	ctx, cancel := context.WithTimeout(context.Background(), memberProbeTimeout)
	defer cancel()
	go func() {
		select {
		case <-n.stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, n.sec.scheme()+"://"+addr+path, nil)
	if err != nil {
		return false
	}
	resp, err := n.peers.Do(req)
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	return resp.StatusCode == http.StatusOK && json.NewDecoder(io.LimitReader(resp.Body, maxForwardedReply)).Decode(v) == nil
}

// awaitPoll is how often await looks whether raft shut itself down.
const awaitPoll = 50 * time.Millisecond

// await is f.Error(), unless raft or this node shuts down first
// (raft.ErrRaftShutdown). raft drops the futures of entries still queued
// for its FSM goroutine when it shuts down, unanswered (hashicorp/raft
// issue 498), so their Error waits for ever: a leaderLoop barrier held
// Shutdown for good, and a request its MaxRequests slot. raft can shut
// itself down too (a leader that removed itself, with ShutdownOnRemove,
// which raftConfig turns off), hence the poll. The
// goroutine left waiting on a dropped future ends with the process.
func (n *Node) await(f raft.Future) error {
	done := make(chan error, 1)
	go func() { done <- f.Error() }()
	poll := time.NewTicker(awaitPoll)
	defer poll.Stop()
	for {
		select {
		case err := <-done:
			return err
		case <-n.stop:
			return raft.ErrRaftShutdown
		case <-poll.C:
			if n.raft.State() == raft.Shutdown {
				return raft.ErrRaftShutdown
			}
		}
	}
}

// apply proposes c and waits until this node's state machine applied it.
func (n *Node) apply(c command) error {
	f := n.raft.Apply(c.encode(), applyTimeout)
	if err := n.await(f); err != nil {
		return err
	}
	if err, ok := f.Response().(error); ok {
		return err
	}
	return nil
}

func (n *Node) isLeader() bool { return n.raft.State() == raft.Leader }

// staleRead is key's value in this node's state, without consensus.
func (n *Node) staleRead(key []byte) ([]byte, error) {
	if err := n.fsm.failure(); err != nil {
		return nil, err
	}
	return n.fsm.get(key)
}

// status is this node's view of the cluster.
func (n *Node) status() statusReply {
	_, leader := n.raft.LeaderWithID()
	s := statusReply{
		ID:           n.cfg.ID,
		Cluster:      n.fsm.clusterID().String(),
		State:        n.raft.State().String(),
		Term:         n.raft.CurrentTerm(),
		Leader:       string(leader),
		LeaderHTTP:   n.leaderHTTP(),
		CommitIndex:  n.raft.CommitIndex(),
		AppliedIndex: n.raft.AppliedIndex(),
		LastIndex:    n.raft.LastIndex(),
		Members:      []member{},
		Removed:      n.removed(),
		Ops:          int(lastOp),
	}
	if err := n.fsm.failure(); err != nil {
		s.StateError = err.Error()
	}
	if ids, err := n.fsm.freshJoinedIDs(); err == nil {
		s.FreshJoins = ids
	}
	if cf := n.raft.GetConfiguration(); cf.Error() == nil {
		s.Members = n.membersOf(cf.Configuration(), leader)
	}
	return s
}

// membersOf lists the servers of cf as members, leader marked.
func (n *Node) membersOf(cf raft.Configuration, leader raft.ServerID) []member {
	ms := []member{}
	for _, srv := range cf.Servers {
		ms = append(ms, member{
			ID: string(srv.ID), Raft: string(srv.Address),
			HTTP: n.fsm.memberHTTP(string(srv.ID)), Suffrage: srv.Suffrage.String(),
			Leader: srv.ID == leader,
		})
	}
	return ms
}

// leaderHTTP is the leader's HTTP address, or "" when there is no leader
// or it has not registered one yet.
func (n *Node) leaderHTTP() string {
	_, id := n.raft.LeaderWithID()
	if id == "" {
		return ""
	}
	return n.fsm.memberHTTP(string(id))
}

// linearizableRead returns key's value as of some instant between the call
// and its return (S4): the leader confirms with a quorum that it still
// leads, and waits until it applied every entry committed before.
func (n *Node) linearizableRead(key []byte) ([]byte, error) {
	if n.readyTerm.Load() != n.raft.CurrentTerm() {
		term := n.raft.CurrentTerm()
		if err := n.await(n.raft.Barrier(applyTimeout)); err != nil {
			return nil, err
		}
		n.readyTerm.Store(term)
	}
	readIndex := n.raft.CommitIndex()
	if err := n.await(n.raft.VerifyLeader()); err != nil {
		return nil, err
	}
	deadline := time.Now().Add(applyTimeout)
	for n.raft.AppliedIndex() < readIndex {
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("kvserver: read waited %v for index %d to apply", applyTimeout, readIndex)
		}
		time.Sleep(100 * time.Microsecond)
	}
	if err := n.fsm.failure(); err != nil {
		return nil, err
	}
	return n.fsm.get(key)
}

// Shutdown stops raft, then closes the transport and both stores. The
// data directory then holds everything a restart needs. A leader first
// hands its leadership over (handOffLeadership).
func (n *Node) Shutdown() error {
	var err error
	n.stopOnce.Do(func() {
		if n.raft != nil {
			n.handOffLeadership()
		}
		close(n.stop)
		if n.raft != nil {
			err = n.raft.Shutdown().Error()
		}
		n.bg.Wait()
		n.peers.CloseIdleConnections()
		err = cmp.Or(err, n.closeStores())
	})
	return err
}

// handOffWait bounds, in heartbeat timeouts, how long a leader shutting
// down waits for its leadership to pass: raft gives a transfer one
// election timeout (the heartbeat timeout here) and then fails it.
const handOffWait = 2

// handOffLeadership has a leader pass its leadership, before it stops, to
// the voter with the most of its log (raft's LeadershipTransfer: it brings
// that voter up to date and tells it to stand at once). Stopped without,
// a leader leaves the cluster without one until a follower's election
// timeout runs out: at least one heartbeat timeout (1 s by default) of
// refused writes and linearizable reads per restarted leader, which a
// rolling restart pays once. A transfer that fails (no other voter, none
// reached) or takes longer than handOffWait heartbeat timeouts leaves
// that election to happen as before.
func (n *Node) handOffLeadership() {
	if n.raft.State() != raft.Leader || !n.hasOtherVoter() {
		return
	}
	done := make(chan error, 1)
	go func() { done <- n.raft.LeadershipTransfer().Error() }()
	select {
	case err := <-done:
		if err != nil {
			fmt.Fprintf(n.cfg.LogOutput, "kvserver: %s: leadership not handed over before shutdown: %v\n", n.cfg.ID, err)
		}
	case <-time.After(handOffWait * n.heartbeat):
		fmt.Fprintf(n.cfg.LogOutput, "kvserver: %s: leadership not handed over within %v; shutting down\n", n.cfg.ID, handOffWait*n.heartbeat)
	}
}

// hasOtherVoter reports whether the latest configuration has a voter
// besides this node.
func (n *Node) hasOtherVoter() bool {
	cf := n.raft.GetConfiguration()
	if cf.Error() != nil {
		return false
	}
	for _, s := range cf.Configuration().Servers {
		if s.Suffrage == raft.Voter && s.ID != raft.ServerID(n.cfg.ID) {
			return true
		}
	}
	return false
}

// closeStores closes all three, returning the first error (cmp.Or: the
// first non-nil one).
func (n *Node) closeStores() error {
	var transErr, fsmErr, storeErr error
	if c, ok := n.trans.(io.Closer); ok {
		transErr = c.Close()
	}
	if n.fsm != nil {
		fsmErr = n.fsm.close()
	}
	if n.store != nil {
		storeErr = n.store.Close()
	}
	return cmp.Or(transErr, fsmErr, storeErr)
}
