package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestRunCountsOnlyWantedStatus: a write counts only when it ends in the
// wanted status, every index is sent exactly once, and latencies are kept
// for the successes alone.
func TestRunCountsOnlyWantedStatus(t *testing.T) {
	var seen [100]atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var i int
		fmt.Sscanf(strings.TrimPrefix(r.URL.Path, "/kv/load-"), "%d", &i)
		seen[i].Add(1)
		if i%4 == 0 {
			http.Error(w, "no", http.StatusServiceUnavailable)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	defer srv.Close()
	l := &load{urls: []string{srv.URL}, client: srv.Client()}
	r := l.run(len(seen), 7, func(i int) (*http.Request, error) {
		return http.NewRequest(http.MethodPut, fmt.Sprintf("%s/kv/load-%08d", srv.URL, i), strings.NewReader("v"))
	}, http.StatusNoContent)
	if r.ok != 75 || r.failed != 25 || len(r.latencies) != 75 || r.firstErr == nil {
		t.Fatalf("ok %d failed %d latencies %d firstErr %v; want 75, 25, 75, an error", r.ok, r.failed, len(r.latencies), r.firstErr)
	}
	for i := range seen {
		if n := seen[i].Load(); n != 1 {
			t.Fatalf("request %d sent %d times", i, n)
		}
	}
}

// TestCheckFlags: a load that cannot run as asked is refused: a value
// size that only dies allocating, and a target that is not an HTTP URL
// (a stray comma's empty one failed every write sent to it).
func TestCheckFlags(t *testing.T) {
	ok := []string{"http://127.0.0.1:8001", "https://a:8002"}
	if err := checkFlags(10, 4, 100, ok, nil); err != nil {
		t.Fatalf("good flags: %v", err)
	}
	for _, tc := range []struct {
		n, c, size int
		urls       []string
	}{
		{0, 4, 100, ok},
		{10, 0, 100, ok},
		{10, 4, -1, ok},
		{10, 4, 1 << 40, ok},
		{10, 4, 100, []string{"http://127.0.0.1:8001", ""}},
		{10, 4, 100, []string{"127.0.0.1:8001"}},
		{10, 4, 100, []string{"ftp://h"}},
	} {
		if err := checkFlags(tc.n, tc.c, tc.size, tc.urls, nil); err == nil {
			t.Errorf("%+v: no error", tc)
		}
	}
}

// TestRunStartsNoMoreClientsThanRequests: -c far above -n starts no more
// clients than there are requests (it started every one, so a huge -c
// hung the tool allocating goroutines with nothing to send).
func TestRunStartsNoMoreClientsThanRequests(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) }))
	defer srv.Close()
	l := &load{urls: []string{srv.URL}, client: srv.Client()}
	var most atomic.Int64
	r := l.run(3, 200_000, func(i int) (*http.Request, error) {
		if g := int64(runtime.NumGoroutine()); g > most.Load() {
			most.Store(g)
		}
		return http.NewRequest(http.MethodPut, fmt.Sprintf("%s/kv/load-%08d", srv.URL, i), strings.NewReader("v"))
	}, http.StatusNoContent)
	if r.ok != 3 || most.Load() > 1000 {
		t.Fatalf("ok %d, goroutines up to %d; want 3 ok and a handful of goroutines", r.ok, most.Load())
	}
}

// TestPrintMeasuredOnly: a run in which nothing was acknowledged reports
// no latency (it printed p50, p99 and max of 0s, figures never measured)
// and counts as failed; one with successes prints its percentiles.
func TestPrintMeasuredOnly(t *testing.T) {
	var b strings.Builder
	none := result{failed: 3, elapsed: time.Millisecond, firstErr: fmt.Errorf("refused")}
	none.print(&b, "write")
	if out := b.String(); strings.Contains(out, "p50") || !strings.Contains(out, "none acknowledged") || !none.failedAll() {
		t.Fatalf("nothing acknowledged: %q, failedAll %v", out, none.failedAll())
	}
	b.Reset()
	some := result{ok: 2, failed: 1, elapsed: time.Second, latencies: []time.Duration{time.Millisecond, 3 * time.Millisecond}}
	some.print(&b, "write")
	if out := b.String(); !strings.Contains(out, "p50 3ms p99 3ms max 3ms") || some.failedAll() {
		t.Fatalf("two acknowledged: %q, failedAll %v", out, some.failedAll())
	}
}

// TestCheckFlagsRefusesArguments: "kvload URL -n 10" is refused; flag
// parsing stopped at the URL, so the run sent the default 10000 writes to
// the default target.
func TestCheckFlagsRefusesArguments(t *testing.T) {
	if err := checkFlags(10, 4, 100, []string{"http://127.0.0.1:8001"}, []string{"http://h:1", "-n", "10"}); err == nil {
		t.Fatal("no error")
	}
}
