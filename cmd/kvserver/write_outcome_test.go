package main

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/hashicorp/raft"
)

// deposedBackend is a leader deposed while a write is in flight: its
// apply fails with applyErr and leaves it a follower that knows the new
// leader, as a leader that hears a higher term from the new one's
// AppendEntries does.
type deposedBackend struct {
	*fakeBackend
	applyErr error
	deposed  atomic.Bool
}

func (d *deposedBackend) isLeader() bool { return !d.deposed.Load() }

func (d *deposedBackend) leaderHTTP() string { return "127.0.0.1:2" }

func (d *deposedBackend) apply(c command) error {
	d.called("")
	d.deposed.Store(true)
	return d.applyErr
}

// TestWriteOfUnknownOutcomeIsNotRedirected: a write whose entry raft had
// appended when its leader lost leadership (raft.ErrLeadershipLost) may
// still commit under the new leader. It was answered 307 to the new
// leader, which a client following redirects re-sent at once: one PUT
// then took effect twice, and a PUT of another value acknowledged
// between the two was undone by the second, a history no single write
// explains (x=a, x=b, x=a). It is answered 503 now, saying the outcome
// is unknown. A write refused before raft appended it (ErrNotLeader,
// ErrLeadershipTransferInProgress) is still redirected.
func TestWriteOfUnknownOutcomeIsNotRedirected(t *testing.T) {
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for _, tc := range []struct {
		err  error
		want int
	}{
		{raft.ErrLeadershipLost, http.StatusServiceUnavailable},
		{raft.ErrNotLeader, http.StatusTemporaryRedirect},
		{raft.ErrLeadershipTransferInProgress, http.StatusTemporaryRedirect},
	} {
		for _, method := range []string{http.MethodPut, http.MethodDelete} {
			b := &deposedBackend{fakeBackend: newFakeBackend(Limits{}, true), applyErr: tc.err}
			srv := httptest.NewServer(newHandler(b, &security{}, b.limits, http.DefaultClient))
			req, _ := http.NewRequest(method, srv.URL+"/kv/x", strings.NewReader("a"))
			resp, err := noRedirect.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			srv.Close()
			if resp.StatusCode != tc.want {
				t.Errorf("%s after %v: %d (Location %q), want %d", method, tc.err, resp.StatusCode, resp.Header.Get("Location"), tc.want)
			}
		}
	}
}
