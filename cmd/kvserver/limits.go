package main

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"

	"github.com/sievekv/sievekv/kv"
)

// Limits bound what one HTTP request may cost a node (K3). A zero field
// takes its default.
type Limits struct {
	// MaxKeyBytes and MaxValueBytes bound a key and a PUT body. A value is
	// a raft entry, held in memory by every member on its way to the log,
	// so it must stay small: the 1 MiB default is etcd's order of
	// magnitude (1.5 MiB per request). Beyond either the answer is 413.
	// Together they may not exceed maxCommandBytes (16 MiB - 64 KiB):
	// StartNode refuses larger ones with ErrLimits.
	MaxKeyBytes   int
	MaxValueBytes int
	// MaxRequests bounds the requests served at once; one more is answered
	// 503 with Retry-After at once rather than queued, so a flood costs a
	// node at most MaxRequests values in memory.
	MaxRequests int
	// ReadHeaderTimeout cuts off a client that is slow to send its headers
	// (one byte a second would otherwise hold a connection for ever);
	// ReadTimeout bounds reading a whole request with its body.
	ReadHeaderTimeout time.Duration
	ReadTimeout       time.Duration
	// WriteTimeout bounds a request from the end of its headers to the end
	// of its answer. Snapshots stream over the raft port, not HTTP, so the
	// longest answer is a join: up to three raft changes of applyTimeout.
	WriteTimeout time.Duration
	// IdleTimeout closes a keep-alive connection with no request.
	IdleTimeout time.Duration
}

// Defaults of Limits.
const (
	defaultMaxKeyBytes       = 4 << 10
	defaultMaxValueBytes     = 1 << 20
	defaultMaxRequests       = 128
	defaultReadHeaderTimeout = 5 * time.Second
	defaultReadTimeout       = 30 * time.Second
	defaultWriteTimeout      = 3*applyTimeout + 15*time.Second
	defaultIdleTimeout       = 60 * time.Second
)

// withDefaults is l with every zero field set to its default.
func (l Limits) withDefaults() Limits {
	set := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	setD := func(v *time.Duration, d time.Duration) {
		if *v <= 0 {
			*v = d
		}
	}
	set(&l.MaxKeyBytes, defaultMaxKeyBytes)
	set(&l.MaxValueBytes, defaultMaxValueBytes)
	set(&l.MaxRequests, defaultMaxRequests)
	setD(&l.ReadHeaderTimeout, defaultReadHeaderTimeout)
	setD(&l.ReadTimeout, defaultReadTimeout)
	setD(&l.WriteTimeout, defaultWriteTimeout)
	setD(&l.IdleTimeout, defaultIdleTimeout)
	return l
}

// ErrLimits is wrapped by the refusal of Limits no node can honour.
var ErrLimits = errors.New("kvserver: limits out of range")

// raftBatchBytes is the most one raftstore StoreLogs call takes: it is one
// kv batch, which kv refuses past 1 GiB (with a margin for each entry's
// encoding, as for kv's own entry bound).
const raftBatchBytes = 1<<30 - 4<<20

// maxCommandBytes bounds MaxKeyBytes + MaxValueBytes. raft hands its log
// store up to MaxAppendEntries commands in one StoreLogs, a leader's batch
// of proposals or a follower's AppendEntries, so a larger command lets a
// burst of writes fail the leader's StoreLogs (it steps down) and a
// follower's on every retry of the same entries (it never catches up).
func maxCommandBytes() int {
	return raftBatchBytes / raft.DefaultConfig().MaxAppendEntries
}

// maxStateKeyBytes is the longest key a command may carry: the state DB
// stores it behind a one-byte prefix (fsm.go), under kv's key limit.
const maxStateKeyBytes = kv.MaxKeySize - 1

// check refuses limits a node cannot honour; l has its defaults set.
func (l Limits) check() error {
	if l.MaxKeyBytes > maxStateKeyBytes {
		return fmt.Errorf("%w: -max-key-bytes %d is past the %d bytes the state DB takes in a key", ErrLimits, l.MaxKeyBytes, maxStateKeyBytes)
	}
	if max := maxCommandBytes(); l.MaxKeyBytes+l.MaxValueBytes > max {
		return fmt.Errorf("%w: -max-key-bytes %d and -max-value-bytes %d make commands of more than %d bytes, and raft stores up to %d of them in one batch of at most %d",
			ErrLimits, l.MaxKeyBytes, l.MaxValueBytes, max, raft.DefaultConfig().MaxAppendEntries, raftBatchBytes)
	}
	return nil
}

// maxHeaderBytes bounds a request's line and headers: room for a key of
// MaxKeyBytes escaped three bytes per byte, and ordinary headers.
func (l Limits) maxHeaderBytes() int { return 3*l.MaxKeyBytes + 16<<10 }

// limitRequests answers 503 to a request beyond max in flight (K3).
func limitRequests(max int, next http.Handler) http.Handler {
	slots := make(chan struct{}, max)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case slots <- struct{}{}:
			defer func() { <-slots }()
			next.ServeHTTP(w, r)
		default:
			w.Header().Set("Retry-After", "1")
			http.Error(w, fmt.Sprintf("kvserver: %d requests in flight, the most this node serves at once; retry", max), http.StatusServiceUnavailable)
		}
	})
}

// NewServer is the HTTP server of n's API with the limits of its Config
// (K3) and, when the node has TLS files, its HTTPS settings; serve it on a
// listener from listenHTTP.
func NewServer(n *Node) *http.Server {
	return newServer(&n.cfg, NewHandler(n))
}

// newServer is NewServer's http.Server serving h.
func newServer(cfg *Config, h http.Handler) *http.Server {
	l := cfg.Limits.withDefaults()
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: l.ReadHeaderTimeout,
		ReadTimeout:       l.ReadTimeout,
		WriteTimeout:      l.WriteTimeout,
		IdleTimeout:       l.IdleTimeout,
		MaxHeaderBytes:    l.maxHeaderBytes(),
		// TLS handshake failures and the like, into the node's log.
		ErrorLog: cfg.logger("http").StandardLogger(&hclog.StandardLoggerOptions{InferLevels: true}),
	}
}
