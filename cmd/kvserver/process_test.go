package main

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"
)

// proc is one kvserver process of the process tests.
type proc struct {
	id, dir, raft, http, join string
	extra                     []string // more flags: security settings
	scheme                    string   // of its URL; "" is http
	client                    *http.Client
	cmd                       *exec.Cmd
	exited                    chan error
}

func (p *proc) start(t *testing.T, bin string) {
	t.Helper()
	args := []string{"-id", p.id, "-dir", p.dir, "-raft", p.raft, "-http", p.http,
		"-heartbeat", "200ms", "-snapshot-threshold", "64", "-snapshot-interval", "100ms",
		"-trailing-logs", "32", "-log-level", "ERROR"}
	if p.join != "" {
		args = append(args, "-join", p.join)
	}
	args = append(args, p.extra...)
	p.cmd = exec.Command(bin, args...)
	p.cmd.Stderr = os.Stderr
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p.exited = make(chan error, 1)
	go func() { p.exited <- p.cmd.Wait() }()
}

func (p *proc) url() string {
	if p.scheme != "" {
		return p.scheme + "://" + p.http
	}
	return "http://" + p.http
}

func (p *proc) httpClient() *http.Client {
	if p.client != nil {
		return p.client
	}
	return quickClient
}

func (p *proc) status() (statusReply, bool) {
	var s statusReply
	resp, err := p.httpClient().Get(p.url() + "/status")
	if err != nil {
		return s, false
	}
	defer resp.Body.Close()
	return s, json.NewDecoder(resp.Body).Decode(&s) == nil
}

var quickClient = &http.Client{Timeout: 2 * time.Second}

// freeAddrs reserves n loopback ports by listening and closing; a port
// taken again in between fails the process start, not silently.
func freeAddrs(t *testing.T, n int) []string {
	var out []string
	for i := 0; i < n; i++ {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, ln.Addr().String())
		defer ln.Close()
	}
	return out
}

// threeProcs describes a three-member cluster on loopback, each member in
// a directory of its own under one temporary root: n1 bootstraps it, n2
// and n3 join through n1. Callers adjust the members before starting them.
func threeProcs(t *testing.T) []*proc {
	addrs := freeAddrs(t, 6)
	root := t.TempDir()
	procs := make([]*proc, 3)
	for i := range procs {
		id := fmt.Sprintf("n%d", i+1)
		procs[i] = &proc{id: id, dir: filepath.Join(root, id), raft: addrs[2*i], http: addrs[2*i+1]}
		if i > 0 {
			procs[i].join = procs[0].url()
		}
	}
	return procs
}

// startThreeProcs builds kvserver and starts threeProcs' cluster, killed
// when the test ends; it skips under -short.
func startThreeProcs(t *testing.T) (bin string, procs []*proc) {
	if testing.Short() {
		t.Skip("builds and runs three processes")
	}
	bin = buildKVServer(t)
	procs = threeProcs(t)
	t.Cleanup(func() { killAll(procs) })
	startCluster(t, bin, procs)
	return bin, procs
}

