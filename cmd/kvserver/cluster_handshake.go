package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/raft"
)

// clusterStreamLayer opens every raft connection with a hello each way
// naming the cluster whose state its end holds (S13), and closes it
// before raft sends a byte if both ends know their cluster and the two
// differ. raft's RPCs carry no cluster, and its log consistency check
// compares only indexes and terms, small integers two clusters share: a
// member of one cluster reached at an address a member of another once
// had (a reused host, a data directory copied or restarted with another
// -join) would otherwise take the other's entries into its log, or give
// it its votes.
//
// The hello (docs/format.md, "kvserver raft handshake"):
//
//	"SKVR" (4) | version 1 (1) | cluster ID (16; zeros: not known yet)
//
// The dialer sends its hello and reads the acceptor's before Dial
// returns; the acceptor reads and answers at its connection's first read
// or write, on raft's goroutine for that connection, so a slow peer does
// not hold up Accept. Both ends check, so each reports the mismatch.
//
// A hello checks nothing while either end knows no ID, and raft keeps its
// connections open: one opened then would go on carrying the other
// cluster's RPCs after this node learns its own. Such connections are
// kept (unchecked), and closed once this node learns its ID (learnt), so
// raft dials again and the new hello compares. A fresh joiner refuses
// every hello until its join is answered (hold): raft does not run yet,
// and an RPC read meanwhile would wait for it, and be served, however
// the connection ended.
type clusterStreamLayer struct {
	raft.StreamLayer
	// cluster is the ID this node hellos with, read at each handshake: a
	// new node learns its cluster's from its join's answer, or once it
	// applies it.
	cluster func() clusterID
	holding atomic.Bool

	mu        sync.Mutex
	unchecked map[net.Conn]struct{}
}

// hold refuses (true) or takes again (false) every peer's hello.
func (l *clusterStreamLayer) hold(on bool) { l.holding.Store(on) }

// learnt closes every connection whose hello could not compare IDs:
// called once this node knows its cluster's.
func (l *clusterStreamLayer) learnt() {
	l.mu.Lock()
	conns := l.unchecked
	l.unchecked = nil
	l.mu.Unlock()
	for c := range conns {
		c.Close()
	}
}

// track keeps c, whose hello went out naming ours, among the unchecked
// connections if ours was unknown. (One where only the peer's was is the
// peer's to close when it learns its own.) If this node learnt its ID
// since, c is refused instead: learnt may have run already.
func (l *clusterStreamLayer) track(c net.Conn, ours clusterID) error {
	if ours.known() {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.cluster().known() {
		return errLearntDuringHello
	}
	if l.unchecked == nil {
		l.unchecked = map[net.Conn]struct{}{}
	}
	l.unchecked[c] = struct{}{}
	return nil
}

var errLearntDuringHello = errors.New("this node learnt its cluster's ID during the hello; dial again")

// trackedConn forgets itself from the unchecked set when raft closes it.
type trackedConn struct {
	net.Conn
	layer *clusterStreamLayer
}

func (c *trackedConn) Close() error {
	c.layer.mu.Lock()
	delete(c.layer.unchecked, c.Conn)
	c.layer.mu.Unlock()
	return c.Conn.Close()
}

// errHolding refuses a hello while this node's fresh join is pending.
var errHolding = errors.New("this node takes no raft peer until its join is answered")

const (
	helloMagic   = "SKVR"
	helloVersion = 1
	helloLen     = len(helloMagic) + 1 + len(clusterID{})
)

func hello(id clusterID) []byte {
	b := append([]byte(helloMagic), helloVersion)
	return append(b, id[:]...)
}

// readHello reads a peer's hello and returns the cluster it names.
func readHello(r io.Reader) (clusterID, error) {
	var b [helloLen]byte
	if _, err := io.ReadFull(r, b[:]); err != nil {
		return clusterID{}, fmt.Errorf("read the peer's hello: %w", err)
	}
	if !bytes.Equal(b[:len(helloMagic)], []byte(helloMagic)) || b[len(helloMagic)] != helloVersion {
		return clusterID{}, fmt.Errorf("%w: the peer's hello %x is not a kvserver raft hello, version %d", ErrBadCommand, b[:len(helloMagic)+1], helloVersion)
	}
	var id clusterID
	copy(id[:], b[len(helloMagic)+1:])
	return id, nil
}

func (l *clusterStreamLayer) Dial(addr raft.ServerAddress, timeout time.Duration) (net.Conn, error) {
	c, err := l.StreamLayer.Dial(addr, timeout)
	if err != nil {
		return nil, err
	}
	ours := l.cluster()
	err = c.SetDeadline(time.Now().Add(timeout))
	if err == nil && l.holding.Load() {
		err = errHolding
	}
	if err == nil {
		_, err = c.Write(hello(ours))
	}
	var theirs clusterID
	if err == nil {
		theirs, err = readHello(c)
	}
	if err == nil {
		err = sameCluster(ours, theirs, fmt.Sprintf("the raft peer at %s", addr))
	}
	if err == nil {
		err = c.SetDeadline(time.Time{})
	}
	if err == nil {
		err = l.track(c, ours)
	}
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("kvserver: raft handshake with %s: %w", addr, err)
	}
	return &trackedConn{Conn: c, layer: l}, nil
}

func (l *clusterStreamLayer) Accept() (net.Conn, error) {
	c, err := l.StreamLayer.Accept()
	if err != nil {
		return nil, err
	}
	return &setupFirst{Conn: &trackedConn{Conn: c, layer: l}, setup: func() error { return l.answerHello(c) }}, nil
}

// answerHello reads the dialer's hello on c and answers it, within
// raftTimeout.
func (l *clusterStreamLayer) answerHello(c net.Conn) error {
	err := c.SetDeadline(time.Now().Add(raftTimeout))
	var theirs, ours clusterID
	if err == nil {
		theirs, err = readHello(c)
	}
	if err == nil {
		ours = l.cluster()
		// Answered whatever the outcome, so that the dialer can tell why.
		_, err = c.Write(hello(ours))
	}
	if err == nil && l.holding.Load() {
		err = errHolding
	}
	if err == nil {
		err = sameCluster(ours, theirs, "the dialing raft peer")
	}
	if err == nil {
		err = c.SetDeadline(time.Time{})
	}
	if err == nil {
		err = l.track(c, ours)
	}
	if err != nil {
		return fmt.Errorf("kvserver: raft handshake with %s: %w", c.RemoteAddr(), err)
	}
	return nil
}
