package testutil

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"
)

// Certs are PEM files of a test PKI: a CA, a server certificate for
// 127.0.0.1 and localhost, and a client certificate, all signed by the CA,
// plus a second CA that signed nothing here.
type Certs struct {
	CA, OtherCA           string
	ServerCert, ServerKey string
	ClientCert, ClientKey string
}

// NewCerts writes a fresh test PKI into a temporary directory (crypto/x509,
// no external tool).
func NewCerts(t testing.TB) Certs {
	t.Helper()
	dir := t.TempDir()
	caKey, caCert, caDER := newCA(t, "etcdperf test CA")
	_, _, otherDER := newCA(t, "etcdperf other CA")
	c := Certs{
		CA:         writePEM(t, dir, "ca.pem", "CERTIFICATE", caDER),
		OtherCA:    writePEM(t, dir, "other-ca.pem", "CERTIFICATE", otherDER),
		ServerCert: filepath.Join(dir, "server.pem"), ServerKey: filepath.Join(dir, "server-key.pem"),
		ClientCert: filepath.Join(dir, "client.pem"), ClientKey: filepath.Join(dir, "client-key.pem"),
	}
	leaf(t, caKey, caCert, "etcd server", x509.ExtKeyUsageServerAuth, c.ServerCert, c.ServerKey)
	leaf(t, caKey, caCert, "etcdperf client", x509.ExtKeyUsageClientAuth, c.ClientCert, c.ClientKey)
	return c
}

var serial atomic.Int64

func nextSerial() *big.Int { return big.NewInt(serial.Add(1)) }

func newCA(t testing.TB, name string) (*ecdsa.PrivateKey, *x509.Certificate, []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: nextSerial(), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return key, cert, der
}

func leaf(t testing.TB, caKey *ecdsa.PrivateKey, ca *x509.Certificate, name string, usage x509.ExtKeyUsage, certPath, keyPath string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: nextSerial(), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, DNSNames: []string{"localhost"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	writePEM(t, filepath.Dir(certPath), filepath.Base(certPath), "CERTIFICATE", der)
	writePEM(t, filepath.Dir(keyPath), filepath.Base(keyPath), "EC PRIVATE KEY", kb)
}

func writePEM(t testing.TB, dir, name, typ string, der []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}
