package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
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
