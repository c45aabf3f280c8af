package main

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestProcessesMutualTLS runs the binary as the README's secure setup
// does: certificates from kvserver -gen-certs, two nodes over HTTPS and
// mutual-TLS raft, a client with its own certificate writing through the
// follower; a client without one is refused.
func TestProcessesMutualTLS(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs processes")
	}
	bin := buildKVServer(t)
	certs := filepath.Join(t.TempDir(), "certs")
	if out, err := exec.Command(bin, "-gen-certs", certs, "n1=127.0.0.1", "n2=127.0.0.1", "client=").CombinedOutput(); err != nil {
		t.Fatalf("-gen-certs: %v\n%s", err, out)
	}
	caPEM, err := os.ReadFile(filepath.Join(certs, "ca.pem"))
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(caPEM)
	pair, err := tls.LoadX509KeyPair(filepath.Join(certs, "client.pem"), filepath.Join(certs, "client-key.pem"))
	if err != nil {
		t.Fatal(err)
	}
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: roots, Certificates: []tls.Certificate{pair}}}}

	addrs := freeAddrs(t, 4)
	root := t.TempDir()
	procs := make([]*proc, 2)
	for i := range procs {
		id := fmt.Sprintf("n%d", i+1)
		procs[i] = &proc{id: id, dir: filepath.Join(root, id), raft: addrs[2*i], http: addrs[2*i+1], scheme: "https", client: client,
			extra: []string{"-tls-cert", filepath.Join(certs, id+".pem"), "-tls-key", filepath.Join(certs, id+"-key.pem"),
				"-tls-ca", filepath.Join(certs, "ca.pem")}}
	}
	procs[1].join = procs[0].url()
	defer killAll(procs)
	procs[0].startLeader(t, bin)
	procs[1].start(t, bin)
	waitFor(t, "two members that know the leader", 15*time.Second, func() bool {
		s, ok := procs[1].status()
		return ok && len(s.Members) == 2 && s.LeaderHTTP != ""
	})
	code, body, err := doRetrying(client, func() *http.Request {
		req, _ := http.NewRequest(http.MethodPut, procs[1].url()+"/kv/k", strings.NewReader("secure"))
		return req
	})
	if err != nil || code != http.StatusNoContent {
		t.Fatalf("PUT through the follower: %d %s %v", code, body, err)
	}
	waitFor(t, "the follower to apply the write", 5*time.Second, func() bool {
		code, body, err := doRetrying(client, func() *http.Request {
			req, _ := http.NewRequest(http.MethodGet, procs[1].url()+"/kv/k?stale=true", nil)
			return req
		})
		return err == nil && code == http.StatusOK && body == "secure"
	})
	noCert := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots}}}
	if resp, err := noCert.Get(procs[0].url() + "/status"); err == nil {
		resp.Body.Close()
		t.Fatalf("a client without a certificate: %s", resp.Status)
	}
	terminateAll(t, procs)
}

// TestProcessRefusesExposedHTTP: the binary will not serve every interface
// without a token or TLS, and says which flags fix it.
func TestProcessRefusesExposedHTTP(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs a process")
	}
	bin := buildKVServer(t)
	addrs := freeAddrs(t, 1)
	_, port, _ := strings.Cut(addrs[0], ":")
	cmd := exec.Command(bin, "-id", "n1", "-dir", t.TempDir(), "-raft", ":0", "-http", "0.0.0.0:"+port)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	if err == nil || !strings.Contains(stderr.String(), "-token-file") || !strings.Contains(stderr.String(), "-tls-ca") {
		t.Fatalf("kvserver -http 0.0.0.0:%s: %v, %q; want a refusal naming -token-file and -tls-ca", port, err, stderr.String())
	}
}
