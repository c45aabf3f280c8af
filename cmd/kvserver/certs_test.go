package main

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// TestGenCerts: -gen-certs writes a CA and, per NAME=HOSTS argument, a
// certificate the CA verifies for those hosts as server and client, with
// keys readable by their owner only; a second run keeps the CA, so a node
// added later joins the same cluster; malformed arguments are refused.
func TestGenCerts(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "certs")
	if err := genCertsCommand(dir, []string{"n1=127.0.0.1,node1.example", "client="}, io.Discard); err != nil {
		t.Fatal(err)
	}
	caPEM, err := os.ReadFile(filepath.Join(dir, caCertFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := genCertsCommand(dir, []string{"n2=10.0.0.2"}, io.Discard); err != nil {
		t.Fatal(err)
	}
	if again, _ := os.ReadFile(filepath.Join(dir, caCertFile)); !bytes.Equal(again, caPEM) {
		t.Fatal("a second -gen-certs replaced the CA")
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(caPEM)
	for name, hosts := range map[string][]string{"n1": {"127.0.0.1", "node1.example"}, "n2": {"10.0.0.2"}, "client": nil} {
		pair, err := tls.LoadX509KeyPair(filepath.Join(dir, name+".pem"), filepath.Join(dir, name+"-key.pem"))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		cert, _ := x509.ParseCertificate(pair.Certificate[0])
		for _, usage := range []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth} {
			if _, err := cert.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{usage}}); err != nil {
				t.Errorf("%s as %v: %v", name, usage, err)
			}
		}
		for _, h := range hosts {
			if err := cert.VerifyHostname(h); err != nil {
				t.Errorf("%s for %s: %v", name, h, err)
			}
		}
		if err := cert.VerifyHostname("other.example"); err == nil {
			t.Errorf("%s verifies for a host it was not issued for", name)
		}
		if fi, err := os.Stat(filepath.Join(dir, name+"-key.pem")); err != nil {
			t.Error(err)
		} else if fi.Mode().Perm() != 0o600 {
			t.Errorf("%s's key has mode %v; want 0600", name, fi.Mode().Perm())
		}
	}
	for _, args := range [][]string{nil, {"n3"}, {"=1.2.3.4"}, {"../n3=1.2.3.4"}} {
		if err := genCertsCommand(dir, args, io.Discard); err == nil {
			t.Errorf("-gen-certs %q: no error", args)
		}
	}
}
