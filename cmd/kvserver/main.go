package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"
)

func main() {
	var cfg Config
	flag.StringVar(&cfg.ID, "id", "", "this server's ID, unique in the cluster")
	flag.StringVar(&cfg.Dir, "dir", "", "data directory (created if missing)")
	flag.StringVar(&cfg.RaftAddr, "raft", "", "HOST:PORT for raft traffic, as peers dial it")
	flag.StringVar(&cfg.HTTPAddr, "http", "", "HOST:PORT of the HTTP API, as clients and peers reach it")
	flag.StringVar(&cfg.Join, "join", "", "URL of any member (http://HOST:PORT) to join through; ignored once DIR has state")
	flag.DurationVar(&cfg.HeartbeatTimeout, "heartbeat", 0, "raft heartbeat and election timeout (default raft's 1s)")
	flag.Uint64Var(&cfg.SnapshotThreshold, "snapshot-threshold", 0, "log entries between snapshots (default raft's 8192)")
	flag.DurationVar(&cfg.SnapshotInterval, "snapshot-interval", 0, "how often the snapshot threshold is checked (default raft's 2m)")
	flag.Uint64Var(&cfg.TrailingLogs, "trailing-logs", 0, "log entries kept after a snapshot (default raft's 10240)")
	flag.StringVar(&cfg.LogLevel, "log-level", "INFO", "raft log level: DEBUG, INFO, WARN, ERROR")
	flag.Parse()
	if flag.NArg() != 0 {
		fmt.Fprintf(os.Stderr, "kvserver: unexpected arguments %q\n", flag.Args())
		os.Exit(2)
	}
	if err := run(cfg); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// run serves until SIGTERM or SIGINT, then shuts down cleanly: the HTTP
// server stops taking requests, raft shuts down, the stores close.
func run(cfg Config) error {
	ln, err := net.Listen("tcp", cfg.HTTPAddr)
	if err != nil {
		return fmt.Errorf("kvserver: http listen %s: %w", cfg.HTTPAddr, err)
	}
	node, err := StartNode(cfg)
	if err != nil {
		ln.Close()
		return err
	}
	srv := &http.Server{Handler: NewHandler(node), ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	fmt.Fprintf(os.Stderr, "kvserver: %s serving http on %s, raft on %s\n", cfg.ID, ln.Addr(), cfg.RaftAddr)

	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	select {
	case s := <-sig:
		fmt.Fprintf(os.Stderr, "kvserver: %s: %v, shutting down\n", cfg.ID, s)
	case err = <-served:
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	srv.Shutdown(ctx)
	if serr := node.Shutdown(); err == nil || errors.Is(err, http.ErrServerClosed) {
		err = serr
	}
	return err
}
