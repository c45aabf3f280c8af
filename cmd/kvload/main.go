// Command kvload measures writes per second through a kvserver cluster: it
// sends PUTs from -c concurrent clients, spread over the -targets in turn
// (followers redirect to the leader), and reports the rate of acknowledged
// writes and their latency percentiles.
//
//	kvload -targets http://127.0.0.1:8001,http://127.0.0.1:8002,http://127.0.0.1:8003 -n 20000 -c 32
//
// Against a secured cluster: -token-file for its bearer token, -ca for the
// CA of its HTTPS certificates, -cert and -key for a client certificate.
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

func main() {
	targets := flag.String("targets", "http://127.0.0.1:8001", "comma-separated kvserver URLs")
	n := flag.Int("n", 10000, "writes to send")
	c := flag.Int("c", 16, "concurrent clients")
	size := flag.Int("size", 100, "value size in bytes")
	read := flag.Bool("read", false, "after the writes, time linearizable and stale reads of the same keys")
	var sec clientSecurity
	flag.StringVar(&sec.tokenFile, "token-file", "", "file holding the cluster's bearer token")
	flag.StringVar(&sec.caFile, "ca", "", "CA certificate (PEM) of the cluster's HTTPS certificates")
	flag.StringVar(&sec.certFile, "cert", "", "client certificate (PEM), for a cluster that takes certificates")
	flag.StringVar(&sec.keyFile, "key", "", "the client certificate's private key (PEM)")
	flag.Parse()
	urls := strings.Split(*targets, ",")
	if err := checkFlags(*n, *c, *size, urls, flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "kvload:", err)
		os.Exit(2)
	}
	client, err := sec.client(*c)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	l := &load{urls: urls, client: client}
	value := bytes.Repeat([]byte("v"), *size)
	r := l.run(*n, *c, func(i int) (*http.Request, error) {
		return http.NewRequest(http.MethodPut, l.urls[i%len(l.urls)]+fmt.Sprintf("/kv/load-%08d", i), bytes.NewReader(value))
	}, http.StatusNoContent)
	r.print(os.Stdout, "write")
	if r.failedAll() {
		os.Exit(1)
	}
	if *read {
		failed := false
		for _, q := range []string{"", "?stale=true"} {
			r := l.run(*n, *c, func(i int) (*http.Request, error) {
				return http.NewRequest(http.MethodGet, l.urls[i%len(l.urls)]+fmt.Sprintf("/kv/load-%08d%s", i, q), nil)
			}, http.StatusOK)
			r.print(os.Stdout, map[string]string{"": "linearizable read", "?stale=true": "stale read"}[q])
			failed = failed || r.failedAll()
		}
		if failed {
			os.Exit(1)
		}
	}
}

// maxSize bounds -size: kvserver takes values of at most its
// -max-value-bytes (1 MiB by default), and a value far larger only dies
// allocating here.
const maxSize = 1 << 30

// checkFlags refuses a load that cannot run as asked: no writes or
// clients, a value size out of range, a target that is not an HTTP URL
// (an empty one from a stray comma fails every write sent to it), or an
// argument (flag parsing stops at it: "kvload URL -n 10" sent the default
// 10000 writes to the default target).
func checkFlags(n, c, size int, urls, rest []string) error {
	if len(rest) > 0 {
		return fmt.Errorf("unexpected argument %q: kvload takes flags only (targets are -targets), and reads none after it", rest[0])
	}
	if n <= 0 || c <= 0 || size < 0 || size > maxSize {
		return fmt.Errorf("-n and -c must be positive, -size from 0 to %d", maxSize)
	}
	for _, u := range urls {
		p, err := url.Parse(u)
		if err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
			return fmt.Errorf("-targets: %q is not an http:// or https:// URL", u)
		}
	}
	return nil
}

type load struct {
	urls   []string
	client *http.Client
}

type result struct {
	ok, failed int
	firstErr   error
	elapsed    time.Duration
	latencies  []time.Duration
}

// run sends requests 0..n-1 from c clients; a request counts when it ends
// with status want (after any redirect). Each client takes the next
// request, so no more than n start: a huge -c only spent memory on
// clients with nothing to send.
func (l *load) run(n, c int, req func(int) (*http.Request, error), want int) result {
	c = min(c, n)
	var next atomic.Int64
	var mu sync.Mutex
	var r result
	var wg sync.WaitGroup
	start := time.Now()
	for w := 0; w < c; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var lat []time.Duration
			var ok, failed int
			var firstErr error
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				t0 := time.Now()
				err := l.do(req, i, want)
				if err != nil {
					failed++
					if firstErr == nil {
						firstErr = err
					}
					continue
				}
				ok++
				lat = append(lat, time.Since(t0))
			}
			mu.Lock()
			r.ok += ok
			r.failed += failed
			r.latencies = append(r.latencies, lat...)
			if r.firstErr == nil {
				r.firstErr = firstErr
			}
			mu.Unlock()
		}()
	}
	wg.Wait()
	r.elapsed = time.Since(start)
	slices.Sort(r.latencies)
	return r
}

func (l *load) do(req func(int) (*http.Request, error), i, want int) error {
	rq, err := req(i)
	if err != nil {
		return err
	}
	resp, err := l.client.Do(rq)
	if err != nil {
		return err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != want {
		return errors.New(resp.Status)
	}
	return nil
}

// print writes r's line to w; with nothing acknowledged there is no
// latency to report, and it says so rather than printing zeros.
func (r result) print(w io.Writer, what string) {
	pct := func(p float64) time.Duration {
		return r.latencies[min(len(r.latencies)-1, int(p*float64(len(r.latencies))))].Round(10 * time.Microsecond)
	}
	lat := "latency: none acknowledged"
	if len(r.latencies) > 0 {
		lat = fmt.Sprintf("latency p50 %v p99 %v max %v", pct(0.50), pct(0.99), pct(1))
	}
	fmt.Fprintf(w, "%s: %d ok, %d failed in %v: %.0f/s; %s\n",
		what, r.ok, r.failed, r.elapsed.Round(time.Millisecond), float64(r.ok)/r.elapsed.Seconds(), lat)
	if r.firstErr != nil {
		fmt.Fprintf(w, "%s: first error: %v\n", what, r.firstErr)
	}
}

// failedAll reports whether r measured nothing: every request failed.
func (r result) failedAll() bool { return r.failed > 0 && r.ok == 0 }
