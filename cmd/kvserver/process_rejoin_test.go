package main

import (
	"bytes"
	"fmt"
	"net/http"
	"os"
	"syscall"
	"testing"
	"time"
)

// TestProcessWipedMemberRejoins runs S8 over TCP: a follower killed and
// restarted with an empty directory and -join waits for its removal
// before raft listens to its peers, is added back as a voter, and
// catches up with every write.
func TestProcessWipedMemberRejoins(t *testing.T) {
	bin, procs := startThreeProcs(t)
	client := &http.Client{Timeout: 5 * time.Second}
	const n = 50
	for i := 0; i < n; i++ {
		code, body, err := doRetrying(client, func() *http.Request {
			req, _ := http.NewRequest(http.MethodPut, procs[i%3].url()+fmt.Sprintf("/kv/k%02d", i), bytes.NewReader([]byte("v")))
			return req
		})
		if err != nil || code != http.StatusNoContent {
			t.Fatalf("PUT k%02d: %d %s %v", i, code, body, err)
		}
	}

	var wiped, live *proc
	for _, p := range procs[1:] {
		if s, ok := p.status(); ok && s.State == "Follower" {
			wiped = p
		}
	}
	if wiped == nil {
		t.Fatal("no follower among n2 and n3")
	}
	for _, p := range procs {
		if p != wiped {
			live = p
		}
	}
	wiped.cmd.Process.Signal(syscall.SIGKILL)
	<-wiped.exited
	if err := os.RemoveAll(wiped.dir); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	wiped.start(t, bin)
	// It rejoins as a nonvoter and is made a voter once it has answered
	// the leader (S12).
	var last statusReply
	waitFor(t, "the wiped node back as a voter and caught up", 20*time.Second, func() bool {
		ls, ok1 := live.status()
		ws, ok2 := wiped.status()
		last = ls
		return ok1 && ok2 && len(ws.Members) == 3 && ws.LeaderHTTP != "" && ws.AppliedIndex >= ls.CommitIndex && hasVoter(ls, wiped.id, wiped.raft)
	})
	t.Logf("the wiped %s rejoined as a voter and caught up in %v (members %+v)", wiped.id, time.Since(start).Round(time.Millisecond), last.Members)
	for i := 0; i < n; i++ {
		resp, err := client.Get(wiped.url() + fmt.Sprintf("/kv/k%02d?stale=true", i))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("k%02d on the rejoined %s: %d", i, wiped.id, resp.StatusCode)
		}
	}
	terminateAll(t, procs)
}

func hasVoter(s statusReply, id, raftAddr string) bool {
	for _, m := range s.Members {
		if m.ID == id && m.Raft == raftAddr && m.Suffrage == "Voter" {
			return true
		}
	}
	return false
}
