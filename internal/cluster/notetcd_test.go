package cluster_test

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"github.com/etcdperf/etcdperf/internal/cluster"
	"github.com/etcdperf/etcdperf/internal/lab"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"

	"github.com/etcdperf/etcdperf/internal/testutil"
)

// quietServer starts an httptest server whose TLS handshake errors (our
// probes) are not logged.
func quietServer(t *testing.T, h http.Handler, tls, h2 bool) *httptest.Server {
	t.Helper()
	s := httptest.NewUnstartedServer(h)
	s.Config.ErrorLog = log.New(io.Discard, "", 0)
	switch {
	case tls:
		s.EnableHTTP2 = h2
		s.StartTLS()
	case h2:
		var p http.Protocols
		p.SetHTTP1(true)
		p.SetUnencryptedHTTP2(true)
		s.Config.Protocols = &p
		s.Start()
	default:
		s.Start()
	}
	t.Cleanup(s.Close)
	return s
}

// metricsOnly answers as etcd's --listen-metrics-urls does: /metrics and
// /health, nothing else.
var metricsOnly = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/metrics":
		fmt.Fprint(w, "# HELP etcd_server_has_leader Whether or not a leader exists. 1 is existence, 0 is not.\n"+
			"# TYPE etcd_server_has_leader gauge\netcd_server_has_leader 1\n"+
			"# HELP etcd_disk_wal_fsync_duration_seconds_count The latency distributions of fsync called by WAL.\n"+
			"etcd_disk_wal_fsync_duration_seconds_count 12\n")
	case "/health":
		fmt.Fprint(w, `{"health":"true","reason":""}`)
	default:
		http.NotFound(w, r)
	}
})

// peerOnly answers /version as etcd's peer port does, nothing else.
var peerOnly = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/version" {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprint(w, `{"etcdserver":"3.6.0","etcdcluster":"3.6.0"}`)
})

// rawServer serves each connection with serve on 127.0.0.1 and closes it
// after; it returns the address.
func rawServer(t *testing.T, serve func(c net.Conn)) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				serve(c)
			}()
		}
	}()
	return l.Addr().String()
}

// http10Server answers as Python's http.server does: HTTP/2's preface,
// a request line it takes for HTTP/0.9, gets a bare HTML error page with
// no status line; a GET gets an HTTP/1.0 404.
func http10Server(t *testing.T) string {
	return rawServer(t, func(c net.Conn) {
		r := bufio.NewReader(c)
		line, _ := r.ReadString('\n')
		if strings.HasPrefix(line, "PRI ") {
			c.Write([]byte("<!DOCTYPE HTML>\n<html><head><title>Error response</title></head><body><p>Error code: 400</p></body></html>\n"))
			return
		}
		for l, err := r.ReadString('\n'); err == nil && strings.TrimSpace(l) != ""; l, err = r.ReadString('\n') {
		}
		c.Write([]byte("HTTP/1.0 404 Not Found\r\nContent-Length: 0\r\n\r\n"))
	})
}

// bannerServer accepts connections and greets them as an SSH server does.
func bannerServer(t *testing.T) string {
	return rawServer(t, func(c net.Conn) {
		c.Write([]byte("SSH-2.0-OpenSSH_9.6\r\n"))
		io.Copy(io.Discard, c)
	})
}

// grpcServer is a gRPC server with none of etcd's services.
func grpcServer(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := grpc.NewServer()
	go s.Serve(l)
	t.Cleanup(s.Stop)
	return l.Addr().String()
}

func wantNotEtcd(t *testing.T, what string, err error, ep string, kind cluster.NotEtcdKind, inMsg ...string) {
	t.Helper()
	var ne *cluster.NotEtcdError
	if !errors.As(err, &ne) {
		t.Errorf("%s: error %v (%T), want a NotEtcdError %s", what, err, err, kind)
		return
	}
	if ne.Kind != kind || ne.Endpoint != ep {
		t.Errorf("%s: %s at %s, want %s at %s (%v)", what, ne.Kind, ne.Endpoint, kind, ep, err)
	}
	msg := err.Error()
	t.Logf("%s: %s", what, msg)
	if strings.Contains(msg, "\n") {
		t.Errorf("%s: the message has several lines: %q", what, msg)
	}
	for _, s := range append([]string{ep + " is not an etcd client URL", "2379"}, inMsg...) {
		if !strings.Contains(msg, s) {
			t.Errorf("%s: message %q lacks %q", what, msg, s)
		}
	}
}

