package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// TestProcessFreshJoinWaitEndsOnSIGTERM caught a node without raft state
// that SIGTERM killed outright while it waited for the leader to commit
// its removal (S8; a cluster without a majority up makes that wait
// unbounded): the signal handler was set only once the node had started,
// so the process died by the signal with its stores open and no word of
// why. It must stop within moments, exit 1 saying it stopped waiting,
// and leave a directory that, started again, sends a fresh join again.
func TestProcessFreshJoinWaitEndsOnSIGTERM(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs a process")
	}
	bin := buildKVServer(t)
	// A leader that cannot commit anything: every join is 503.
	var fresh atomic.Int64
	leader := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req joinRequest
		if body, _ := io.ReadAll(r.Body); json.Unmarshal(body, &req) == nil && req.Fresh {
			fresh.Add(1)
		}
		http.Error(w, ErrNoLeader.Error(), http.StatusServiceUnavailable)
	}))
	defer leader.Close()
	addrs := freeAddrs(t, 2)
	dir := filepath.Join(t.TempDir(), "n2")
	for run := 0; run < 2; run++ {
		before := fresh.Load()
		cmd := exec.Command(bin, "-id", "n2", "-dir", dir, "-raft", addrs[0], "-http", addrs[1], "-join", leader.URL, "-log-level", "ERROR")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		waitFor(t, "a fresh join", 10*time.Second, func() bool { return fresh.Load() > before })
		if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		var err error
		select {
		case err = <-exited:
		case <-time.After(5 * time.Second):
			cmd.Process.Kill()
			t.Fatalf("run %d: still waiting for the fresh join 5s after SIGTERM", run)
		}
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 1 || !strings.Contains(stderr.String(), "stopped waiting") {
			t.Fatalf("run %d: after SIGTERM in the fresh-join wait: %v, stderr:\n%s\nwant exit status 1 saying it stopped waiting", run, err, stderr.String())
		}
	}
}
