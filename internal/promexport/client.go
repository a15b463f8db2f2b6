// Package promexport reads etcd's history from a Prometheus server with
// range queries (the Prometheus HTTP API) and aligns the series into one
// table: one row per timestamp, one column per series, as etcd health test
// plans do by hand with curl, jq and paste.
package promexport

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/etcdperf/etcdperf/internal/tlsutil"
	"github.com/prometheus/client_golang/api"
	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"
)

// PasswordEnv is the environment variable that holds the basic-auth
// password for --user. The password is never taken from the command line,
// echoed or written into a Result.
const PasswordEnv = "ETCDPERF_PROM_PASSWORD"

// Options say how to reach a Prometheus server.
type Options struct {
	// URL is the server's base URL, e.g. http://prometheus:9090 (a path
	// prefix such as /prometheus is kept).
	URL string
	// User and Password are basic-auth credentials.
	User, Password string
	// BearerToken is sent as "Authorization: Bearer ...".
	BearerToken string
	// CACert is a PEM file of CAs to trust for https; InsecureSkipVerify
	// skips the server certificate check.
	CACert             string
	InsecureSkipVerify bool
	// Timeout bounds each query (default 30s).
	Timeout time.Duration
}

// Client runs range queries against one Prometheus server.
type Client struct {
	api     v1.API
	url     string
	timeout time.Duration
}

// CheckURL validates a Prometheus base URL: http or https, a host, and no
// credentials, query or fragment in it.
func CheckURL(raw string) (*url.URL, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("--url %q: want the Prometheus server's base URL, e.g. http://prometheus:9090", raw)
	}
	if u.User != nil {
		return nil, fmt.Errorf("--url: do not put credentials in the URL; use --user with %s, or --bearer-token-file", PasswordEnv)
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("--url %q: want the base URL without a query or fragment", u.Redacted())
	}
	if strings.HasSuffix(strings.TrimRight(u.Path, "/"), "/api/v1") {
		return nil, fmt.Errorf("--url %q: give the base URL, without /api/v1", u.String())
	}
	return u, nil
}

// New returns a client for o.URL. It does not contact the server.
func New(o Options) (*Client, error) {
	u, err := CheckURL(o.URL)
	if err != nil {
		return nil, err
	}
	if o.User != "" && o.BearerToken != "" {
		return nil, fmt.Errorf("give --user or --bearer-token-file, not both")
	}
	tr := &http.Transport{
		Proxy:               http.ProxyFromEnvironment,
		DialContext:         (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		TLSHandshakeTimeout: 10 * time.Second,
		MaxIdleConnsPerHost: 4,
	}
	if u.Scheme == "https" {
		tc := &tls.Config{InsecureSkipVerify: o.InsecureSkipVerify}
		if o.CACert != "" {
			pool, err := tlsutil.CAPool(o.CACert)
			if err != nil {
				return nil, err
			}
			tc.RootCAs = pool
		}
		tr.TLSClientConfig = tc
	}
	var rt http.RoundTripper = tr
	switch {
	case o.User != "":
		rt = &authRoundTripper{next: tr, user: o.User, password: o.Password}
	case o.BearerToken != "":
		rt = &authRoundTripper{next: tr, bearer: o.BearerToken}
	}
	c, err := api.NewClient(api.Config{Address: u.String(), RoundTripper: rt})
	if err != nil {
		return nil, fmt.Errorf("--url %q: %w", u.String(), err)
	}
	timeout := o.Timeout
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	return &Client{api: v1.NewAPI(c), url: u.String(), timeout: timeout}, nil
}

// URL is the server's base URL.
func (c *Client) URL() string { return c.url }

// authRoundTripper adds basic or bearer authorization to every request.
type authRoundTripper struct {
	next           http.RoundTripper
	user, password string
	bearer         string
}

func (a *authRoundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	r := req.Clone(req.Context())
	if a.bearer != "" {
		r.Header.Set("Authorization", "Bearer "+a.bearer)
	} else {
		r.SetBasicAuth(a.user, a.password)
	}
	return a.next.RoundTrip(r)
}

// ReadToken reads a bearer token file (as Prometheus' own
// bearer_token_file): the whole file, surrounding white space removed.
func ReadToken(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("--bearer-token-file: %w", err)
	}
	tok := strings.TrimSpace(string(b))
	if tok == "" {
		return "", fmt.Errorf("--bearer-token-file %s is empty", path)
	}
	if strings.ContainsAny(tok, "\r\n") {
		return "", fmt.Errorf("--bearer-token-file %s holds more than one line", path)
	}
	return tok, nil
}

