package main

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
)

// clusterID names one cluster for its whole life (S13): drawn at random by
// the first leader whose state has none, and committed through the raft
// log, so every member that applied it, or installed a snapshot taken
// after it, holds the same one. The zero value is "not known yet".
type clusterID [16]byte

// newClusterID draws a cluster ID. 128 random bits: two clusters drawing
// the same one is not a case to design for.
func newClusterID() clusterID {
	var id clusterID
	rand.Read(id[:]) // never fails (crypto/rand, Go 1.24+)
	return id
}

func (id clusterID) known() bool { return id != clusterID{} }

// String is the ID in hex, "" when not known.
func (id clusterID) String() string {
	if !id.known() {
		return ""
	}
	return hex.EncodeToString(id[:])
}

// parseClusterID reads String's form; "" is the unknown ID.
func parseClusterID(s string) (clusterID, error) {
	var id clusterID
	if s == "" {
		return id, nil
	}
	if len(s) != 2*len(id) {
		return id, fmt.Errorf("%w: cluster ID %q is not %d hex digits", ErrBadCommand, s, 2*len(id))
	}
	if _, err := hex.Decode(id[:], []byte(s)); err != nil {
		return clusterID{}, fmt.Errorf("%w: cluster ID %q: %v", ErrBadCommand, s, err)
	}
	return id, nil
}

// clusterIDFrom reads a stored or transmitted ID: 16 bytes, not all zero.
func clusterIDFrom(b []byte) (clusterID, error) {
	var id clusterID
	if len(b) != len(id) {
		return id, fmt.Errorf("%w: cluster ID of %d bytes", ErrBadCommand, len(b))
	}
	copy(id[:], b)
	if !id.known() {
		return id, fmt.Errorf("%w: cluster ID of zeros", ErrBadCommand)
	}
	return id, nil
}

// ErrClusterMismatch is returned when a node's state belongs to another
// cluster than the one it meets (S13): a join through a member of another
// cluster, a snapshot of another cluster, a raft peer of another cluster.
var ErrClusterMismatch = errors.New("kvserver: cluster ID mismatch")

// errClusterIDPending answers a join naming a cluster to a leader that
// holds no ID yet (503: the joiner retries).
var errClusterIDPending = errors.New("kvserver: this leader has not applied its cluster's ID yet")

// joinableCluster is nil if a leader holding ours may take a joiner whose
// state holds theirs: either holds none, or both the same (S13). A leader
// holding none yet (just elected, its cluster's ID not applied) cannot
// tell a joiner holding one apart, and its raft hello would pass that
// joiner's: errClusterIDPending, and the joiner asks again.
func joinableCluster(ours, theirs clusterID) error {
	if err := sameCluster(ours, theirs, "the joiner's"); err != nil {
		return err
	}
	if theirs.known() && !ours.known() {
		return fmt.Errorf("%w, and the joiner's state names cluster %s", errClusterIDPending, theirs)
	}
	return nil
}

// sameCluster is nil unless both IDs are known and differ: a node that
// has not learnt its cluster's ID yet (a new one, or one whose state
// predates S13) has no state of another cluster to protect.
func sameCluster(ours, theirs clusterID, what string) error {
	if ours.known() && theirs.known() && ours != theirs {
		return fmt.Errorf("%w: this node's state belongs to cluster %s, %s to cluster %s", ErrClusterMismatch, ours, what, theirs)
	}
	return nil
}

func (id clusterID) bytes() []byte { return id[:] }

// clusterRecord is what a state holds at clusterKey: its cluster's ID and
// the index of the log entry that named it, so that a leader can tell a
// joiner whose state names no cluster (one older than S13) from a member
// of its own: a member that applied that entry holds the ID.
//
// Encoded as the ID's 16 bytes and the index as 8 bytes big-endian; a
// record of the ID alone (the first form) has the index unknown (0).
type clusterRecord struct {
	id    clusterID
	index uint64
}

func (r clusterRecord) encode() []byte {
	return binary.BigEndian.AppendUint64(r.id.bytes()[:len(r.id):len(r.id)], r.index)
}

// clusterRecordFrom reads a stored or streamed record.
func clusterRecordFrom(b []byte) (clusterRecord, error) {
	var r clusterRecord
	if len(b) == len(r.id)+8 {
		r.index = binary.BigEndian.Uint64(b[len(r.id):])
		b = b[:len(r.id)]
	}
	var err error
	r.id, err = clusterIDFrom(b)
	return r, err
}

// joinableState adds to joinableCluster the case where the joiner's state
// names no cluster yet has applied entries (applied > 0): state written
// before S13, of this cluster or of another, which the IDs cannot tell
// apart. It is this cluster's only if it is behind the entry that named
// ours (ourIndex; a state that applied it would hold the ID), and if the
// joiner is already a server of this cluster (member: its ID and raft
// address are in the leader's configuration); otherwise it is refused for
// good, as another cluster's state would go on serving that cluster's
// values: its state machine skips this cluster's commands up to its own
// applied index, the entry naming this cluster among them. A leader that
// holds no ID yet cannot judge: errClusterIDPending. ("A state that
// applied the naming entry holds the ID" assumes every member that
// applied it ran S13: the raft hello keeps older kvservers, which would
// skip the entry as an unknown op, out of a cluster that has one.)
func joinableState(ours clusterRecord, theirs clusterID, applied uint64, member bool) error {
	if err := joinableCluster(ours.id, theirs); err != nil || theirs.known() || applied == 0 {
		return err
	}
	switch {
	case !ours.id.known():
		return fmt.Errorf("%w, and the joiner's state has applied entries through index %d but names no cluster", errClusterIDPending, applied)
	case ours.index != 0 && applied >= ours.index:
		return fmt.Errorf("%w: the joiner's state has applied entries through index %d, past the entry that named cluster %s (%d), yet names no cluster: it is another cluster's",
			ErrClusterMismatch, applied, ours.id, ours.index)
	case !member:
		return fmt.Errorf("%w: the joiner's state has applied entries through index %d of a cluster it does not name (state older than cluster IDs), and it is no server of cluster %s",
			ErrClusterMismatch, applied, ours.id)
	}
	return nil
}
