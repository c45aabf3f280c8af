package main

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/hashicorp/raft"
)

// ErrUnknownMember is returned for a removal of a server that is not in
// the latest configuration.
var ErrUnknownMember = errors.New("kvserver: no such member")

// ErrUnsafeRemoval is returned for a removal that would leave the new
// configuration without a majority of voters the leader reaches, or
// without a voter at all (S11).
var ErrUnsafeRemoval = errors.New("kvserver: removal refused")

// ErrRemoved is returned by a node removed from the cluster's
// configuration for every request but /status and /members (S11).
var ErrRemoved = errors.New("kvserver: this node was removed from the cluster")

// members is the latest configuration, each member marked with whether
// this node's heartbeats reach it (S11) and whether it leads.
// REQUIRES: this node is the leader (else raft.ErrNotLeader).
func (n *Node) members() ([]member, error) {
	if !n.isLeader() {
		return nil, raft.ErrNotLeader
	}
	cf := n.raft.GetConfiguration()
	if err := cf.Error(); err != nil {
		return nil, err
	}
	ms := n.membersOf(cf.Configuration(), raft.ServerID(n.cfg.ID))
	for i := range ms {
		reached := n.reaches(raft.ServerID(ms[i].ID))
		ms[i].Reachable = &reached
	}
	return ms, nil
}

// reaches reports whether this node, as leader, counts id as reached: id
// is this node, or answered one of its AppendEntries within the last
// heartbeat timeout.
func (n *Node) reaches(id raft.ServerID) bool {
	return string(id) == n.cfg.ID || n.beats.reached(id)
}

// removeMember removes server id from the configuration and returns once
// the removal is committed. Unless force, it refuses (ErrUnsafeRemoval)
// a removal whose new configuration would not have a majority of voters
// this node reaches; it always refuses the last voter's. Removing this
// node, the leader, is allowed: raft commits the removal, then this node
// steps down and the others elect a leader (S11).
// REQUIRES: this node is the leader (else raft.ErrNotLeader).
func (n *Node) removeMember(id string, force bool) error {
	// One removal at a time: two checked against the same configuration
	// could each keep a majority and together not. raft refuses a change
	// to a configuration other than the one checked (prevIndex) anyway;
	// this spares the second removal a spurious failure.
	n.removing.Lock()
	defer n.removing.Unlock()
	cf := n.raft.GetConfiguration()
	if err := cf.Error(); err != nil {
		return err
	}
	found := false
	var voters, reached int
	var unreached []string
	for _, s := range cf.Configuration().Servers {
		if s.ID == raft.ServerID(id) {
			found = true
			continue
		}
		if s.Suffrage != raft.Voter {
			continue
		}
		voters++
		if n.reaches(s.ID) {
			reached++
		} else {
			unreached = append(unreached, string(s.ID))
		}
	}
	switch {
	case !found && n.fsm.freshJoined(id) != "":
		// A server whose fresh join this cluster took and which never
		// joined again: its record alone remains, and would vouch for
		// any state older than cluster IDs at its ID and address.
		return n.apply(command{op: opFreshJoinEnd, key: []byte(id)})
	case !found:
		return fmt.Errorf("%w %s (GET /members lists them)", ErrUnknownMember, id)
	case voters == 0:
		return fmt.Errorf("%w: %s is the last voter; a cluster without one commits nothing, not even a join", ErrUnsafeRemoval, id)
	case !force && reached <= voters/2:
		return fmt.Errorf("%w: without %s the cluster has %d voters, of which this leader's heartbeats reach %d, not a majority (not reached: %s): it could commit nothing, not even the removal; bring them back first, or add ?force=true if they are up",
			ErrUnsafeRemoval, id, voters, reached, strings.Join(unreached, ", "))
	}
	err := n.await(n.raft.RemoveServer(raft.ServerID(id), cf.Index(), applyTimeout))
	if err != nil && !errors.Is(err, raft.ErrRaftShutdown) && !errors.Is(err, raft.ErrNotLeader) && !errors.Is(err, raft.ErrLeadershipLost) {
		if now := n.raft.GetConfiguration(); now.Error() == nil && now.Index() != cf.Index() {
			return fmt.Errorf("%w: the configuration changed while %s's removal was checked (%v); retry", ErrUnsafeRemoval, id, err)
		}
	}
	return err
}