// TestProcessesSurviveLeaderKill builds kvserver, runs three processes on
// loopback with a -token-file, writes through them, SIGKILLs the leader mid-stream, and checks
// that every acknowledged write is readable, that the restarted node
// catches up, and that SIGTERM stops every node cleanly.
func TestProcessesSurviveLeaderKill(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs three processes")
	}
	bin := buildKVServer(t)
	tokenFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenFile, []byte(testToken+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	client := &http.Client{Timeout: 2 * time.Second, Transport: bearer{token: testToken, next: http.DefaultTransport}}
	procs := threeProcs(t)
	for i, p := range procs {
		p.extra, p.client = []string{"-token-file", tokenFile}, client
		if i > 0 {
			p.join = procs[i-1].url() // any member forwards to the leader
		}
	}
	defer killAll(procs)
	startCluster(t, bin, procs)

	w := startAckedWriters(client, []string{procs[0].url(), procs[1].url(), procs[2].url()}, 4)
	waitFor(t, "writes before the kill", 10*time.Second, func() bool { return w.count() >= 300 })

	leader := -1
	for i, p := range procs {
		if s, ok := p.status(); ok && s.State == "Leader" {
			leader = i
		}
	}
	if leader < 0 {
		t.Fatal("no leader to kill")
	}
	killed := procs[leader]
	killed.cmd.Process.Signal(syscall.SIGKILL)
	<-killed.exited
	atKill := w.count()
	waitFor(t, "writes after the kill", 15*time.Second, func() bool { return w.count() >= atKill+300 })
	acked := w.halt()

	killed.start(t, bin) // it has state: its -join finds it a member already
	var live *proc
	for i, p := range procs {
		if i != leader {
			live = p
		}
	}
	waitFor(t, "the restarted node to catch up", 15*time.Second, func() bool {
		ls, ok1 := live.status()
		ks, ok2 := killed.status()
		return ok1 && ok2 && ls.CommitIndex > 0 && ks.AppliedIndex >= ls.CommitIndex && ks.LeaderHTTP != ""
	})

	// The live nodes compacted their logs far past the killed node's end,
	// so it caught up by a snapshot streamed over TCP and restored into a
	// new state generation.
	if cur, err := os.ReadFile(filepath.Join(killed.dir, "state", currentFile)); err != nil || string(cur) == "1\n" {
		t.Errorf("restarted node's state generation: %q, %v; want a restored one", cur, err)
	}

	client = &http.Client{Timeout: 5 * time.Second, Transport: client.Transport}
	read := func(p *proc, key string, stale bool) (string, error) {
		url := p.url() + "/kv/" + key
		if stale {
			url += "?stale=true"
		}
		code, body, err := doRetrying(client, func() *http.Request {
			req, _ := http.NewRequest(http.MethodGet, url, nil)
			return req
		})
		if err == nil && code != http.StatusOK {
			err = fmt.Errorf("status %d: %s", code, body)
		}
		return body, err
	}
	n := 0
	for key, want := range acked {
		n++
		if got, err := read(killed, key, true); err != nil || got != want {
			t.Errorf("stale read of acknowledged %s on the restarted node: %q, %v", key, got, err)
		}
		if n%10 == 0 { // linearizable reads through a follower's redirect
			if got, err := read(procs[n%3], key, false); err != nil || got != want {
				t.Errorf("read of acknowledged %s: %q, %v", key, got, err)
			}
		}
		if t.Failed() {
			break
		}
	}
	t.Logf("%d writes acknowledged (%d before the kill), all readable", n, atKill)

	terminateAll(t, procs)
}

// startCluster starts procs[0] and waits until it leads, then the others,
// and waits until every one knows them all and the leader.
func startCluster(t *testing.T, bin string, procs []*proc) {
	t.Helper()
	procs[0].startLeader(t, bin)
	for _, p := range procs[1:] {
		p.start(t, bin)
	}
	waitFor(t, "every member to know the others and the leader", 15*time.Second, func() bool {
		for _, p := range procs {
			s, ok := p.status()
			if !ok || len(s.Members) != len(procs) || s.LeaderHTTP == "" {
				return false
			}
		}
		return true
	})
}

// startLeader starts p, the first node, and waits until it leads.
func (p *proc) startLeader(t *testing.T, bin string) {
	t.Helper()
	p.start(t, bin)
	waitFor(t, p.id+" to lead", 10*time.Second, func() bool {
		s, ok := p.status()
		return ok && s.State == "Leader" && s.LeaderHTTP != ""
	})
}

// killAll kills the processes still running (a failed test's).
func killAll(procs []*proc) {
	for _, p := range procs {
		if p.cmd != nil && p.cmd.ProcessState == nil {
			p.cmd.Process.Kill()
		}
	}
}

// terminateAll sends every process SIGTERM and checks each exits cleanly.
func terminateAll(t *testing.T, procs []*proc) {
	t.Helper()
	for _, p := range procs {
		p.cmd.Process.Signal(syscall.SIGTERM)
	}
	for _, p := range procs {
		select {
		case err := <-p.exited:
			if err != nil {
				t.Errorf("%s after SIGTERM: %v", p.id, err)
			}
		case <-time.After(10 * time.Second):
			t.Errorf("%s did not stop within 10s of SIGTERM", p.id)
		}
	}
}

var built struct {
	once sync.Once
	dir  string
	bin  string
	err  error
}

// buildKVServer builds the kvserver binary once for all the process tests
// of this run; TestMain removes it.
func buildKVServer(t *testing.T) string {
	t.Helper()
	built.once.Do(func() {
		if built.dir, built.err = os.MkdirTemp("", "kvserver-bin"); built.err != nil {
			return
		}
		built.bin = filepath.Join(built.dir, "kvserver")
		if out, err := exec.Command("go", "build", "-o", built.bin, ".").CombinedOutput(); err != nil {
			built.err = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if built.err != nil {
		t.Fatal(built.err)
	}
	return built.bin
}

func TestMain(m *testing.M) {
	code := m.Run()
	if built.dir != "" {
		os.RemoveAll(built.dir)
	}
	os.Exit(code)
}
