package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/sievekv/sievekv/internal/benchreport"
)

// cluster is three kvserver processes on loopback, as the README starts
// them: n1 bootstraps, n2 and n3 join through it.
type cluster struct {
	bin, root string
	log       func(string, ...any)
	procs     [3]*exec.Cmd
	exited    [3]chan struct{}
	http      [3]string
	raft      [3]string
	client    *http.Client
}

func freePort() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

func startCluster(bin, root string, log func(string, ...any)) (*cluster, error) {
	c := &cluster{bin: bin, root: root, log: log,
		// Follows the 307s followers send for writes; a failed attempt
		// is retried by the caller on another member.
		client: &http.Client{Timeout: 10 * time.Second}}
	for i := range c.http {
		var err error
		if c.http[i], err = freePort(); err != nil {
			return nil, err
		}
		if c.raft[i], err = freePort(); err != nil {
			return nil, err
		}
	}
	for i := range c.procs {
		if err := c.start(i); err != nil {
			c.stopAll()
			return nil, err
		}
		if _, err := c.settled(i + 1); err != nil {
			c.stopAll()
			return nil, err
		}
	}
	return c, nil
}

// start (re)starts node i from its directory: n2 and n3 first join
// through n1, and a restarted node through the next member.
func (c *cluster) start(i int) error {
	dir := filepath.Join(c.root, fmt.Sprintf("n%d", i+1))
	args := []string{"-id", fmt.Sprintf("n%d", i+1), "-dir", dir, "-raft", c.raft[i], "-http", c.http[i], "-log-level", "ERROR"}
	if _, err := os.Stat(dir); err == nil {
		args = append(args, "-join", "http://"+c.http[(i+1)%3])
	} else if i > 0 {
		args = append(args, "-join", "http://"+c.http[0])
	}
	cmd := exec.Command(c.bin, args...)
	cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start kvserver n%d: %w", i+1, err)
	}
	c.procs[i], c.exited[i] = cmd, make(chan struct{})
	// An interrupt of clusterbench kills the member rather than leave it
	// running on its ports and its removed directory.
	cancel := benchreport.AtInterrupt(func() { cmd.Process.Kill() })
	go func(done chan struct{}) { cmd.Wait(); cancel(); close(done) }(c.exited[i])
	return nil
}

// status is the part of GET /status the benchmark reads.
type status struct {
	State   string `json:"state"`
	Members []struct {
		Suffrage string `json:"suffrage"`
	} `json:"members"`
}

