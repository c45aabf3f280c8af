package main

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/hashicorp/raft"
)

// raftTimeout is the network transport's I/O deadline for an RPC, and the
// longest a peer may take over its TLS handshake.
const raftTimeout = 10 * time.Second

// newTransport is raft's network transport over a stream layer on
// cfg.RaftAddr: mutual TLS when sec has certificates (K4), plain TCP
// otherwise (loopback only: K1); each connection opens with the cluster
// handshake (S13), cluster giving this node's ID, refusing every peer
// from the start if hold (a fresh joiner's). The handshake's layer is
// returned too (nil with cfg.Transport, which has none).
func newTransport(cfg *Config, sec *security, cluster func() clusterID, hold bool) (raft.Transport, *clusterStreamLayer, error) {
	if cfg.Transport != nil {
		return cfg.Transport, nil, nil
	}
	layer, err := listenTCP(cfg.RaftAddr)
	if err != nil {
		return nil, nil, err
	}
	var stream raft.StreamLayer = layer
	if sec.peerTLS != nil {
		stream = &tlsStreamLayer{tcpStreamLayer: layer, server: sec.peerTLS, client: sec.dialTLS}
	}
	handshake := &clusterStreamLayer{StreamLayer: stream, cluster: cluster}
	handshake.hold(hold) // before the transport accepts
	return raft.NewNetworkTransportWithConfig(&raft.NetworkTransportConfig{
		Stream:  handshake,
		MaxPool: 3,
		Timeout: raftTimeout,
		Logger:  cfg.logger("raft-net"),
	}), handshake, nil
}

// tcpStreamLayer carries raft's RPCs over plain TCP connections.
type tcpStreamLayer struct {
	net.Listener
	advertise net.Addr
}

func listenTCP(addr string) (*tcpStreamLayer, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("kvserver: raft listen %s: %w", addr, err)
	}
	adv, err := net.ResolveTCPAddr("tcp", addr)
	if err != nil || adv.IP == nil || adv.IP.IsUnspecified() {
		ln.Close()
		return nil, fmt.Errorf("kvserver: -raft %s must be an address peers can dial (not 0.0.0.0 or a bare port)", addr)
	}
	if adv.Port == 0 {
		adv = ln.Addr().(*net.TCPAddr)
	}
	return &tcpStreamLayer{Listener: ln, advertise: adv}, nil
}

func (t *tcpStreamLayer) Addr() net.Addr { return t.advertise }

func (t *tcpStreamLayer) Dial(addr raft.ServerAddress, timeout time.Duration) (net.Conn, error) {
	return net.DialTimeout("tcp", string(addr), timeout)
}

// tlsStreamLayer carries raft's RPCs over mutual TLS (K4): a peer must
// present a certificate the CA signed before raft reads a byte from it, and
// this node verifies the certificate of every peer it dials against the CA
// and the peer's raft host.
type tlsStreamLayer struct {
	*tcpStreamLayer
	server, client *tls.Config
}

func (t *tlsStreamLayer) Accept() (net.Conn, error) {
	c, err := t.tcpStreamLayer.Accept()
	if err != nil {
		return nil, err
	}
	// A peer that never finishes its handshake must not hold the
	// connection open.
	tc := tls.Server(c, t.server)
	return &setupFirst{Conn: tc, setup: func() error {
		ctx, cancel := context.WithTimeout(context.Background(), raftTimeout)
		defer cancel()
		return tc.HandshakeContext(ctx)
	}}, nil
}

func (t *tlsStreamLayer) Dial(addr raft.ServerAddress, timeout time.Duration) (net.Conn, error) {
	host, _, err := net.SplitHostPort(string(addr))
	if err != nil {
		return nil, fmt.Errorf("kvserver: raft peer address %q: %w", addr, err)
	}
	cfg := t.client.Clone()
	cfg.ServerName = host
	d := &tls.Dialer{NetDialer: &net.Dialer{Timeout: timeout}, Config: cfg}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	return d.DialContext(ctx, "tcp", string(addr))
}

// setupFirst runs setup once, before the connection's first read or
// write, on the goroutine that makes it (raft's own, for an accepted
// connection), so a slow peer cannot hold up Accept. raft sets no deadline
// on an accepted connection: setup bounds its own wait (raftTimeout). A
// failed setup closes the connection, and every read and write returns
// its error.
type setupFirst struct {
	net.Conn
	setup func() error
	once  sync.Once
	err   error
}

func (c *setupFirst) ensureSetup() error {
	c.once.Do(func() {
		if c.err = c.setup(); c.err != nil {
			c.Conn.Close()
		}
	})
	return c.err
}

func (c *setupFirst) Read(p []byte) (int, error) {
	if err := c.ensureSetup(); err != nil {
		return 0, err
	}
	return c.Conn.Read(p)
}

func (c *setupFirst) Write(p []byte) (int, error) {
	if err := c.ensureSetup(); err != nil {
		return 0, err
	}
	return c.Conn.Write(p)
}
