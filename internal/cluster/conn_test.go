package cluster_test

import (
	"context"
	"errors"
	"fmt"
	"github.com/etcdperf/etcdperf/internal/cluster"
	"github.com/etcdperf/etcdperf/internal/lab"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/etcdperf/etcdperf/internal/testutil"
)

func wantReason(t *testing.T, what string, err error, reason cluster.Reason, inMsg ...string) {
	t.Helper()
	var ce *cluster.ConnError
	if !errors.As(err, &ce) {
		t.Errorf("%s: error %v (%T), want a ConnError %s", what, err, err, reason)
		return
	}
	if ce.Reason != reason {
		t.Errorf("%s: reason %s (%v), want %s", what, ce.Reason, err, reason)
	}
	for _, s := range inMsg {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("%s: message %q lacks %q", what, err, s)
		}
	}
}

func TestConnectUnreachableAndSilent(t *testing.T) {
	ports, err := lab.FreePorts(1)
	if err != nil {
		t.Fatal(err)
	}
	refused := fmt.Sprintf("127.0.0.1:%d", ports[0])
	start := time.Now()
	_, err = cluster.Connect(context.Background(), cluster.ConnOptions{Endpoints: []string{refused}, DialTimeout: 2 * time.Second})
	wantReason(t, "refused", err, cluster.Unreachable, refused, "connection refused", "--endpoints")
	if time.Since(start) > time.Second {
		t.Errorf("a refused connection took %v", time.Since(start))
	}

	// A listener that accepts and never answers: the dial timeout ends it.
	silent := testutil.SilentListener(t)
	start = time.Now()
	_, err = cluster.Connect(context.Background(), cluster.ConnOptions{Endpoints: []string{silent}, DialTimeout: 700 * time.Millisecond})
	el := time.Since(start)
	wantReason(t, "silent", err, cluster.Timeout, silent)
	if el > 2*time.Second {
		t.Errorf("a silent endpoint took %v with a 700ms dial timeout", el)
	}
	// The same over TLS: the handshake is bounded too.
	start = time.Now()
	_, err = cluster.Connect(context.Background(), cluster.ConnOptions{Endpoints: []string{"https://" + silent}, DialTimeout: 700 * time.Millisecond, InsecureSkipTLSVerify: true})
	wantReason(t, "silent TLS", err, cluster.Timeout)
	if el := time.Since(start); el > 2*time.Second {
		t.Errorf("a silent TLS endpoint took %v", el)
	}
}

func TestConnectOptionErrors(t *testing.T) {
	cases := []struct {
		o    cluster.ConnOptions
		want string
	}{
		{cluster.ConnOptions{}, "no endpoint"},
		{cluster.ConnOptions{Endpoints: []string{"127.0.0.1"}}, "host:port"},
		{cluster.ConnOptions{Endpoints: []string{"unix://x:1"}}, "not supported"},
		{cluster.ConnOptions{Endpoints: []string{"127.0.0.1:2379"}, Cert: "c.pem"}, "--cert and --key"},
		{cluster.ConnOptions{Endpoints: []string{"127.0.0.1:2379"}, CACert: "/nonexistent/ca.pem"}, "--cacert"},
		{cluster.ConnOptions{Endpoints: []string{"127.0.0.1:2379"}, Password: "x"}, "without --user"},
	}
	for _, c := range cases {
		_, err := cluster.Connect(context.Background(), c.o)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.o, err, c.want)
		}
	}
}

