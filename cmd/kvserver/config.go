package main

import (
	"fmt"
	"io"
	"net"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
	"github.com/sievekv/sievekv/kv"
)

// Config is everything a node needs; main fills it from flags, tests
// directly. The security settings (token, TLS files, limits) are checked
// and loaded by loadSecurity and applied by newTransport, NewHandler and
// NewServer (see the package doc, "Security").
type Config struct {
	ID string // this server's raft ID, unique in the cluster
	// Dir is the data directory: raft/, snapshots/, state/.
	Dir string
	// RaftAddr is the host:port raft listens on and advertises; HTTPAddr
	// the host:port of this node's HTTP API, as peers reach it. Without a
	// host (":7001") both mean loopback (K1).
	RaftAddr string
	HTTPAddr string
	// HTTPAdvertise, when set, is the host:port other members and clients
	// reach the HTTP API at (the join request and every redirect to this
	// node carry it) while HTTPAddr is only where it listens: needed to
	// listen on every interface (0.0.0.0:8001), a host nobody can dial.
	HTTPAdvertise string
	// Join is the URL of any member to join through: without raft
	// state after the leader removed any member of this ID or raft
	// address (S8), with state to be added back if removed (S9).
	Join string

	// Token, when set, is the bearer token every HTTP request must carry
	// (K2); main reads it from -token-file. At least minTokenBytes long.
	Token string
	// TLSCertFile and TLSKeyFile are this node's certificate and key (PEM),
	// TLSCAFile the CA that signs every member's and client's certificate.
	// All three or none: with them the HTTP API is HTTPS, accepting client
	// certificates signed by the CA, and raft runs over mutual TLS (K4).
	TLSCertFile string
	TLSKeyFile  string
	TLSCAFile   string

	// Limits of the HTTP API; zero means the default (limits.go).
	Limits Limits

	// HeartbeatTimeout is raft's heartbeat and election timeout; the
	// leader lease is half of it. Default 1 s (raft's).
	HeartbeatTimeout time.Duration
	// SnapshotThreshold, SnapshotInterval and TrailingLogs are raft's: the
	// log entries between snapshots, how often that is checked, and the
	// entries kept after a snapshot for slow followers. Defaults raft's
	// (8192, 120 s, 10240).
	SnapshotThreshold uint64
	SnapshotInterval  time.Duration
	TrailingLogs      uint64

	// DB is the sievekv options of the state machine and the raft store.
	DB *kv.Options
	// LogOutput receives raft's log; LogLevel filters it (default "INFO").
	LogOutput io.Writer
	LogLevel  string

	// Transport, when set, replaces the TCP transport on RaftAddr (tests
	// use raft's in-memory transport). The node closes it on shutdown.
	Transport raft.Transport
}

// applyTimeout bounds how long a request waits for raft to take a command.
const applyTimeout = 10 * time.Second

// logger is a named hclog logger writing to LogOutput at LogLevel.
func (c *Config) logger(name string) hclog.Logger {
	out := c.LogOutput
	if out == nil {
		out = io.Discard
	}
	return hclog.New(&hclog.LoggerOptions{Name: name, Output: out, Level: hclog.LevelFromString(c.logLevel())})
}

func (c *Config) logLevel() string {
	if c.LogLevel == "" {
		return "INFO"
	}
	return c.LogLevel
}

// minHeartbeat is the shortest -heartbeat raft takes: the leader lease,
// half of it, must be at least 5 ms (raft.ValidateConfig).
const minHeartbeat = 10 * time.Millisecond

// advertisedHTTP is the HTTP address other members and clients are told
// to use: HTTPAdvertise, else HTTPAddr.
func (c *Config) advertisedHTTP() string {
	if c.HTTPAdvertise != "" {
		return c.HTTPAdvertise
	}
	return c.HTTPAddr
}

// checkStartable refuses settings the node could not run with, in the
// flags' terms: an advertised HTTP address that is not HOST:PORT or whose
// host is unspecified (0.0.0.0, ::), since followers send it to clients in
// every redirect and the join request registers it, and nobody can dial
// it; and a heartbeat raft refuses. It runs before the node listens or
// joins, so a bad setting fails at start, before any request.
func (c *Config) checkStartable() error {
	if !isHostPort(c.HTTPAddr) {
		return fmt.Errorf("kvserver: -http %q is not HOST:PORT with a port of 1-65535 (followers redirect clients to it)", c.HTTPAddr)
	}
	if c.HTTPAdvertise != "" && !isHostPort(c.HTTPAdvertise) {
		return fmt.Errorf("kvserver: -http-advertise %q is not HOST:PORT with a port of 1-65535 (followers redirect clients to it)", c.HTTPAdvertise)
	}
	if isUnspecifiedHost(c.advertisedHTTP()) {
		if c.HTTPAdvertise != "" {
			return fmt.Errorf("kvserver: -http-advertise %q has an unspecified host, which other members and clients cannot dial: give this node's own address", c.HTTPAdvertise)
		}
		return fmt.Errorf("kvserver: -http %q listens on every interface, but is also the address other members and clients are given, which they cannot dial: give -http-advertise HOST:PORT (this node's own address) or listen on that address", c.HTTPAddr)
	}
	if c.HeartbeatTimeout < 0 || c.HeartbeatTimeout > 0 && c.HeartbeatTimeout < minHeartbeat {
		return fmt.Errorf("kvserver: -heartbeat %v is below raft's minimum of %v", c.HeartbeatTimeout, minHeartbeat)
	}
	if err := raft.ValidateConfig(c.raftConfig()); err != nil {
		return fmt.Errorf("kvserver: raft settings: %w", err)
	}
	return nil
}

// isUnspecifiedHost reports whether addr's host is an unspecified IP
// (0.0.0.0, ::): every interface to listen on, no interface to dial.
func isUnspecifiedHost(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsUnspecified()
}

func (c *Config) raftConfig() *raft.Config {
	rc := raft.DefaultConfig()
	rc.LocalID = raft.ServerID(c.ID)
	if c.HeartbeatTimeout > 0 {
		rc.HeartbeatTimeout = c.HeartbeatTimeout
		rc.ElectionTimeout = c.HeartbeatTimeout
		rc.LeaderLeaseTimeout = c.HeartbeatTimeout / 2
	}
	if c.SnapshotThreshold > 0 {
		rc.SnapshotThreshold = c.SnapshotThreshold
	}
	if c.SnapshotInterval > 0 {
		rc.SnapshotInterval = c.SnapshotInterval
	}
	if c.TrailingLogs > 0 {
		rc.TrailingLogs = c.TrailingLogs
	}
	// The state machine is a persistent DB that knows its applied index
	// (S2): restoring the last snapshot at every start would only rewrite
	// what is already there.
	rc.NoSnapshotRestoreOnStart = true
	// A leader that removes itself stays up as a follower outside the
	// configuration, as a removed follower does, rather than shut raft
	// down: both then report the removal and refuse requests the same
	// way, and either can be added back (a join) without a restart (S11).
	rc.ShutdownOnRemove = false
	rc.Logger = c.logger("raft")
	return rc
}
