package main

import (
	"io"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/raft"
)

// soloWithPeer starts n1 alone on an in-memory transport and, connected
// to it, a peer at inmem-b that answers AppendEntries.
func soloWithPeer(t *testing.T) *servedNode {
	_, trN1 := raft.NewInmemTransport("inmem-n1")
	s := serveNode(t, Config{ID: "n1", Transport: trN1})
	s.waitLeader(t)
	_, trB := raft.NewInmemTransport("inmem-b")
	trB.Connect("inmem-n1", trN1)
	trN1.Connect("inmem-b", trB)
	answerAppendEntries(t, trB)
	return s
}

// postJoinAsync posts a join to s and delivers its status and body.
func postJoinAsync(s *servedNode, body string) <-chan string {
	ch := make(chan string, 1)
	go func() {
		resp, err := s.client.Post(s.url+"/join", "application/json", strings.NewReader(body))
		if err != nil {
			ch <- err.Error()
			return
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		ch <- resp.Status + " " + strings.TrimSpace(string(b))
	}()
	return ch
}

// TestJoinSameIDElsewhereDoesNotPromote caught (review) S12's wait
// counting an answer by ID: a join of b at an address nothing serves,
// waiting for an answer, saw the answers to a second join of b at an
// answering address, answered 200 and promoted b at the dead address,
// which could leave it the committed voter. Joins are now serialized,
// answers go by address, and the promotion applies only to the
// configuration its own addition made.
func TestJoinSameIDElsewhereDoesNotPromote(t *testing.T) {
	t.Parallel()
	s := soloWithPeer(t)
	dead := postJoinAsync(s, `{"id":"b","raft":"inmem-nobody","http":"127.0.0.1:9"}`)
	waitFor(t, "b at inmem-nobody a nonvoter whose heartbeats fail", 5*time.Second, func() bool {
		sf, ok := suffrage(s.Node, "b")
		return ok && sf == raft.Nonvoter && s.beats.unreachable("b")
	})
	live := postJoinAsync(s, `{"id":"b","raft":"inmem-b","http":"127.0.0.1:9"}`)
	if got := <-dead; !strings.HasPrefix(got, "502") {
		t.Errorf("join of b at inmem-nobody: %s; want 502", got)
	}
	if got := <-live; !strings.HasPrefix(got, "200") {
		t.Errorf("join of b at inmem-b: %s; want 200", got)
	}
	servers := s.configServers()
	if len(servers) != 2 || servers[1].ID != "b" || servers[1].Address != "inmem-b" || servers[1].Suffrage != raft.Voter {
		t.Fatalf("configuration %+v; want n1 and b a voter at inmem-b", servers)
	}
}

// TestConcurrentDuplicateJoinsAllSucceed: a joiner whose client gave up
// and asked again has two joins of itself in flight; each is answered
// 200 and the server ends a voter.
func TestConcurrentDuplicateJoinsAllSucceed(t *testing.T) {
	t.Parallel()
	s := soloWithPeer(t)
	var answers []<-chan string
	for range 3 {
		answers = append(answers, postJoinAsync(s, `{"id":"b","raft":"inmem-b","http":"127.0.0.1:9"}`))
	}
	for _, a := range answers {
		if got := <-a; !strings.HasPrefix(got, "200") {
			t.Errorf("duplicate join: %s; want 200", got)
		}
	}
	if !isVoter(s.Node, "b") {
		t.Fatalf("b not a voter after its joins: %+v", s.configServers())
	}
	if err := s.apply(command{op: opSet, key: []byte("a"), value: []byte("1")}); err != nil {
		t.Fatalf("a write with b a voter: %v", err)
	}
}
