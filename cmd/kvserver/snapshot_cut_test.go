package main

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/raft"
)

// cuttingTransport passes every RPC to its in-memory transport, but the
// snapshots it sends go through cut while one is set.
type cuttingTransport struct {
	*raft.InmemTransport
	mu  sync.Mutex
	cut func(data io.Reader, size int64) io.Reader
}

func (c *cuttingTransport) InstallSnapshot(id raft.ServerID, target raft.ServerAddress, args *raft.InstallSnapshotRequest, resp *raft.InstallSnapshotResponse, data io.Reader) error {
	c.mu.Lock()
	cut := c.cut
	c.mu.Unlock()
	if cut != nil {
		data = cut(data, args.Size)
	}
	return c.InmemTransport.InstallSnapshot(id, target, args, resp, data)
}

func (c *cuttingTransport) setCut(cut func(io.Reader, int64) io.Reader) {
	c.mu.Lock()
	c.cut = cut
	c.mu.Unlock()
}

// haltingReader passes n bytes, reports it on reached, then waits for
// release and fails: a stream cut halfway.
type haltingReader struct {
	r       io.Reader
	n       int64
	reached chan struct{}
	release chan struct{}
	once    sync.Once
}

var errStreamCut = errors.New("snapshot stream cut")

func (h *haltingReader) Read(p []byte) (int, error) {
	if h.n <= 0 {
		h.once.Do(func() { close(h.reached) })
		<-h.release
		return 0, errStreamCut
	}
	if int64(len(p)) > h.n {
		p = p[:h.n]
	}
	m, err := h.r.Read(p)
	h.n -= int64(m)
	return m, err
}

// TestSnapshotInstallCutByARestart: a follower down while the leader
// compacts its log past the follower's end catches up by an installed
// snapshot; the stream is cut halfway and the follower shut down while
// its raft is reading it, then restarted while clients keep writing. It
// must catch up by a later install and hold every acknowledged write:
// the cut stream leaves neither a snapshot nor a half-restored state.
//
// Not parallel: its writers load the machine (see
// TestPartitionedLeaderLinearizable).
func TestSnapshotInstallCutByARestart(t *testing.T) {
	cts := make([]*cuttingTransport, 3)
	c := newWrappedTestCluster(t, func(i int, tr *raft.InmemTransport) raft.Transport {
		cts[i] = &cuttingTransport{InmemTransport: tr}
		return cts[i]
	})
	c.waitSettled()
	l := c.waitLeader("the leader")
	f := (l + 1) % 3
	for i := range 40 {
		c.put(l, fmt.Sprintf("a%03d", i), fmt.Sprintf("v%d", i))
	}
	c.stop(f)
	for i := range 80 {
		c.put(l, fmt.Sprintf("b%03d", i), fmt.Sprintf("v%d", i))
	}
	// Both members left compact past the follower's log, so that
	// whichever leads when it returns sends it a snapshot.
	o := 3 - l - f
	c.waitApplied("the other member to apply the writes", o, l)
	for _, i := range []int{l, o} {
		if err := c.nodes[i].raft.Snapshot().Error(); err != nil {
			t.Fatalf("snapshot on n%d: %v", i+1, err)
		}
	}

	h := &haltingReader{reached: make(chan struct{}), release: make(chan struct{})}
	var cutOnce sync.Once
	cut := func(r io.Reader, size int64) io.Reader {
		taken := false
		cutOnce.Do(func() { h.r, h.n, taken = r, size/2, true })
		if !taken {
			return r // the first install only
		}
		return h
	}
	cts[l].setCut(cut)
	cts[o].setCut(cut)
	c.start(f)
	w := startAckedWriters(c.client, []string{c.https[l].URL, c.https[o].URL}, 2)
	select {
	case <-h.reached:
	case <-time.After(20 * time.Second):
		t.Fatal("no snapshot install reached its halfway point")
	}
	stopped := make(chan error, 1)
	go func() { stopped <- c.nodes[f].Shutdown() }()
	close(h.release)
	if err := <-stopped; err != nil {
		t.Fatalf("shut the follower down mid-install: %v", err)
	}
	c.nodes[f] = nil
	c.api[f].h.Store(nil)

	waitFor(t, "writes while the follower is down", 10*time.Second, func() bool { return w.count() >= 20 })
	c.start(f)
	waitFor(t, "writes after the restart", 10*time.Second, func() bool { return w.count() >= 60 })
	acked := w.halt()
	c.waitApplied("the restarted follower to catch up", f, c.waitLeader("the leader"))
	if gen := c.nodes[f].fsm.gen; gen < 2 {
		t.Fatalf("the follower caught up without a restored snapshot (generation %d)", gen)
	}
	check := func(key, want string) {
		t.Helper()
		if got, code := c.get(f, key, true); code != http.StatusOK || got != want {
			t.Fatalf("stale read of %s on the restarted follower: %d %q; want %q", key, code, got, want)
		}
	}
	for i := range 40 {
		check(fmt.Sprintf("a%03d", i), fmt.Sprintf("v%d", i))
	}
	for i := range 80 {
		check(fmt.Sprintf("b%03d", i), fmt.Sprintf("v%d", i))
	}
	for key, want := range acked {
		check(key, want)
	}
}
