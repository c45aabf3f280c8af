package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// certAuthority signs the certificates of a cluster's members and clients
// (kvserver -gen-certs; tests). ECDSA P-256 keys throughout.
type certAuthority struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pem  []byte
}

const (
	caValidity   = 10 * 365 * 24 * time.Hour
	leafValidity = 2 * 365 * 24 * time.Hour
)

func newCertAuthority(name string) (*certAuthority, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          randomSerial(),
		Subject:               pkix.Name{CommonName: name},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(caValidity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, fmt.Errorf("kvserver: create CA certificate: %w", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &certAuthority{cert: cert, key: key, pem: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}, nil
}

// issue signs a certificate for name, good for both ends of a TLS
// connection (a member is a server to its peers and a client of them);
// hosts are the DNS names and IP addresses peers and clients dial it by.
// It returns the certificate and its private key, PEM-encoded.
func (ca *certAuthority) issue(name string, hosts []string) (certPEM, keyPEM []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: randomSerial(),
		Subject:      pkix.Name{CommonName: name},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(leafValidity),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		return nil, nil, fmt.Errorf("kvserver: sign the certificate of %s: %w", name, err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), ecKeyPEM(key), nil
}

// randomSerial is a 127-bit random serial number (crypto/rand does not
// fail on the platforms Go supports; its reader blocks or aborts instead).
func randomSerial() *big.Int {
	n, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	return n
}

// loadCertAuthority reads a CA written by save.
func loadCertAuthority(certFile, keyFile string) (*certAuthority, error) {
	pair, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, fmt.Errorf("kvserver: load CA %s: %w", certFile, err)
	}
	key, ok := pair.PrivateKey.(*ecdsa.PrivateKey)
	if !ok {
		return nil, fmt.Errorf("kvserver: CA key %s is not an ECDSA key", keyFile)
	}
	cert, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		return nil, err
	}
	if !cert.IsCA {
		return nil, fmt.Errorf("kvserver: %s is not a CA certificate", certFile)
	}
	caPEM, err := os.ReadFile(certFile)
	if err != nil {
		return nil, err
	}
	return &certAuthority{cert: cert, key: key, pem: caPEM}, nil
}

// Files of a -gen-certs directory.
const (
	caCertFile = "ca.pem"
	caKeyFile  = "ca-key.pem"
)

// genCertsCommand is kvserver -gen-certs DIR NAME=HOST[,HOST...] ...: it
// writes DIR/NAME.pem and DIR/NAME-key.pem for each argument (a NAME with
// no hosts is a client's), signed by DIR/ca.pem, created with its key the
// first time. Keys are written readable by their owner only.
func genCertsCommand(dir string, args []string, out io.Writer) error {
	if len(args) == 0 {
		return errors.New("kvserver: -gen-certs DIR needs NAME=HOST[,HOST...] arguments, e.g. n1=10.0.0.1 n2=10.0.0.2 client=")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("kvserver: -gen-certs: %w", err)
	}
	certPath, keyPath := filepath.Join(dir, caCertFile), filepath.Join(dir, caKeyFile)
	ca, err := loadCertAuthority(certPath, keyPath)
	if errors.Is(err, os.ErrNotExist) {
		if ca, err = newCertAuthority("kvserver CA"); err == nil {
			err = writePEMs(certPath, ca.pem, keyPath, ecKeyPEM(ca.key))
			fmt.Fprintf(out, "wrote %s and %s\n", certPath, keyPath)
		}
	}
	if err != nil {
		return err
	}
	for _, arg := range args {
		name, hostList, ok := strings.Cut(arg, "=")
		if !ok || name == "" || strings.ContainsAny(name, `/\`) {
			return fmt.Errorf("kvserver: -gen-certs argument %q is not NAME=HOST[,HOST...]", arg)
		}
		var hosts []string
		for _, h := range strings.Split(hostList, ",") {
			if h = strings.TrimSpace(h); h != "" {
				hosts = append(hosts, h)
			}
		}
		certPEM, keyPEM, err := ca.issue(name, hosts)
		if err != nil {
			return err
		}
		cp, kp := filepath.Join(dir, name+".pem"), filepath.Join(dir, name+"-key.pem")
		if err := writePEMs(cp, certPEM, kp, keyPEM); err != nil {
			return err
		}
		fmt.Fprintf(out, "wrote %s and %s for %v\n", cp, kp, hosts)
	}
	return nil
}

func ecKeyPEM(key *ecdsa.PrivateKey) []byte {
	der, _ := x509.MarshalECPrivateKey(key) // a P-256 key always marshals
	return pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der})
}

func writePEMs(certPath string, certPEM []byte, keyPath string, keyPEM []byte) error {
	if err := os.WriteFile(keyPath, keyPEM, 0o600); err != nil {
		return fmt.Errorf("kvserver: write %s: %w", keyPath, err)
	}
	if err := os.WriteFile(certPath, certPEM, 0o644); err != nil {
		return fmt.Errorf("kvserver: write %s: %w", certPath, err)
	}
	return nil
}