func TestConnectTLS(t *testing.T) {
	certs := testutil.NewCerts(t)
	dir := t.TempDir()
	ports, err := lab.FreePorts(4)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	m, err := lab.StartMember(ctx, lab.MemberConfig{
		Name: "tls", DataDir: filepath.Join(dir, "tls"),
		ClientURL: fmt.Sprintf("https://127.0.0.1:%d", ports[0]), PeerURL: fmt.Sprintf("http://127.0.0.1:%d", ports[1]),
		TLS: &lab.ServerTLS{CertFile: certs.ServerCert, KeyFile: certs.ServerKey, TrustedCAFile: certs.CA, ClientCertAuth: true},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	plain, err := lab.StartMember(ctx, lab.MemberConfig{Name: "plain", DataDir: filepath.Join(dir, "plain"),
		ClientURL: fmt.Sprintf("http://127.0.0.1:%d", ports[2]), PeerURL: fmt.Sprintf("http://127.0.0.1:%d", ports[3])})
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	tlsEP := fmt.Sprintf("127.0.0.1:%d", ports[0])
	plainEP := fmt.Sprintf("127.0.0.1:%d", ports[2])
	good := cluster.ConnOptions{Endpoints: []string{tlsEP}, CACert: certs.CA, Cert: certs.ClientCert, Key: certs.ClientKey, DialTimeout: 3 * time.Second}

	c, err := cluster.Connect(ctx, good)
	if err != nil {
		t.Fatalf("connect with the right certificates: %v", err)
	}
	if _, err := c.Put(ctx, "/etcdperf/tls/k", "v"); err != nil {
		t.Error(err)
	}
	ms, err := c.Members(ctx)
	if err != nil || len(ms) != 1 || !strings.HasPrefix(ms[0].MetricsURL, "https://") {
		t.Errorf("members over TLS: %+v %v", ms, err)
	} else if resp, err := c.HTTPClient().Get(ms[0].MetricsURL); err != nil {
		t.Errorf("metrics over TLS with the client's TLS config: %v", err)
	} else {
		resp.Body.Close()
	}
	c.Close()

	wrongCA := good
	wrongCA.CACert = certs.OtherCA
	_, err = cluster.Connect(ctx, wrongCA)
	wantReason(t, "wrong CA", err, cluster.BadServerCert, tlsEP, "--cacert")

	noCert := good
	noCert.Cert, noCert.Key = "", ""
	_, err = cluster.Connect(ctx, noCert)
	wantReason(t, "no client certificate", err, cluster.BadClientCert, "--cert")

	notCert := good
	notCert.Cert, notCert.Key = certs.CA, certs.ClientKey
	if _, err = cluster.Connect(ctx, notCert); err == nil || !strings.Contains(err.Error(), "key pair") {
		t.Errorf("a certificate that does not match its key: %v", err)
	}

	_, err = cluster.Connect(ctx, cluster.ConnOptions{Endpoints: []string{"http://" + tlsEP}, DialTimeout: 3 * time.Second})
	wantReason(t, "plain to a TLS port", err, cluster.TLSMismatch, "https://")

	_, err = cluster.Connect(ctx, cluster.ConnOptions{Endpoints: []string{plainEP}, CACert: certs.CA, DialTimeout: 3 * time.Second})
	wantReason(t, "TLS to a plain port", err, cluster.TLSMismatch, "does not speak TLS")
}

func TestConnectAuth(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	tg, err := lab.Open(ctx, lab.TargetOptions{DataDir: dir, RunID: "auth"})
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	testutil.EnableAuth(t, tg.Client().Client, "bench", "s3cret", "/etcdperf/")
	ep := tg.Members()[0].ClientURL
	o := cluster.ConnOptions{Endpoints: []string{ep}, User: "bench", Password: "s3cret", DialTimeout: 3 * time.Second}
	c, err := cluster.Connect(ctx, o)
	if err != nil {
		t.Fatalf("connect as bench: %v", err)
	}
	if _, err := c.Put(ctx, "/etcdperf/auth/k", "v"); err != nil {
		t.Errorf("put as bench: %v", err)
	}
	conn, err := c.NewConn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Get(ctx, "/etcdperf/auth/k"); err != nil {
		t.Errorf("a second connection is not authenticated: %v", err)
	}
	conn.Close()
	c.Close()

	bad := o
	bad.Password = "wrong"
	_, err = cluster.Connect(ctx, bad)
	wantReason(t, "wrong password", err, cluster.AuthFailed, `"bench"`, ep)
	if strings.Contains(err.Error(), "wrong\"") || strings.Contains(err.Error(), "s3cret") {
		t.Errorf("the error shows a password: %v", err)
	}
	_, err = cluster.Connect(ctx, cluster.ConnOptions{Endpoints: []string{ep}, DialTimeout: 3 * time.Second})
	wantReason(t, "no user", err, cluster.AuthRequired, "--user")
}