// removed reports whether this node is outside the cluster's latest
// configuration as it knows it, and no leader is in contact with it: a
// removed member, still running (S11). The contact check keeps a node
// that is joining from counting as removed while a snapshot it installs
// predates its addition, and keeps the hot path of a member in contact
// clear of GetConfiguration (a round trip through raft's main loop).
//
// A removal raft never delivered here (this node cut off until the
// leader gave up sending it) is learned from a member's GET /members
// instead (removalWatch); a leader's contact since voids it.
func (n *Node) removed() bool {
	switch n.raft.State() {
	case raft.Leader, raft.Shutdown:
		return false
	}
	contact := n.raft.LastContact()
	if time.Since(contact) < n.heartbeat {
		return false
	}
	if n.leftOutSince(contact) {
		return true
	}
	servers, ok := n.latestServers()
	return ok && !hasServerID(servers, raft.ServerID(n.cfg.ID))
}

// leftOutSince reports whether a leader's configuration without this
// node was seen after contact, the last a leader had with it.
func (n *Node) leftOutSince(contact time.Time) bool {
	at := n.leftOutAt.Load()
	// The zero Time (no contact since start) has no UnixNano.
	return at != 0 && (contact.IsZero() || contact.UnixNano() < at)
}

// latestServers is the latest configuration this node knows, and false
// when it knows none (a node not yet joined, or raft shut down).
func (n *Node) latestServers() ([]raft.Server, bool) {
	cf := n.raft.GetConfiguration()
	if cf.Error() != nil || len(cf.Configuration().Servers) == 0 {
		return nil, false
	}
	return cf.Configuration().Servers, true
}

// removalWatch asks, every other heartbeat timeout while no leader is in
// contact with this node and its own configuration still counts it, the
// members of that configuration for the leader's (GET /members, which a
// follower forwards to the leader), and records when one lists a
// configuration without this node (leftOutAt): a member removed while
// cut off, or while down and restarted without -join, hears nothing from
// raft, whose leader no longer sends it anything, and would otherwise
// pass for a member cut off from the others.
func (n *Node) removalWatch() {
	defer n.bg.Done()
	tick := time.NewTicker(2 * n.heartbeat)
	defer tick.Stop()
	for {
		select {
		case <-n.stop:
			return
		case <-tick.C:
		}
		switch n.raft.State() {
		case raft.Leader, raft.Shutdown:
			continue
		}
		if contact := n.raft.LastContact(); time.Since(contact) < n.heartbeat || n.leftOutSince(contact) {
			continue
		}
		servers, ok := n.latestServers()
		if !ok || !hasServerID(servers, raft.ServerID(n.cfg.ID)) {
			continue
		}
		for _, s := range servers {
			if string(s.ID) == n.cfg.ID {
				continue
			}
			if listed, ok := n.leaderLists(s.ID); ok {
				if !listed {
					n.leftOutAt.Store(time.Now().UnixNano())
				}
				break
			}
		}
	}
}

// leaderLists asks member id for the leader's configuration and reports
// whether it lists this node; ok is false without an answer.
func (n *Node) leaderLists(id raft.ServerID) (listed, ok bool) {
	addr := n.fsm.memberHTTP(string(id))
	if addr == "" {
		return false, false
	}
	var ms []member
	if !n.askMember(addr, "/members", &ms) || len(ms) == 0 {
		return false, false
	}
	for _, m := range ms {
		if m.ID == n.cfg.ID {
			return true, true
		}
	}
	return false, true
}

func hasServerID(servers []raft.Server, id raft.ServerID) bool {
	for _, s := range servers {
		if s.ID == id {
			return true
		}
	}
	return false
}
