package cluster

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

// Client is a connection to an etcd cluster that passed Connect's checks.
// It embeds the etcd client; NewConn opens more connections with the same
// options (a load generator wants several).
type Client struct {
	*clientv3.Client
	opts      ConnOptions
	tls       *tls.Config
	endpoints []endpoint
	version   string
}

// Connect checks every endpoint within the dial timeout (TCP, then TLS,
// then one etcd request, authenticated when a user is given) and returns a
// client. Its error is a *ConnError naming the endpoint and the reason:
// unreachable, timeout, TLS mismatch, untrusted server certificate,
// rejected client certificate, failed or missing authentication; or a
// *NotEtcdError when what answers is not etcd's client API (an HTTP
// server, etcd's peer port or metrics listener, something else).
func Connect(ctx context.Context, o ConnOptions) (*Client, error) {
	eps, tc, err := prepare(o)
	if err != nil {
		return nil, err
	}
	c := &Client{opts: o, tls: tc, endpoints: eps}

	errs := probeAll(ctx, eps, o, tc)
	if err := errors.Join(errs...); err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, err
	}

	cli, err := c.newClient(ctx, o.Endpoints)
	if err != nil {
		return nil, err
	}
	c.Client = cli
	// One request per endpoint proves that etcd answers there, and that the
	// user may talk to it.
	for _, ep := range eps {
		sctx, cancel := context.WithTimeout(ctx, o.dialTimeout())
		st, err := cli.Status(sctx, ep.raw)
		cancel()
		if err != nil {
			cli.Close()
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, c.explainRPC(ctx, ep, err)
		}
		if c.version == "" {
			c.version = st.Version
		}
	}
	// Without a user, every key request of an auth-enabled cluster fails:
	// say so now rather than with the first put.
	if o.User == "" {
		actx, cancel := context.WithTimeout(ctx, o.dialTimeout())
		as, err := cli.AuthStatus(actx)
		cancel()
		if err == nil && as.Enabled {
			cli.Close()
			return nil, &ConnError{Endpoint: eps[0].raw, Reason: AuthRequired, Err: errors.New("etcd has authentication enabled"),
				Hint: "pass --user (the password comes from ETCDPERF_PASSWORD, ETCDCTL_PASSWORD or a prompt)"}
		}
	}
	return c, nil
}

// prepare validates the options and returns the endpoints and the TLS
// configuration they need (nil for plain connections).
func prepare(o ConnOptions) ([]endpoint, *tls.Config, error) {
	QuietGRPC()
	if err := o.Validate(); err != nil {
		return nil, nil, err
	}
	eps := make([]endpoint, len(o.Endpoints))
	needTLS := false
	for i, raw := range o.Endpoints {
		eps[i], _ = parseEndpoint(raw)
		needTLS = needTLS || eps[i].scheme == "https"
	}
	tc, err := tlsConfig(o, needTLS)
	if err != nil {
		return nil, nil, err
	}
	return eps, tc, nil
}

// newClient opens one etcd client (one gRPC connection) to endpoints.
func (c *Client) newClient(ctx context.Context, endpoints []string) (*clientv3.Client, error) {
	cfg := clientv3.Config{
		Endpoints:   endpoints,
		DialTimeout: c.opts.dialTimeout(),
		TLS:         c.tls,
		Username:    c.opts.User,
		Password:    c.opts.Password,
		Logger:      zap.NewNop(),
		Context:     ctx,
		// Requests fail instead of waiting for a member that went away.
		RejectOldCluster: false,
	}
	cli, err := clientv3.New(cfg)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		// With a user, the client asks for a token first: that is the first
		// request.
		if ep, perr := parseEndpoint(endpoints[0]); perr == nil {
			return nil, c.explainRPC(ctx, ep, err)
		}
		return nil, classifyRPC(endpoints[0], err, c.opts)
	}
	return cli, nil
}

// explainRPC turns a failed first request into a ConnError, or a
// *NotEtcdError when what answers is not etcd's client API; when the
// endpoint is plain but the server speaks TLS, it says so.
func (c *Client) explainRPC(ctx context.Context, ep endpoint, err error) error {
	ce := classifyRPC(ep.raw, err, c.opts)
	seen, httpOnly := notGRPC(err)
	if httpOnly || ce.Reason == NotEtcd {
		if ne := identify(ctx, ep, c.opts, c.tls, nil); ne != nil {
			return ne
		}
	}
	switch {
	case httpOnly:
		return &NotEtcdError{Endpoint: ep.raw, Kind: HTTPServer, TLS: ep.tls(c.opts.TLSConfigured()), Seen: seen}
	case notEtcdGRPC(err):
		return &NotEtcdError{Endpoint: ep.raw, Kind: GRPCServer, TLS: ep.tls(c.opts.TLSConfigured()), Seen: "it has no etcd service"}
	}
	if (ce.Reason == NotEtcd || ce.Reason == Unreachable || ce.Reason == Timeout) && !ep.tls(c.opts.TLSConfigured()) && speaksTLS(ctx, ep.addr, c.opts.dialTimeout()) {
		return tlsExpected(ep)
	}
	return ce
}

// tlsExpected is the error of a plain endpoint where a TLS server listens.
func tlsExpected(ep endpoint) *ConnError {
	return &ConnError{Endpoint: ep.raw, Reason: TLSMismatch, Err: errors.New("the server speaks TLS"),
		Hint: "use https://" + ep.addr + " with --cacert (or --insecure-skip-tls-verify to test)"}
}

// NewConn opens another connection with the same options to endpoints
// (all of the client's when empty). A load generator opens one per --conns.
func (c *Client) NewConn(ctx context.Context, endpoints ...string) (*clientv3.Client, error) {
	if len(endpoints) == 0 {
		endpoints = c.opts.Endpoints
	}
	return c.newClient(ctx, endpoints)
}

