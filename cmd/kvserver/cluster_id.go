package main

import (
	"crypto/rand"
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
