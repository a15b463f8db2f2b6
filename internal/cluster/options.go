package cluster

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// DefaultDialTimeout bounds how long Connect waits for an endpoint, as
// etcdctl's --dial-timeout.
const DefaultDialTimeout = 5 * time.Second

// DefaultCommandTimeout bounds one request, as etcdctl's --command-timeout.
const DefaultCommandTimeout = 5 * time.Second

// ConnOptions say how to reach an etcd cluster. The names follow etcdctl's
// flags. Password is never logged nor written into a Result.
type ConnOptions struct {
	// Endpoints are host:port or http(s)://host:port client URLs.
	Endpoints []string
	// CACert verifies the servers' certificates (etcdctl --cacert); empty
	// means the system roots.
	CACert string
	// Cert and Key identify the client (etcdctl --cert, --key).
	Cert, Key string
	// InsecureSkipTLSVerify accepts any server certificate.
	InsecureSkipTLSVerify bool
	// User and Password authenticate with etcd's auth (etcdctl --user).
	User, Password string
	// DialTimeout bounds connecting; 0 means DefaultDialTimeout.
	DialTimeout time.Duration
	// CommandTimeout bounds one request; 0 means DefaultCommandTimeout.
	CommandTimeout time.Duration
	// EndpointsFrom names where Endpoints came from when it was not a
	// flag (ETCDCTL_ENDPOINTS, etcdctl's environment), for the Result.
	EndpointsFrom string
}

// TLSConfigured reports whether any TLS option is set.
func (o ConnOptions) TLSConfigured() bool {
	return o.CACert != "" || o.Cert != "" || o.Key != "" || o.InsecureSkipTLSVerify
}

func (o ConnOptions) dialTimeout() time.Duration {
	if o.DialTimeout > 0 {
		return o.DialTimeout
	}
	return DefaultDialTimeout
}

func (o ConnOptions) commandTimeout() time.Duration {
	if o.CommandTimeout > 0 {
		return o.CommandTimeout
	}
	return DefaultCommandTimeout
}

// Validate checks the options without touching the network.
func (o ConnOptions) Validate() error {
	if len(o.Endpoints) == 0 {
		return errors.New("no endpoint given")
	}
	for _, ep := range o.Endpoints {
		if _, err := parseEndpoint(ep); err != nil {
			return err
		}
	}
	if (o.Cert == "") != (o.Key == "") {
		return errors.New("--cert and --key go together: give both or neither")
	}
	if o.DialTimeout < 0 || o.CommandTimeout < 0 {
		return errors.New("timeouts cannot be negative")
	}
	if o.Password != "" && o.User == "" {
		return errors.New("a password was given without --user")
	}
	return nil
}

// endpoint is a parsed client endpoint.
type endpoint struct {
	raw    string // as given
	host   string // host without port
	addr   string // host:port
	scheme string // "http", "https" or "" (bare host:port)
}

// tls reports whether the endpoint is reached over TLS: https://, or a
// bare host:port when TLS options are given (as etcdctl does).
func (e endpoint) tls(tlsConfigured bool) bool {
	return e.scheme == "https" || (e.scheme == "" && tlsConfigured)
}

func parseEndpoint(ep string) (endpoint, error) {
	e := endpoint{raw: ep}
	s := strings.TrimSpace(ep)
	if s == "" {
		return e, errors.New("an empty endpoint was given")
	}
	if strings.Contains(s, "://") {
		u, err := url.Parse(s)
		if err != nil {
			return e, fmt.Errorf("endpoint %q is not a URL: %v", ep, err)
		}
		if u.Scheme != "http" && u.Scheme != "https" {
			return e, fmt.Errorf("endpoint %q: scheme %q is not supported (use http://, https:// or host:port)", ep, u.Scheme)
		}
		e.scheme = u.Scheme
		s = u.Host
	}
	host, port, err := net.SplitHostPort(s)
	if err != nil || port == "" {
		return e, fmt.Errorf("endpoint %q: want host:port, e.g. 127.0.0.1:2379", ep)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return e, fmt.Errorf("endpoint %q: port %q is not a number from 1 to 65535", ep, port)
	}
	e.host, e.addr = host, s
	return e, nil
}