// TestNotEtcd classifies what answers at endpoints that are not etcd's
// client URL, through both ways in: Connect (bench, check, doctor, scale)
// and Discover (metrics). Each is told fast, not after a timeout.
func TestNotEtcd(t *testing.T) {
	notFound := http.HandlerFunc(http.NotFound)
	cases := []struct {
		name  string
		ep    string
		kind  cluster.NotEtcdKind
		inMsg []string
		tls   bool // --insecure-skip-tls-verify (a bare host:port is then TLS)
	}{
		{name: "HTTP/1 404", ep: quietServer(t, notFound, false, false).Listener.Addr().String(), kind: cluster.HTTPServer,
			inMsg: []string{"an HTTP server", "not etcd's gRPC client API", "404 Not Found"}},
		{name: "h2c 404", ep: "http://" + quietServer(t, notFound, false, true).Listener.Addr().String(), kind: cluster.HTTPServer,
			inMsg: []string{"an HTTP server", "404"}},
		{name: "TLS HTTP/1 404, untrusted", ep: "https://" + quietServer(t, notFound, true, false).Listener.Addr().String(), kind: cluster.HTTPServer,
			inMsg: []string{"an HTTPS server", "404"}},
		{name: "TLS HTTP/2 404, untrusted", ep: "https://" + quietServer(t, notFound, true, true).Listener.Addr().String(), kind: cluster.HTTPServer,
			inMsg: []string{"an HTTPS server", "404"}},
		{name: "TLS HTTP/2 404", ep: quietServer(t, notFound, true, true).Listener.Addr().String(), kind: cluster.HTTPServer, tls: true,
			inMsg: []string{"an HTTPS server", "404"}},
		{name: "metrics only", ep: quietServer(t, metricsOnly, false, false).Listener.Addr().String(), kind: cluster.MetricsListener,
			inMsg: []string{"metrics listener", "--listen-metrics-urls"}},
		{name: "metrics only over TLS", ep: "https://" + quietServer(t, metricsOnly, true, false).Listener.Addr().String(), kind: cluster.MetricsListener},
		{name: "peer", ep: quietServer(t, peerOnly, false, false).Listener.Addr().String(), kind: cluster.PeerURL,
			inMsg: []string{"etcd's peer URL, not its client URL", "3.6.0"}},
		{name: "HTTP/1.0, HTML to the preface", ep: http10Server(t), kind: cluster.HTTPServer, inMsg: []string{"an HTTP server", "404"}},
		{name: "SSH", ep: bannerServer(t), kind: cluster.OtherServer, inMsg: []string{"neither gRPC nor HTTP", "SSH-2.0-OpenSSH_9.6"}},
		{name: "gRPC", ep: grpcServer(t), kind: cluster.GRPCServer, inMsg: []string{"a gRPC server answers there, but not etcd's"}},
	}
	ctx := context.Background()
	for _, c := range cases {
		o := cluster.ConnOptions{Endpoints: []string{c.ep}, DialTimeout: 3 * time.Second, InsecureSkipTLSVerify: c.tls}
		start := time.Now()
		_, err := cluster.Connect(ctx, o)
		wantNotEtcd(t, c.name+": Connect", err, c.ep, c.kind, c.inMsg...)
		if el := time.Since(start); el > time.Second {
			t.Errorf("%s: Connect took %v", c.name, el)
		}
		start = time.Now()
		_, err = cluster.Discover(ctx, o)
		wantNotEtcd(t, c.name+": Discover", err, c.ep, c.kind, c.inMsg...)
		if el := time.Since(start); el > time.Second {
			t.Errorf("%s: Discover took %v", c.name, el)
		}
	}

	// A user makes the client ask for a token first: the same answer.
	ep := quietServer(t, notFound, false, true).Listener.Addr().String()
	_, err := cluster.Connect(ctx, cluster.ConnOptions{Endpoints: []string{ep}, User: "root", Password: "x", DialTimeout: 3 * time.Second})
	wantNotEtcd(t, "h2c 404 with a user", err, ep, cluster.HTTPServer)

	// A plain URL to a TLS server that is not etcd: still a TLS mismatch.
	tlsEP := quietServer(t, notFound, true, false).Listener.Addr().String()
	_, err = cluster.Connect(ctx, cluster.ConnOptions{Endpoints: []string{tlsEP}, DialTimeout: 3 * time.Second})
	wantReason(t, "plain to TLS", err, cluster.TLSMismatch, "https://"+tlsEP)
}

