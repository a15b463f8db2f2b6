package cluster

import (
	"crypto/tls"
	"errors"
	"fmt"
	"os"

	"github.com/etcdperf/etcdperf/internal/tlsutil"
)

// tlsConfig builds the client TLS configuration of o, or nil when no TLS
// option is set and no endpoint asks for https.
func tlsConfig(o ConnOptions, needed bool) (*tls.Config, error) {
	if !o.TLSConfigured() && !needed {
		return nil, nil
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: o.InsecureSkipTLSVerify}
	if o.CACert != "" {
		pool, err := tlsutil.CAPool(o.CACert)
		if err != nil {
			return nil, err
		}
		cfg.RootCAs = pool
	}
	if o.Cert != "" {
		pair, err := tls.LoadX509KeyPair(o.Cert, o.Key)
		if err != nil {
			var pe *os.PathError
			if errors.As(err, &pe) {
				return nil, fmt.Errorf("--cert/--key: %w", err)
			}
			return nil, fmt.Errorf("--cert %s and --key %s do not make a key pair: %w", o.Cert, o.Key, err)
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	return cfg, nil
}
