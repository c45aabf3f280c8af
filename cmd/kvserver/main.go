package main

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

func main() {
	var cfg Config
	flag.StringVar(&cfg.ID, "id", "", "this server's ID, unique in the cluster")
	flag.StringVar(&cfg.Dir, "dir", "", "data directory (created if missing)")
	flag.StringVar(&cfg.RaftAddr, "raft", "", "HOST:PORT for raft traffic, as peers dial it (no HOST: loopback)")
	flag.StringVar(&cfg.HTTPAddr, "http", "", "HOST:PORT of the HTTP API, as clients and peers reach it (no HOST: loopback; 0.0.0.0 or :: needs -http-advertise)")
	flag.StringVar(&cfg.HTTPAdvertise, "http-advertise", "", "HOST:PORT clients and peers reach the HTTP API at, when -http only says where to listen (e.g. 0.0.0.0:8001); default -http")
	flag.StringVar(&cfg.Join, "join", "", "URL of any member (http[s]://HOST:PORT) to join through: with an empty DIR, raft starts once the leader removed any member of this -id or -raft; with state, a member removed while down is added back (refused if DIR holds a cluster of this node alone)")
	tokenFile := flag.String("token-file", "", "file holding the bearer token every HTTP request (and join) must carry")
	flag.StringVar(&cfg.TLSCertFile, "tls-cert", "", "this node's certificate (PEM): HTTPS, and mutual TLS for raft")
	flag.StringVar(&cfg.TLSKeyFile, "tls-key", "", "this node's private key (PEM)")
	flag.StringVar(&cfg.TLSCAFile, "tls-ca", "", "the CA certificate (PEM) that signs every member's and client's certificate")
	flag.IntVar(&cfg.Limits.MaxKeyBytes, "max-key-bytes", defaultMaxKeyBytes, "longest key taken (413 beyond)")
	flag.IntVar(&cfg.Limits.MaxValueBytes, "max-value-bytes", defaultMaxValueBytes, "largest value taken (413 beyond); with -max-key-bytes at most 16 MiB - 64 KiB")
	flag.IntVar(&cfg.Limits.MaxRequests, "max-requests", defaultMaxRequests, "HTTP requests served at once (503 beyond)")
	flag.DurationVar(&cfg.Limits.ReadHeaderTimeout, "read-header-timeout", defaultReadHeaderTimeout, "time a client has to send its request headers")
	flag.DurationVar(&cfg.Limits.IdleTimeout, "idle-timeout", defaultIdleTimeout, "keep-alive connections idle longer are closed")
	genCerts := flag.String("gen-certs", "", "write a CA (kept if DIR has one) and certificates for the NAME=HOST[,HOST...] arguments into DIR, then exit")
	flag.DurationVar(&cfg.HeartbeatTimeout, "heartbeat", 0, "raft heartbeat and election timeout (default raft's 1s)")
	flag.Uint64Var(&cfg.SnapshotThreshold, "snapshot-threshold", 0, "log entries between snapshots (default raft's 8192)")
	flag.DurationVar(&cfg.SnapshotInterval, "snapshot-interval", 0, "how often the snapshot threshold is checked (default raft's 2m)")
	flag.Uint64Var(&cfg.TrailingLogs, "trailing-logs", 0, "log entries kept after a snapshot (default raft's 10240)")
	flag.StringVar(&cfg.LogLevel, "log-level", "INFO", "raft log level: DEBUG, INFO, WARN, ERROR")
	flag.Parse()
	if *genCerts != "" {
		if err := genCertsCommand(*genCerts, flag.Args(), os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		return
	}
	if flag.NArg() != 0 {
		fmt.Fprintf(os.Stderr, "kvserver: unexpected arguments %q\n", flag.Args())
		os.Exit(2)
	}
	if *tokenFile != "" {
		token, err := readToken(*tokenFile)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		cfg.Token = token
	}
	if err := run(cfg); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// run serves until SIGTERM or SIGINT, then shuts down cleanly: the HTTP
// server stops taking requests, raft shuts down, the stores close.
func run(cfg Config) error {
	cfg.normalizeAddrs()
	sec, err := loadSecurity(&cfg)
	if err != nil {
		return err
	}
	// Before the listener: a node that could not start must not take
	// requests first (startNode checks again, for StartNode's callers).
	if err := cfg.checkStartable(); err != nil {
		return err
	}
	ln, err := listenHTTP(cfg.HTTPAddr, sec)
	if err != nil {
		return err
	}
	// Served from the start: a node without state waits in startNode
	// until the leader has removed its ID (S8), and the leader's probe of
	// whether a member of that ID is alive (memberAlive) must be answered
	// "starting", not left to time out.
	api := &startingHandler{starting: requireAuth(sec, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "kvserver: starting (a node without raft state joins once the leader has removed any member of its ID)", http.StatusServiceUnavailable)
	}))}
	srv := newServer(&cfg, api)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	// Caught from before startNode: a fresh joiner waits there for as long
	// as the leader cannot commit its removal (S8), and a signal must end
	// that wait with the directory closed, not kill the process in it.
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	startCtx, stopStart := context.WithCancel(context.Background())
	defer stopStart()
	started, watched := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(watched)
		select {
		case s := <-sig:
			fmt.Fprintf(os.Stderr, "kvserver: %s: %v while starting, stopping\n", cfg.ID, s)
			stopStart()
		case <-started:
		}
	}()
	node, err := startNode(startCtx, cfg, sec)
	close(started)
	<-watched
	if err != nil {
		srv.Close()
		return err
	}
	if startCtx.Err() != nil {
		// The signal came as startNode returned: the node is up, and stops.
		srv.Close()
		return node.Shutdown()
	}
	h := NewHandler(node)
	api.h.Store(&h)
	fmt.Fprintf(os.Stderr, "kvserver: %s serving %s on %s, raft on %s\n", cfg.ID, sec.scheme(), ln.Addr(), cfg.RaftAddr)

	select {
	case s := <-sig:
		fmt.Fprintf(os.Stderr, "kvserver: %s: %v, shutting down\n", cfg.ID, s)
	case err = <-served:
	case err = <-node.Failed():
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	srv.Shutdown(ctx)
	if serr := node.Shutdown(); err == nil || errors.Is(err, http.ErrServerClosed) {
		err = serr
	}
	return err
}

// startingHandler is starting until the node's API is stored in h.
type startingHandler struct {
	h        atomic.Pointer[http.Handler]
	starting http.Handler
}

func (s *startingHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if h := s.h.Load(); h != nil {
		(*h).ServeHTTP(w, r)
		return
	}
	s.starting.ServeHTTP(w, r)
}

// listenHTTP listens for the HTTP API on addr, over TLS when sec has
// certificates.
func listenHTTP(addr string, sec *security) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("kvserver: http listen %s: %w", addr, err)
	}
	if sec.httpTLS != nil {
		ln = tls.NewListener(ln, sec.httpTLS)
	}
	return ln, nil
}

// readToken is the bearer token in path: its content without surrounding
// white space.
func readToken(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("kvserver: -token-file: %w", err)
	}
	token := strings.TrimSpace(string(b))
	if token == "" {
		return "", fmt.Errorf("%w: -token-file %s is empty", ErrInsecure, path)
	}
	return token, nil
}