// TestDiscoverNoEtcdAnswers: metrics needs one endpoint that answers as
// etcd; a listener that never answers is not one, nor an HTTP/2 server
// that never answers a request.
func TestDiscoverNoEtcdAnswers(t *testing.T) {
	hangs := quietServer(t, http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) { <-r.Context().Done() }), false, true)
	for _, ep := range []string{testutil.SilentListener(t), hangs.Listener.Addr().String()} {
		start := time.Now()
		_, err := cluster.Discover(context.Background(), cluster.ConnOptions{Endpoints: []string{ep}, DialTimeout: 700 * time.Millisecond})
		wantReason(t, "no answer", err, cluster.Timeout, ep)
		if el := time.Since(start); el > 3*time.Second {
			t.Errorf("%s took %v with a 700ms dial timeout", ep, el)
		}
	}
}

// TestNotEtcdRealMember: a real member's peer URL and metrics listener are
// named as such; its client URL still works, alone or beside a wrong one,
// and an untrusted certificate there is still said as such.
func TestNotEtcdRealMember(t *testing.T) {
	certs := testutil.NewCerts(t)
	ports, err := lab.FreePorts(3)
	if err != nil {
		t.Fatal(err)
	}
	client := fmt.Sprintf("https://127.0.0.1:%d", ports[0])
	peer := fmt.Sprintf("127.0.0.1:%d", ports[1])
	metrics := fmt.Sprintf("127.0.0.1:%d", ports[2])
	ctx := context.Background()
	m, err := lab.StartMember(ctx, lab.MemberConfig{Name: "m", DataDir: filepath.Join(t.TempDir(), "m"),
		ClientURL: client, PeerURL: "http://" + peer, ListenMetricsURL: "http://" + metrics,
		TLS: &lab.ServerTLS{CertFile: certs.ServerCert, KeyFile: certs.ServerKey}})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	o := cluster.ConnOptions{DialTimeout: 3 * time.Second, CACert: certs.CA}

	o.Endpoints = []string{"http://" + peer}
	_, err = cluster.Connect(ctx, o)
	wantNotEtcd(t, "peer port", err, "http://"+peer, cluster.PeerURL, "etcd's peer URL")
	_, err = cluster.Discover(ctx, o)
	wantNotEtcd(t, "peer port: Discover", err, "http://"+peer, cluster.PeerURL)

	o.Endpoints = []string{"http://" + metrics}
	_, err = cluster.Connect(ctx, o)
	wantNotEtcd(t, "metrics listener", err, "http://"+metrics, cluster.MetricsListener, "--listen-metrics-urls")

	o.Endpoints = []string{client}
	c, err := cluster.Connect(ctx, o)
	if err != nil {
		t.Fatalf("the client URL: %v", err)
	}
	c.Close()
	d, err := cluster.Discover(ctx, o)
	if err != nil || len(d.Members) != 1 || len(d.Unreachable) > 0 {
		t.Errorf("Discover at the client URL: %+v %v", d, err)
	}

	// etcd whose certificate is not trusted is etcd: the advice is --cacert.
	untrusted := o
	untrusted.CACert = certs.OtherCA
	_, err = cluster.Connect(ctx, untrusted)
	wantReason(t, "untrusted etcd", err, cluster.BadServerCert, "--cacert")
	_, err = cluster.Discover(ctx, untrusted)
	wantReason(t, "untrusted etcd: Discover", err, cluster.BadServerCert, "--cacert")

	o.Endpoints = []string{client, "http://" + peer}
	_, err = cluster.Discover(ctx, o)
	wantNotEtcd(t, "client and peer: Discover", err, "http://"+peer, cluster.PeerURL)
	_, err = cluster.Connect(ctx, o)
	wantNotEtcd(t, "client and peer: Connect", err, "http://"+peer, cluster.PeerURL)
}

// TestNotEtcdUntrustedGRPC: a gRPC server over TLS whose certificate is not
// trusted may be etcd (one without HTTP on its client port): the error
// stays the certificate's.
func TestNotEtcdUntrustedGRPC(t *testing.T) {
	certs := testutil.NewCerts(t)
	cert, err := tls.LoadX509KeyPair(certs.ServerCert, certs.ServerKey)
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := grpc.NewServer(grpc.Creds(credentials.NewTLS(&tls.Config{Certificates: []tls.Certificate{cert}})))
	go s.Serve(l)
	defer s.Stop()
	ep := "https://" + l.Addr().String()
	_, err = cluster.Connect(context.Background(), cluster.ConnOptions{Endpoints: []string{ep}, CACert: certs.OtherCA, DialTimeout: 3 * time.Second})
	wantReason(t, "untrusted gRPC", err, cluster.BadServerCert, "--cacert")
	// Trusted, it is a gRPC server that is not etcd.
	_, err = cluster.Connect(context.Background(), cluster.ConnOptions{Endpoints: []string{ep}, CACert: certs.CA, DialTimeout: 3 * time.Second})
	wantNotEtcd(t, "gRPC over TLS", err, ep, cluster.GRPCServer)
}
