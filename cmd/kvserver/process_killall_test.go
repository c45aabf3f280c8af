package main

import (
	"bytes"
	"fmt"
	"net/http"
	"sync"
	"syscall"
	"testing"
	"time"
)

// TestProcessesSurviveWholeClusterKill SIGKILLs all three kvserver
// processes at once while clients overwrite the same few keys (snapshots
// and log compaction running), restarts them from their directories, and
// checks every key holds the last value acknowledged for it, or a value
// whose write was in flight at the kill: no acknowledged write is lost,
// none is applied out of order or twice over a later one, on any node.
func TestProcessesSurviveWholeClusterKill(t *testing.T) {
	bin, procs := startThreeProcs(t)

	// Each writer owns one key and writes 1, 2, 3, ... to it in turn: the
	// key's value after the restart must be the last acknowledged or
	// the one in flight, never older.
	const writers = 4
	var (
		mu       sync.Mutex
		acked    [writers]int
		inflight [writers]int
		stop     = make(chan struct{})
		wg       sync.WaitGroup
	)
	client := &http.Client{Timeout: 2 * time.Second}
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for v, i := 1, 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				mu.Lock()
				inflight[w] = v
				mu.Unlock()
				req, _ := http.NewRequest(http.MethodPut, procs[i%3].url()+fmt.Sprintf("/kv/key%d", w), bytes.NewReader([]byte(fmt.Sprint(v))))
				resp, err := client.Do(req)
				if err != nil {
					continue
				}
				resp.Body.Close()
				if resp.StatusCode == http.StatusNoContent {
					mu.Lock()
					acked[w] = v
					mu.Unlock()
					v++
				}
			}
		}()
	}
	total := func() int {
		mu.Lock()
		defer mu.Unlock()
		n := 0
		for _, a := range acked {
			n += a
		}
		return n
	}
	waitFor(t, "writes before the kill", 15*time.Second, func() bool { return total() >= 400 })
	for _, p := range procs {
		p.cmd.Process.Signal(syscall.SIGKILL)
	}
	for _, p := range procs {
		<-p.exited
	}
	close(stop)
	wg.Wait()

	for _, p := range procs {
		p.start(t, bin)
	}
	waitFor(t, "a leader after the restart", 15*time.Second, func() bool {
		for _, p := range procs {
			if s, ok := p.status(); ok && s.State == "Leader" && s.LeaderHTTP != "" {
				return true
			}
		}
		return false
	})
	var leader statusReply
	waitFor(t, "every node to apply the leader's commit index", 15*time.Second, func() bool {
		for _, p := range procs {
			if s, ok := p.status(); ok && s.State == "Leader" {
				leader = s
			}
		}
		for _, p := range procs {
			if s, ok := p.status(); !ok || leader.CommitIndex == 0 || s.AppliedIndex < leader.CommitIndex {
				return false
			}
		}
		return true
	})
	for _, p := range procs {
		for w := range writers {
			for _, stale := range []bool{true, false} {
				url := p.url() + fmt.Sprintf("/kv/key%d", w)
				if stale {
					url += "?stale=true"
				}
				code, body, err := doRetrying(client, func() *http.Request {
					req, _ := http.NewRequest(http.MethodGet, url, nil)
					return req
				})
				if err != nil || code != http.StatusOK || (body != fmt.Sprint(acked[w]) && body != fmt.Sprint(inflight[w])) {
					t.Errorf("%s: key%d (stale %v) = %d %q %v; acknowledged %d, in flight %d", p.id, w, stale, code, body, err, acked[w], inflight[w])
				}
			}
		}
	}
	terminateAll(t, procs)
}
