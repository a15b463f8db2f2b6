package cluster

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"time"
	"unicode"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// NotEtcdKind is what answers at an endpoint that is not etcd's client URL.
type NotEtcdKind string

// The kinds of servers that are not etcd's client URL.
const (
	HTTPServer      NotEtcdKind = "http-server"      // an HTTP server: a proxy, a web server, an exporter
	MetricsListener NotEtcdKind = "metrics-listener" // etcd's --listen-metrics-urls: /metrics and /health only
	PeerURL         NotEtcdKind = "peer-url"         // etcd's peer port (--listen-peer-urls, usually 2380)
	GRPCServer      NotEtcdKind = "grpc-server"      // a gRPC server without etcd's services
	OtherServer     NotEtcdKind = "other"            // a server that speaks neither gRPC nor HTTP
)

// NotEtcdError says that an endpoint answers, but not as etcd's client
// API: a usage error (the endpoint given is wrong), found before any
// measurement.
type NotEtcdError struct {
	// Endpoint is as given.
	Endpoint string
	// Kind is what answers there.
	Kind NotEtcdKind
	// TLS is set when the endpoint was reached over TLS.
	TLS bool
	// Seen is what gave it away, e.g. "GET /version: 404 Not Found".
	Seen string
}

func (e *NotEtcdError) Error() string {
	var what string
	switch e.Kind {
	case MetricsListener:
		what = "it is etcd's metrics listener (--listen-metrics-urls), which serves /metrics but not etcd's API"
	case PeerURL:
		what = "it is etcd's peer URL, not its client URL"
	case GRPCServer:
		what = "a gRPC server answers there, but not etcd's"
	case HTTPServer:
		what = "an HTTP server answers there, not etcd's gRPC client API"
		if e.TLS {
			what = "an HTTPS server answers there, not etcd's gRPC client API"
		}
	default:
		what = "something answers there that speaks neither gRPC nor HTTP"
		if e.TLS {
			what = "a TLS server answers there that speaks neither gRPC nor HTTP"
		}
	}
	if e.Seen != "" {
		what += " (" + e.Seen + ")"
	}
	return fmt.Sprintf("%s is not an etcd client URL: %s; give a member's client URL (etcd's --advertise-client-urls, usually port 2379)", e.Endpoint, what)
}

// h2Preface is the start of an HTTP/2 connection: the client's preface
// and an empty SETTINGS frame. etcd's client port answers it with its own
// SETTINGS frame.
const h2Preface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\x00\x00\x00\x04\x00\x00\x00\x00\x00"

// firstFrame sends HTTP/2's preface on conn and reads what comes back
// until the deadline. It returns the bytes read when they cannot start an
// HTTP/2 server's first frame (a SETTINGS frame): that server does not
// speak HTTP/2, so it is not etcd. It returns nil, nil when the server
// answered with a SETTINGS frame; io.EOF when it hung up; a net.Error that
// times out when it did not answer by the deadline; the read's error
// otherwise (a TLS alert).
func firstFrame(conn net.Conn, deadline time.Time) ([]byte, error) {
	conn.SetDeadline(deadline)
	defer conn.SetDeadline(time.Time{})
	if _, err := conn.Write([]byte(h2Preface)); err != nil {
		return nil, err
	}
	buf := make([]byte, 64)
	n, err := io.ReadAtLeast(conn, buf, 9)
	if n >= 4 && buf[3] != 0x4 {
		return buf[:n], nil
	}
	switch {
	case err == nil:
		return nil, nil
	case errors.Is(err, io.ErrUnexpectedEOF):
		return nil, io.EOF
	}
	return nil, err
}

// noALPN reports whether a TLS handshake failed because the server does
// not speak HTTP/2 (etcd's client port always does).
func noALPN(err error) bool {
	return err != nil && strings.Contains(err.Error(), "no application protocol")
}

// notGRPC reports whether a first request's error shows that the server
// speaks HTTP/2 but not gRPC, and returns what it answered.
func notGRPC(err error) (string, bool) {
	st, ok := status.FromError(err)
	if !ok {
		return "", false
	}
	msg := st.Message()
	switch st.Code() {
	case codes.Unimplemented, codes.Unknown, codes.Internal, codes.Unavailable:
	default:
		return "", false
	}
	if _, rest, ok := strings.Cut(msg, "unexpected HTTP status code received from server: "); ok {
		code, _, _ := strings.Cut(rest, ";")
		return "it answered HTTP " + strings.TrimSpace(code), true
	}
	if strings.Contains(msg, "received unexpected content-type") {
		return "it answered without gRPC's content type", true
	}
	return "", false
}

// notEtcdGRPC reports whether a gRPC server answered that it has none of
// etcd's services.
func notEtcdGRPC(err error) bool {
	return status.Code(err) == codes.Unimplemented && strings.Contains(status.Convert(err).Message(), "unknown service etcdserverpb.")
}

// looksHTTP reports whether what a server sent back to HTTP/2's preface
// is HTTP/1's: a status line, or the bare HTML page an HTTP/1.0 server
// (Python's http.server) sends to a request line it takes for HTTP/0.9.
func looksHTTP(first []byte) bool {
	head := bytes.ToLower(bytes.TrimSpace(first))
	return bytes.HasPrefix(first, []byte("HTTP/")) || bytes.HasPrefix(head, []byte("<!doctype html")) || bytes.HasPrefix(head, []byte("<html"))
}