// settled waits until a member leads a configuration of voters voters that
// every running member reports, and returns the leader.
func (c *cluster) settled(voters int) (int, error) {
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		leader := -1
		for i, addr := range c.http {
			if c.procs[i] == nil {
				continue
			}
			var s status
			if !c.getJSON("http://"+addr+"/status", &s) {
				leader = -2
				break
			}
			n := 0
			for _, m := range s.Members {
				if m.Suffrage == "Voter" {
					n++
				}
			}
			if n != voters {
				leader = -2
				break
			}
			if s.State == "Leader" && leader == -1 {
				leader = i
			}
		}
		if leader >= 0 {
			return leader, nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return -1, fmt.Errorf("the cluster did not settle with %d voters within 30 s", voters)
}

func (c *cluster) getJSON(url string, v any) bool {
	resp, err := c.client.Get(url)
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	return resp.StatusCode == http.StatusOK && json.NewDecoder(resp.Body).Decode(v) == nil
}

// stop signals node i and waits for it to exit.
func (c *cluster) stop(i int, sig syscall.Signal) {
	if c.procs[i] == nil {
		return
	}
	c.procs[i].Process.Signal(sig)
	<-c.exited[i]
	c.procs[i] = nil
}

func (c *cluster) stopAll() {
	for i := range c.procs {
		c.stop(i, syscall.SIGTERM)
	}
}

// put writes key through member first, moving on to the next member after
// a failure (a member down, or without a leader: 503), until one answers
// 204. It returns how long the write took and how many attempts failed.
func (c *cluster) put(first int, key string, value []byte, deadline time.Time) (time.Duration, int, error) {
	start := time.Now()
	failed := 0
	for m := first; ; m = (m + 1) % 3 {
		req, err := http.NewRequest(http.MethodPut, "http://"+c.http[m]+"/kv/"+key, bytes.NewReader(value))
		if err != nil {
			return 0, failed, err
		}
		resp, err := c.client.Do(req)
		if err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusNoContent {
				return time.Since(start), failed, nil
			}
		}
		failed++
		if time.Now().After(deadline) {
			return 0, failed, fmt.Errorf("write of %s not acknowledged by any member", key)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// writeResult is a stream of writes through the cluster.
type writeResult struct {
	Writes      int     `json:"writes"`
	Clients     int     `json:"clients"`
	OpsPerSec   float64 `json:"ops_per_sec"`
	P50Ms       float64 `json:"p50_ms"`
	P99Ms       float64 `json:"p99_ms"`
	MaxMs       float64 `json:"max_ms"`
	FailedTries int     `json:"failed_tries"`
}

// writeLoad sends n writes of size-byte values from clients goroutines,
// spread over the members (followers redirect to the leader).
func (c *cluster) writeLoad(n, clients, size int) (writeResult, error) {
	value := bytes.Repeat([]byte("v"), size)
	var next atomic.Int64
	var mu sync.Mutex
	var lat []time.Duration
	var failedTries int
	var firstErr error
	var wg sync.WaitGroup
	start := time.Now()
	for w := 0; w < clients; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				d, failed, err := c.put(i%3, fmt.Sprintf("load-%08d", i), value, time.Now().Add(30*time.Second))
				mu.Lock()
				failedTries += failed
				if err != nil && firstErr == nil {
					firstErr = err
				}
				if err == nil {
					lat = append(lat, d)
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	if firstErr != nil {
		return writeResult{}, firstErr
	}
	slices.Sort(lat)
	pct := func(p float64) float64 { return ms(lat[min(len(lat)-1, int(p*float64(len(lat))))]) }
	return writeResult{Writes: n, Clients: clients, OpsPerSec: float64(n) / elapsed.Seconds(),
		P50Ms: pct(0.5), P99Ms: pct(0.99), MaxMs: pct(1), FailedTries: failedTries}, nil
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// outageResult is what clients' writes waited while the leader stopped.
type outageResult struct {
	Signal string `json:"signal"`
	// LongestWaitMs is, per round, the longest any write took from its
	// first attempt to its acknowledgement, retries included.
	LongestWaitMs []float64 `json:"longest_wait_ms"`
	// ExitMs is, per round, how long the leader took to exit after the
	// signal (SIGTERM: its handover and a clean shutdown).
	ExitMs []float64 `json:"exit_ms"`
}

// leaderOutage runs writers clients' writes on the settled cluster, sends
// the leader sig after a second, goes on writing for after, and returns
// the longest write and how long the leader took to exit. The stopped
// node is then restarted from its directory and the cluster settled.
func (c *cluster) leaderOutage(sig syscall.Signal, writers int, after time.Duration) (longest, exit time.Duration, err error) {
	leader, err := c.settled(3)
	if err != nil {
		return 0, 0, err
	}
	stop := make(chan struct{})
	var mu sync.Mutex
	var wg sync.WaitGroup
	var werr error
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				d, _, err := c.put(w%3, fmt.Sprintf("outage-%d-%d", w, i), []byte("v"), time.Now().Add(30*time.Second))
				mu.Lock()
				if err != nil && werr == nil {
					werr = err
				}
				longest = max(longest, d)
				mu.Unlock()
				if err != nil {
					return
				}
			}
		}(w)
	}
	time.Sleep(time.Second)
	signalled := time.Now()
	c.stop(leader, sig)
	exit = time.Since(signalled)
	time.Sleep(after)
	close(stop)
	wg.Wait()
	if werr != nil {
		return 0, 0, werr
	}
	if err := c.start(leader); err != nil {
		return 0, 0, err
	}
	if _, err := c.settled(3); err != nil {
		return 0, 0, errors.Join(fmt.Errorf("after restarting n%d", leader+1), err)
	}
	return longest, exit, nil
}
