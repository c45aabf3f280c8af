package main

import (
	"errors"
	"io"
	"net"
	"testing"
	"time"

	"github.com/hashicorp/raft"
)

// handshakePair listens with a cluster handshake for accepting and dials
// it with one for dialing, and returns what the accepted end read after
// the handshake (when the dial succeeded) and the dial's error.
func handshakePair(t *testing.T, accepting, dialing clusterID) (read string, dialErr error) {
	t.Helper()
	layer, err := listenTCP("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer layer.Close()
	acceptor := &clusterStreamLayer{StreamLayer: layer, cluster: func() clusterID { return accepting }}
	got := make(chan string, 1)
	go func() {
		c, err := acceptor.Accept()
		if err != nil {
			got <- err.Error()
			return
		}
		defer c.Close()
		b, err := io.ReadAll(c)
		if err != nil {
			got <- "error: " + err.Error()
			return
		}
		got <- string(b)
	}()
	dialer := &clusterStreamLayer{StreamLayer: layer, cluster: func() clusterID { return dialing }}
	c, err := dialer.Dial(raft.ServerAddress(layer.Addr().String()), 5*time.Second)
	if err != nil {
		<-got
		return "", err
	}
	c.Write([]byte("rpc"))
	c.Close()
	return <-got, nil
}

func TestClusterHandshake(t *testing.T) {
	a, b := newClusterID(), newClusterID()
	for _, tc := range []struct {
		name              string
		accepting, dialed clusterID
		ok                bool
	}{
		{"same cluster", a, a, true},
		{"acceptor new", clusterID{}, a, true},
		{"dialer new", a, clusterID{}, true},
		{"both new", clusterID{}, clusterID{}, true},
		{"other clusters", a, b, false},
	} {
		read, err := handshakePair(t, tc.accepting, tc.dialed)
		switch {
		case tc.ok && (err != nil || read != "rpc"):
			t.Errorf("%s: dial %v, acceptor read %q; want the RPC through", tc.name, err, read)
		case !tc.ok && !errors.Is(err, ErrClusterMismatch):
			t.Errorf("%s: dial %v; want ErrClusterMismatch", tc.name, err)
		}
	}
}

// TestClusterHandshakeRefusesNonHello: a peer that sends anything but a
// hello (an older kvserver, a port scanner) is closed with ErrBadCommand
// before raft reads a byte; one that sends nothing is given up on.
func TestClusterHandshakeRefusesNonHello(t *testing.T) {
	layer, err := listenTCP("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer layer.Close()
	acceptor := &clusterStreamLayer{StreamLayer: layer, cluster: newClusterID}
	raw, err := net.Dial("tcp", layer.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	raw.Write([]byte("\x00not a hello but a raft RPC of an older kvserver"))
	c, err := acceptor.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Read(make([]byte, 1)); !errors.Is(err, ErrBadCommand) {
		t.Fatalf("read after a non-hello: %v; want ErrBadCommand", err)
	}
}
