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
// otherwise (loopback only: K1).
func newTransport(cfg *Config, sec *security) (raft.Transport, error) {
	if cfg.Transport != nil {
		return cfg.Transport, nil
	}
	layer, err := listenTCP(cfg.RaftAddr)
	if err != nil {
		return nil, err
	}
	var stream raft.StreamLayer = layer
	if sec.peerTLS != nil {
		stream = &tlsStreamLayer{tcpStreamLayer: layer, server: sec.peerTLS, client: sec.dialTLS}
	}
	return raft.NewNetworkTransportWithConfig(&raft.NetworkTransportConfig{
		Stream:  stream,
		MaxPool: 3,
		Timeout: raftTimeout,
		Logger:  cfg.logger("raft-net"),
	}), nil
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
	// The handshake runs on the connection's own goroutine (raft's, at
	// its first read), so a slow peer cannot hold up Accept.
	return &handshakeFirst{Conn: tls.Server(c, t.server)}, nil
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

// handshakeFirst completes the server handshake, within raftTimeout,
// before the first read or write: raft sets no deadline on an accepted
// connection, and a peer that never finishes its handshake must not hold
// one open.
type handshakeFirst struct {
	*tls.Conn
	once sync.Once
	err  error
}

func (c *handshakeFirst) handshake() error {
	c.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), raftTimeout)
		defer cancel()
		if c.err = c.Conn.HandshakeContext(ctx); c.err != nil {
			c.Conn.Close()
		}
	})
	return c.err
}

func (c *handshakeFirst) Read(p []byte) (int, error) {
	if err := c.handshake(); err != nil {
		return 0, err
	}
	return c.Conn.Read(p)
}

func (c *handshakeFirst) Write(p []byte) (int, error) {
	if err := c.handshake(); err != nil {
		return 0, err
	}
	return c.Conn.Write(p)
}