// QueryError is a query that Prometheus could not run, with its own words.
type QueryError struct {
	Query Query
	// Type is Prometheus' error type (bad_data, execution, timeout...).
	Type string
	Msg  string
}

func (e *QueryError) Error() string {
	return fmt.Sprintf("query %s (%s) rejected by Prometheus: %s: %s", e.Query.Name, e.Query.Expr, e.Type, e.Msg)
}

// Range runs q over r and returns its series with Prometheus' warnings.
func (c *Client) Range(ctx context.Context, q Query, r Resolved) (model.Matrix, []string, error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	val, warns, err := c.api.QueryRange(ctx, q.Expr, v1.Range{Start: r.Start, End: r.End, Step: r.Step}, v1.WithTimeout(c.timeout))
	if err != nil {
		return nil, warns, c.explain(ctx, q, err)
	}
	switch v := val.(type) {
	case model.Matrix:
		return v, warns, nil
	case nil:
		return nil, warns, nil
	default:
		return nil, warns, fmt.Errorf("query %s: Prometheus answered a %s, not a range of series", q.Name, val.Type())
	}
}

// Instant evaluates q at time t.
func (c *Client) Instant(ctx context.Context, q Query, t time.Time) (model.Vector, []string, error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	val, warns, err := c.api.Query(ctx, q.Expr, t, v1.WithTimeout(c.timeout))
	if err != nil {
		return nil, warns, c.explain(ctx, q, err)
	}
	switch v := val.(type) {
	case model.Vector:
		return v, warns, nil
	case *model.Scalar:
		return model.Vector{{Metric: model.Metric{}, Value: v.Value, Timestamp: v.Timestamp}}, warns, nil
	case nil:
		return nil, warns, nil
	default:
		return nil, warns, fmt.Errorf("query %s: Prometheus answered a %s, not a vector", q.Name, val.Type())
	}
}

// explain turns a client error into one for people: an unreachable server,
// refused credentials, a URL that is not Prometheus, or Prometheus' own
// message about a bad query.
func (c *Client) explain(ctx context.Context, q Query, err error) error {
	if errors.Is(err, context.Canceled) && ctx.Err() != nil && !errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return err
	}
	var ae *v1.Error
	if errors.As(err, &ae) {
		switch ae.Type {
		case v1.ErrBadData, v1.ErrExec:
			return &QueryError{Query: q, Type: string(ae.Type), Msg: ae.Msg}
		case v1.ErrTimeout, v1.ErrCanceled:
			return fmt.Errorf("query %s timed out in Prometheus at %s (--timeout %s): %s; narrow the range, raise --step or --timeout", q.Name, c.url, c.timeout, ae.Msg)
		case v1.ErrClient:
			switch {
			case strings.Contains(ae.Msg, "401"), strings.Contains(ae.Msg, "403"):
				return fmt.Errorf("credentials refused by Prometheus at %s (%s): check --user and $%s, or --bearer-token-file", c.url, ae.Msg, PasswordEnv)
			case strings.Contains(ae.Msg, "404"):
				return fmt.Errorf("%s has no Prometheus API (%s under /api/v1/): is --url the Prometheus server's base URL?", c.url, ae.Msg)
			}
			return fmt.Errorf("query %s refused by Prometheus at %s: %s", q.Name, c.url, ae.Msg)
		case v1.ErrBadResponse:
			return fmt.Errorf("%s did not answer like a Prometheus server (%s): is --url right?", c.url, ae.Msg)
		}
		return fmt.Errorf("query %s failed in Prometheus at %s: %s", q.Name, c.url, ae.Error())
	}
	if errors.Is(err, context.DeadlineExceeded) || ctx.Err() != nil {
		return fmt.Errorf("no answer from Prometheus at %s to query %s within the --timeout of %s", c.url, q.Name, c.timeout)
	}
	var ne net.Error
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return fmt.Errorf("cannot reach Prometheus at %s: connection refused; is it running and is --url right?", c.url)
	case errors.As(err, &ne) && ne.Timeout():
		return fmt.Errorf("cannot reach Prometheus at %s: timed out; check --url and the network", c.url)
	}
	var ce *tls.CertificateVerificationError
	if errors.As(err, &ce) {
		return fmt.Errorf("cannot reach Prometheus at %s: its certificate is not trusted (%v); give the CA with --cacert, or --insecure-skip-tls-verify", c.url, ce.Err)
	}
	var de *net.DNSError
	if errors.As(err, &de) {
		return fmt.Errorf("cannot reach Prometheus at %s: unknown host %s; check --url", c.url, de.Name)
	}
	return fmt.Errorf("cannot reach Prometheus at %s: %w", c.url, err)
}