// Options returns the options the client was made with.
func (c *Client) Options() ConnOptions { return c.opts }

// Version is the etcd server version of the first endpoint.
func (c *Client) Version() string { return c.version }

// TLS returns the client TLS configuration, nil for plain connections.
func (c *Client) TLS() *tls.Config { return c.tls }

// CommandTimeout is the per-request bound of the options.
func (c *Client) CommandTimeout() time.Duration { return c.opts.commandTimeout() }

// HTTPClient returns an HTTP client with the same TLS configuration, for
// etcd's /metrics and /health. It has the command timeout.
func (c *Client) HTTPClient() *http.Client {
	tr := &http.Transport{TLSClientConfig: c.tls, Proxy: nil, MaxIdleConnsPerHost: 4}
	return &http.Client{Transport: tr, Timeout: c.opts.commandTimeout()}
}

// probeAll checks the endpoints' transport in parallel, each bounded by
// the dial timeout; errs[i] is endpoint i's failure, nil when it passed.
func probeAll(ctx context.Context, eps []endpoint, o ConnOptions, tc *tls.Config) []error {
	errs := make([]error, len(eps))
	var wg sync.WaitGroup
	for i, ep := range eps {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = probe(ctx, ep, o, tc)
		}()
	}
	wg.Wait()
	return errs
}

// probe checks that ep accepts a TCP connection and, when it is reached
// over TLS, completes a handshake that accepts our certificate; then that
// the server answers HTTP/2's preface as etcd does. A server that answers
// but not as etcd's client port is a *NotEtcdError naming what it is.
func probe(ctx context.Context, ep endpoint, o ConnOptions, tc *tls.Config) error {
	ctx, cancel := context.WithTimeout(ctx, o.dialTimeout())
	defer cancel()
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", ep.addr)
	if err != nil {
		if ctx.Err() != nil && !errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return ctx.Err()
		}
		return classifyNet(ep.raw, err, o)
	}
	defer conn.Close()
	if ep.tls(o.TLSConfigured()) {
		cfg := tc.Clone()
		if cfg.ServerName == "" {
			cfg.ServerName = ep.host
		}
		cfg.NextProtos = []string{"h2"}
		tconn := tls.Client(conn, cfg)
		if dl, ok := ctx.Deadline(); ok {
			tconn.SetDeadline(dl)
		}
		if err := tconn.HandshakeContext(ctx); err != nil {
			ce := classifyTLS(ep.raw, err, o)
			// A server without HTTP/2 is not etcd; one whose certificate we
			// do not trust may not be etcd either: then say what it is.
			if noALPN(err) || ce.Reason == BadServerCert {
				if ne := identify(ctx, ep, o, tc, nil); ne != nil {
					return ne
				}
			}
			if noALPN(err) {
				return &NotEtcdError{Endpoint: ep.raw, Kind: OtherServer, TLS: true, Seen: "it does not offer HTTP/2"}
			}
			return ce
		}
		conn = tconn
	}
	// etcd answers HTTP/2's preface with its SETTINGS; a server that sends
	// anything else is not etcd. With TLS 1.3 a server rejects the client's
	// certificate after the client's handshake is done: the preface then
	// gets the alert.
	deadline, _ := ctx.Deadline()
	if ep.tls(o.TLSConfigured()) {
		deadline = time.Now().Add(min(time.Second, o.dialTimeout()))
	}
	first, err := firstFrame(conn, deadline)
	var ne net.Error
	switch {
	case err == nil:
	case ep.tls(o.TLSConfigured()):
		if errors.Is(err, io.EOF) || errors.As(err, &ne) && ne.Timeout() {
			return nil // no alert: not a rejection
		}
		return classifyTLS(ep.raw, err, o)
	case errors.As(err, &ne) && ne.Timeout():
		return classifyRPC(ep.raw, context.DeadlineExceeded, o)
	case speaksTLS(ctx, ep.addr, o.dialTimeout()):
		// A TLS server hangs up on a plain preface.
		return tlsExpected(ep)
	}
	if first != nil {
		if ne := identify(ctx, ep, o, tc, first); ne != nil {
			return ne
		}
	}
	return nil
}

// speaksTLS reports whether addr completes a TLS handshake (any
// certificate).
func speaksTLS(ctx context.Context, addr string, timeout time.Duration) bool {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	d := tls.Dialer{Config: &tls.Config{InsecureSkipVerify: true, NextProtos: []string{"h2"}}} //nolint:gosec // only a probe
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		// An alert is TLS too: e.g. a server without HTTP/2.
		return strings.Contains(err.Error(), "remote error: tls:")
	}
	conn.Close()
	return true
}

// Direct returns what a client needs to speak gRPC to endpoint itself:
// its host:port and the TLS configuration (nil for plain). It is false when
// requests need an auth token, which only etcd's client maintains.
func (c *Client) Direct(ep string) (addr string, tc *tls.Config, ok bool) {
	if c.opts.User != "" {
		return "", nil, false
	}
	e, err := parseEndpoint(ep)
	if err != nil {
		return "", nil, false
	}
	if e.tls(c.opts.TLSConfigured()) {
		tc = c.tls
		if tc == nil {
			tc = &tls.Config{MinVersion: tls.VersionTLS12}
		}
	}
	return e.addr, tc, true
}

// CountKeys returns how many keys there are under prefix.
func (c *Client) CountKeys(ctx context.Context, prefix string) (int64, error) {
	ctx, cancel := context.WithTimeout(ctx, c.CommandTimeout())
	defer cancel()
	r, err := c.Get(ctx, prefix, clientv3.WithPrefix(), clientv3.WithCountOnly())
	if err != nil {
		return 0, err
	}
	return r.Count, nil
}
