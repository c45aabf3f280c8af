package main

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/hashicorp/raft"
)

// certFiles writes a certificate for name (valid for 127.0.0.1) signed by
// ca, and returns a Config with the TLS files set, trusting caFile.
func certFiles(t *testing.T, dir string, ca *certAuthority, name, caFile string) Config {
	t.Helper()
	certPEM, keyPEM, err := ca.issue(name, []string{"127.0.0.1", "localhost"})
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{ID: name, TLSCertFile: filepath.Join(dir, name+".pem"), TLSKeyFile: filepath.Join(dir, name+"-key.pem"), TLSCAFile: caFile}
	if err := writePEMs(cfg.TLSCertFile, certPEM, cfg.TLSKeyFile, keyPEM); err != nil {
		t.Fatal(err)
	}
	return cfg
}

func writeCA(t *testing.T, dir, name string) (*certAuthority, string) {
	t.Helper()
	ca, err := newCertAuthority(name)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name+"-ca.pem")
	if err := os.WriteFile(path, ca.pem, 0o644); err != nil {
		t.Fatal(err)
	}
	return ca, path
}

// TestMutualTLSCluster: three nodes over mutual TLS (raft and HTTPS, joins
// authenticated by the members' certificates) replicate writes; a client
// without a certificate is refused; a node whose certificate another CA
// signed can neither join nor move the cluster's leader or term with raft
// messages, and neither can a plain TCP peer, while a peer with a
// certificate of the cluster's CA reaches raft over the same path.
func TestMutualTLSCluster(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ca, caFile := writeCA(t, dir, "cluster")
	nodes := make([]*servedNode, 3)
	for i := range nodes {
		cfg := certFiles(t, dir, ca, fmt.Sprintf("n%d", i+1), caFile)
		cfg.RaftAddr = "127.0.0.1:0"
		cfg.HeartbeatTimeout = 500 * time.Millisecond
		if i > 0 {
			cfg.Join = nodes[0].url
		}
		nodes[i] = serveNode(t, cfg)
		if i == 0 {
			nodes[0].waitLeader(t)
		}
	}
	waitFor(t, "three voters that know the leader", 15*time.Second, func() bool {
		for _, n := range nodes {
			if len(n.configServers()) != 3 || n.leaderHTTP() == "" {
				return false
			}
		}
		return true
	})
	leader := -1
	for i, n := range nodes {
		if n.isLeader() {
			leader = i
		}
	}
	if leader < 0 {
		t.Fatal("no leader")
	}
	// Through a follower: a 307 to the leader's https URL, then the write.
	follower := nodes[(leader+1)%3]
	code, body, err := doRetrying(follower.client, func() *http.Request {
		req, _ := http.NewRequest(http.MethodPut, follower.url+"/kv/k", bytes.NewReader([]byte("over tls")))
		return req
	})
	if err != nil || code != http.StatusNoContent {
		t.Fatalf("PUT through a follower: %d %s %v", code, body, err)
	}
	for _, n := range nodes {
		waitFor(t, n.cfg.ID+" to apply the write", 5*time.Second, func() bool {
			v, err := n.staleRead([]byte("k"))
			return err == nil && string(v) == "over tls"
		})
	}

	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca.pem)
	noCert := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	if resp, err := noCert.Get(nodes[leader].url + "/status"); err == nil {
		resp.Body.Close()
		t.Fatalf("a client without a certificate was answered %s", resp.Status)
	}

	// The rogue trusts the cluster's CA (its certificate is public) but
	// holds a certificate that another CA signed.
	rogueCA, _ := writeCA(t, dir, "rogue")
	rogueCfg := certFiles(t, dir, rogueCA, "rogue", caFile)
	rogueSec, err := loadSecurity(&rogueCfg)
	if err != nil {
		t.Fatal(err)
	}
	// Go's client sends no certificate the server's CA list does not name;
	// the rogue sends its own all the same.
	rogueCert := rogueSec.dialTLS.Certificates[0]
	rogueSec.dialTLS.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return &rogueCert, nil }
	_, leaderID := nodes[leader].raft.LeaderWithID()
	term := nodes[leader].raft.CurrentTerm()
	members := len(nodes[leader].configServers())

	join, _ := json.Marshal(joinRequest{ID: "rogue", Raft: "127.0.0.1:1", HTTP: "127.0.0.1:2"})
	for _, n := range nodes {
		if resp, err := rogueSec.httpClient("").Post(n.url+"/join", "application/json", bytes.NewReader(join)); err == nil {
			resp.Body.Close()
			t.Errorf("the rogue's join through %s was answered %s", n.cfg.ID, resp.Status)
		}
	}

	plain := &security{}
	member := certFiles(t, dir, ca, "n9", caFile)
	memberSec, err := loadSecurity(&member)
	if err != nil {
		t.Fatal(err)
	}
	peer := func(sec *security) raft.Transport {
		tr, _, err := newTransport(&Config{RaftAddr: "127.0.0.1:0", LogLevel: "OFF"}, sec, func() clusterID { return clusterID{} }, false)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { tr.(*raft.NetworkTransport).Close() })
		return tr
	}
	rogue, tcp, legit := peer(rogueSec), peer(plain), peer(memberSec)
	// Each request names another member as its sender, so one that got
	// through would count as a member's and move the term.
	as := func(n *servedNode) raft.RPCHeader {
		other := nodes[0]
		if other == n {
			other = nodes[1]
		}
		return raft.RPCHeader{ProtocolVersion: raft.ProtocolVersionMax, ID: []byte(other.cfg.ID), Addr: []byte(other.trans.LocalAddr())}
	}
	vote := func(tr raft.Transport, n *servedNode, term uint64) error {
		req := &raft.RequestVoteRequest{RPCHeader: as(n), Term: term, LastLogIndex: 1 << 40, LastLogTerm: term}
		return tr.RequestVote(raft.ServerID(n.cfg.ID), n.trans.LocalAddr(), req, &raft.RequestVoteResponse{})
	}
	for _, n := range nodes {
		if err := vote(rogue, n, term+10); err == nil {
			t.Errorf("%s took a vote request from a peer with another CA's certificate", n.cfg.ID)
		}
		if err := vote(tcp, n, term+10); err == nil {
			t.Errorf("%s took a vote request over plain TCP", n.cfg.ID)
		}
		hb := &raft.AppendEntriesRequest{RPCHeader: as(n), Term: term + 10}
		if err := rogue.AppendEntries(raft.ServerID(n.cfg.ID), n.trans.LocalAddr(), hb, &raft.AppendEntriesResponse{}); err == nil {
			t.Errorf("%s took entries from a peer with another CA's certificate", n.cfg.ID)
		}
		// The control: the same request with a stale term, from a
		// certificate of the cluster's CA, is delivered (and turned down).
		if err := vote(legit, n, term-1); err != nil {
			t.Errorf("a member's certificate could not reach %s's raft: %v", n.cfg.ID, err)
		}
	}
	time.Sleep(3 * nodes[leader].cfg.HeartbeatTimeout)
	// A request that got through would have moved a node to term+10. On a
	// loaded machine the cluster may hold an election or two of its own
	// meanwhile (one term each, after a pre-vote), so the leader and the
	// exact term may change; ten terms it cannot reach.
	for _, n := range nodes {
		if _, id := n.raft.LeaderWithID(); n.raft.CurrentTerm() >= term+10 || len(n.configServers()) != members {
			t.Errorf("%s after the rogue: leader %s term %d, %d members; before: leader %s term %d, %d members",
				n.cfg.ID, id, n.raft.CurrentTerm(), len(n.configServers()), leaderID, term, members)
		}
	}
}