// etcdMetricLine matches an etcd metric in Prometheus' text format.
var etcdMetricLine = regexp.MustCompile(`(?m)^(# (HELP|TYPE) )?etcd_[a-z_]+`)

// identify names what answers at ep when it does not answer as etcd's
// client API: it asks for /version, /metrics and /members over HTTP (with
// TLS when the endpoint has it), in parallel, within the dial timeout.
// first is what the server sent back to HTTP/2's preface when it was not
// HTTP/2, nil otherwise. It returns nil when nothing tells (an etcd client
// port that failed for another reason looks like etcd here: its error
// stays etcd's).
func identify(ctx context.Context, ep endpoint, o ConnOptions, tc *tls.Config, first []byte) *NotEtcdError {
	useTLS := ep.tls(o.TLSConfigured())
	if first != nil && !looksHTTP(first) {
		// It spoke first or answered HTTP/2 in its own tongue: no HTTP server
		// does (Go's HTTP client would log what it did not ask for).
		return &NotEtcdError{Endpoint: ep.raw, Kind: OtherServer, TLS: useTLS, Seen: sent(first)}
	}
	ctx, cancel := context.WithTimeout(ctx, o.dialTimeout())
	defer cancel()
	base := "http://" + ep.addr
	tr := &http.Transport{Proxy: nil, DisableKeepAlives: true, ForceAttemptHTTP2: true}
	if useTLS {
		base = "https://" + ep.addr
		// Only to name what answers: GETs of public paths, no password.
		cfg := &tls.Config{}
		if tc != nil {
			cfg = tc.Clone()
		}
		cfg.InsecureSkipVerify = true //nolint:gosec // see above
		cfg.NextProtos = nil
		tr.TLSClientConfig = cfg
	}
	defer tr.CloseIdleConnections()
	hc := &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

	type answer struct {
		status string // "" when no HTTP answer
		grpc   bool   // a gRPC server's answer (it may be etcd's)
		body   []byte
		err    error
	}
	paths := []string{"/version", "/metrics", "/members"}
	answers := make([]answer, len(paths))
	var wg sync.WaitGroup
	for i, p := range paths {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+p, nil)
			if err != nil {
				answers[i].err = err
				return
			}
			resp, err := hc.Do(req)
			if err != nil {
				answers[i].err = err
				return
			}
			defer resp.Body.Close()
			answers[i].status = resp.Status
			answers[i].grpc = strings.HasPrefix(resp.Header.Get("Content-Type"), "application/grpc") || resp.Header.Get("Grpc-Status") != ""
			if resp.StatusCode == http.StatusOK {
				answers[i].body, _ = io.ReadAll(io.LimitReader(resp.Body, 64<<10))
			}
		}()
	}
	wg.Wait()
	version, metrics, members := answers[0], answers[1], answers[2]

	var v struct {
		Server  string `json:"etcdserver"`
		Cluster string `json:"etcdcluster"`
	}
	etcdVersion := version.body != nil && json.Unmarshal(version.body, &v) == nil && v.Server != ""
	etcdMetrics := metrics.body != nil && etcdMetricLine.Match(metrics.body)
	var ms []struct {
		PeerURLs []string `json:"peerURLs"`
	}
	peerMembers := members.body != nil && json.Unmarshal(members.body, &ms) == nil && len(ms) > 0 && len(ms[0].PeerURLs) > 0

	ne := &NotEtcdError{Endpoint: ep.raw, TLS: useTLS}
	switch {
	case etcdVersion && etcdMetrics:
		return nil // etcd's client port serves both
	case version.grpc || metrics.grpc || members.grpc:
		return nil // a gRPC server: etcd's client port without HTTP (--listen-client-http-urls)
	case peerMembers:
		ne.Kind, ne.Seen = PeerURL, "it lists the members at /members as etcd's peer port does"
	case etcdVersion:
		ne.Kind, ne.Seen = PeerURL, fmt.Sprintf("it answers /version as etcd %s's peer port does", v.Server)
	case etcdMetrics:
		ne.Kind = MetricsListener
	case version.status != "":
		ne.Kind, ne.Seen = HTTPServer, "GET /version: "+version.status
	case metrics.status != "":
		ne.Kind, ne.Seen = HTTPServer, "GET /metrics: "+metrics.status
	case first != nil:
		line, _, _ := bytes.Cut(first, []byte("\r"))
		ne.Kind, ne.Seen = HTTPServer, fmt.Sprintf("it answered %q", line)
	default:
		return nil
	}
	return ne
}

// sent quotes the start of what a server sent, for the error: its first
// line, printable, at most 40 characters.
func sent(b []byte) string {
	line, _, _ := bytes.Cut(b, []byte("\n"))
	line = bytes.TrimRight(line, "\r")
	s := []rune(string(line))
	if len(s) > 40 {
		s = s[:40]
	}
	for _, r := range s {
		if !unicode.IsPrint(r) {
			return fmt.Sprintf("it sent %d bytes that are neither HTTP/2 nor HTTP", len(b))
		}
	}
	return fmt.Sprintf("it sent %q", string(s))
}
