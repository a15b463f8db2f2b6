// Package tlsutil holds the TLS pieces that several clients share (etcd,
// Prometheus).
package tlsutil

import (
	"crypto/x509"
	"fmt"
	"os"
)

// CAPool reads the PEM file named by --cacert into a certificate pool.
func CAPool(path string) (*x509.CertPool, error) {
	pem, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("--cacert: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("--cacert %s holds no PEM certificate", path)
	}
	return pool, nil
}
