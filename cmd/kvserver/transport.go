package main

import (
	"fmt"
	"net"
	"time"

	"github.com/hashicorp/raft"
)

// newTransport is raft's network transport over tcpStreamLayer: the one
// place a TLS stream layer would be chosen instead.
func newTransport(cfg *Config) (raft.Transport, error) {
	if cfg.Transport != nil {
		return cfg.Transport, nil
	}
	layer, err := listenTCP(cfg.RaftAddr)
	if err != nil {
		return nil, err
	}
	return raft.NewNetworkTransportWithConfig(&raft.NetworkTransportConfig{
		Stream:  layer,
		MaxPool: 3,
		Timeout: 10 * time.Second,
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
