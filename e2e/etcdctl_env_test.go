package e2e

import (
	"context"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/etcdperf/etcdperf/internal/lab"
	"github.com/etcdperf/etcdperf/internal/promscrape"
	"github.com/etcdperf/etcdperf/internal/result"
	"github.com/etcdperf/etcdperf/internal/testutil"
)

// runEnv runs etcdperf in dir with env added to the environment, bounded
// by timeout.
func runEnv(t *testing.T, timeout time.Duration, dir string, env []string, args ...string) testutil.Run {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, testutil.Binary(t), args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	return testutil.Wait(t, cmd, ctx)
}

// envRunResult decodes the Result of a run that measured (exit 0 or 1: the
// slow disk of a shared machine may fail etcd's checks), never exit 2.
func envRunResult(t *testing.T, r testutil.Run) *result.Result {
	t.Helper()
	if r.Code != 0 && r.Code != 1 {
		t.Fatalf("exit %d\nstderr: %s", r.Code, r.Stderr)
	}
	return decodeResult(t, r.Stdout)
}

// The issue: with ETCDCTL_ENDPOINTS exported, check measured an embedded
// etcd in the current directory. It measures the member of the variable,
// says so on stderr once and in the Result, and creates nothing in the
// current directory.
func TestCheckEtcdctlEndpointsEnv(t *testing.T) {
	ep, cli := startServer(t)
	cwd := t.TempDir()
	r := runEnv(t, 2*time.Minute, cwd, []string{"ETCDCTL_ENDPOINTS=" + ep, "ETCDCTL_API=3", "ETCDCTL_DIAL_TIMEOUT=4s"},
		"check", "--duration", "3s", "-o", "json")
	res := envRunResult(t, r)
	tg := res.Target
	if tg == nil || tg.Kind != "external" || !slices.Equal(tg.Endpoints, []string{ep}) || tg.EndpointsFrom != "ETCDCTL_ENDPOINTS" || tg.DataDir != "" {
		t.Fatalf("target %+v: want the external member %s from ETCDCTL_ENDPOINTS", tg, ep)
	}
	if len(tg.Members) != 1 || !strings.Contains(tg.Members[0].ClientURL, ep) {
		t.Errorf("members %+v: want the one member at %s", tg.Members, ep)
	}
	if res.LoadParams().EndpointsFrom != "ETCDCTL_ENDPOINTS" || res.Perf == nil || res.Bench == nil || res.Bench.Ops == 0 {
		t.Errorf("params %+v, perf %+v", res.LoadParams(), res.Perf)
	}
	note := "etcdperf: endpoints from ETCDCTL_ENDPOINTS: " + ep + " (with ETCDCTL_DIAL_TIMEOUT); " +
		"loading them with check perf's profile s: 150 puts/s of 1024-byte values from 50 clients for 3s\n"
	if r.Stderr != note {
		t.Errorf("stderr %q, want %q", r.Stderr, note)
	}
	assertEmptyDir(t, cwd)
	if n := keysUnder(t, cli, "/etcdperf/"); n != 0 {
		t.Errorf("%d keys left in the member", n)
	}

	// The text view names where the endpoints came from.
	r = runEnv(t, time.Minute, cwd, []string{"ETCDCTL_ENDPOINTS=" + ep}, "bench", "put", "--total", "50")
	if r.Code != 0 && r.Code != 1 || !strings.Contains(r.Stdout, "at "+ep+" (from ETCDCTL_ENDPOINTS, 1 member)") {
		t.Errorf("exit %d, stdout %s", r.Code, r.Stdout)
	}
	assertEmptyDir(t, cwd)
}

// The issue: on a control-plane node whose root profile exports
// ETCDCTL_ENDPOINTS, the storage test (plain doctor) loaded that cluster.
// doctor loads only a cluster named with --endpoints: it judges the
// current directory with an embedded etcd, says in one line that it
// ignored the variable and how to target that cluster, and the live
// member's put count does not move.
func TestDoctorIgnoresEtcdctlEndpoints(t *testing.T) {
	ep, _ := startServer(t)
	cwd := t.TempDir()
	puts := func() float64 {
		t.Helper()
		v, ok := scrapeValue(t, "http://"+ep+"/metrics", "etcd_mvcc_put_total")
		if !ok {
			t.Fatalf("no etcd_mvcc_put_total at %s/metrics", ep)
		}
		return v
	}
	before := puts()
	r := runEnv(t, 2*time.Minute, cwd, []string{"ETCDCTL_ENDPOINTS=" + ep, "ETCDCTL_CACERT=/nonexistent/ca.crt"},
		"doctor", "--duration", "2s", "--disk-runtime", "1s", "--capacity=false", "--no-report", "-o", "json")
	res := envRunResult(t, r)
	if after := puts(); after != before {
		t.Errorf("the member at %s (ETCDCTL_ENDPOINTS) took %.0f puts during doctor; want none", ep, after-before)
	}
	if len(res.Runs) != 1 || res.Runs[0].Target == nil || res.Runs[0].Target.Kind != lab.Embedded || res.Params.(*result.DoctorParams).Endpoints != nil {
		t.Fatalf("doctor: runs %d, params %+v: want the embedded etcd on the current directory", len(res.Runs), res.Params)
	}
	want := "etcdperf: ETCDCTL_ENDPOINTS (" + ep + ") ignored: doctor judges the storage under . with an embedded etcd; " +
		"to judge that cluster instead, give it by name: --endpoints=" + ep + "\n"
	if !strings.HasPrefix(r.Stderr, want) || !strings.Contains(r.Stderr, "ETCDCTL_CACERT ignored: without --endpoints an embedded etcd is started\n") {
		t.Errorf("doctor: stderr %q, want it to begin with %q", r.Stderr, want)
	}
	assertEmptyDir(t, cwd)
}

// A flag wins over its variable, whose value is then not even read; the
// run says which variables it ignored.
func TestEtcdctlEnvFlagWins(t *testing.T) {
	ep, _ := startServer(t)
	cwd := t.TempDir()
	env := []string{"ETCDCTL_ENDPOINTS=127.0.0.1:1", "ETCDCTL_DIAL_TIMEOUT=abc"}
	r := runEnv(t, time.Minute, cwd, env, "bench", "put", "--total", "50", "--endpoints", ep, "--dial-timeout", "3s", "-o", "json")
	res := envRunResult(t, r)
	if res.Target == nil || !slices.Equal(res.Target.Endpoints, []string{ep}) || res.Target.EndpointsFrom != "" || res.LoadParams().EndpointsFrom != "" {
		t.Errorf("target %+v params %+v: want --endpoints %s", res.Target, res.Params, ep)
	}
	if want := "etcdperf: ETCDCTL_ENDPOINTS, ETCDCTL_DIAL_TIMEOUT ignored: the flags given win\n"; r.Stderr != want {
		t.Errorf("stderr %q, want %q", r.Stderr, want)
	}
	assertEmptyDir(t, cwd)
}

// Bad input from the environment: one line naming the variable, exit 2,
// nothing measured, nothing written; the embedded etcd's flags with
// endpoints from ETCDCTL_ENDPOINTS are refused with the way out.
func TestEtcdctlEnvUsageErrors(t *testing.T) {
	cwd := t.TempDir()
	other := t.TempDir()
	cases := []struct {
		env  []string
		args []string
		want string
	}{
		{[]string{"ETCDCTL_DIAL_TIMEOUT=abc"}, []string{"check", "--duration", "3s"}, `etcdperf: ETCDCTL_DIAL_TIMEOUT: "abc" is not a duration such as 5s or 500ms`},
		{[]string{"ETCDCTL_COMMAND_TIMEOUT=0"}, []string{"bench", "put", "--total", "10"}, "ETCDCTL_COMMAND_TIMEOUT must be positive"},
		{[]string{"ETCDCTL_INSECURE_SKIP_TLS_VERIFY=yes please"}, []string{"metrics"}, "ETCDCTL_INSECURE_SKIP_TLS_VERIFY"},
		{[]string{"ETCDCTL_ENDPOINTS=10.0.0.1"}, []string{"scale", "--objects", "pods=10"}, `ETCDCTL_ENDPOINTS: endpoint "10.0.0.1": want host:port`},
		{[]string{"ETCDCTL_ENDPOINTS=127.0.0.1:1"}, []string{"check", "--members", "3", "--duration", "3s"}, "--members is for the embedded etcd, but ETCDCTL_ENDPOINTS gives endpoints (127.0.0.1:1): unset it"},
		{[]string{"ETCDCTL_ENDPOINTS=127.0.0.1:1"}, []string{"bench", "put", "--fault", "1:cpu-limit=0.1"}, "--fault is for the embedded etcd, but ETCDCTL_ENDPOINTS"},
		{[]string{"ETCDCTL_ENDPOINTS=127.0.0.1:1"}, []string{"check", "--data-dir", other}, "--data-dir is for the embedded etcd, but ETCDCTL_ENDPOINTS"},
		{[]string{"ETCDCTL_ENDPOINTS=127.0.0.1:1"}, []string{"doctor", "--data-dir", other, "--no-report", "--duration", "0s"}, "--duration must be positive"},
		{[]string{"ETCDCTL_ENDPOINTS=127.0.0.1:1", "ETCDCTL_USER=u"}, []string{"bench", "put"}, "ETCDPERF_PASSWORD (or ETCDCTL_PASSWORD)"},
	}
	for _, c := range cases {
		r := runEnv(t, 30*time.Second, cwd, c.env, c.args...)
		if r.Code != 2 || strings.Count(r.Stderr, "\n") != 1 || !strings.Contains(r.Stderr, c.want) || r.Stdout != "" || len(r.Progress) != 0 {
			t.Errorf("%v %v: exit %d, stdout %q, stderr %q; want exit 2 and one line with %q", c.env, c.args, r.Code, r.Stdout, r.Stderr, c.want)
		}
	}
	assertEmptyDir(t, cwd)
	assertEmptyDir(t, other)
}

// TLS and auth from etcdctl's environment, as a kubeadm node exports them.
func TestEtcdctlEnvTLSAndAuth(t *testing.T) {
	certs := testutil.NewCerts(t)
	dir := t.TempDir()
	tlsEP := "127.0.0.1:" + itoa(testutil.FreePort(t))
	m, err := lab.StartMember(context.Background(), lab.MemberConfig{
		Name: "tls", DataDir: filepath.Join(dir, "tls"), ClientURL: "https://" + tlsEP,
		PeerURL: "http://127.0.0.1:" + itoa(testutil.FreePort(t)), LogFile: filepath.Join(dir, "tls.log"),
		TLS: &lab.ServerTLS{CertFile: certs.ServerCert, KeyFile: certs.ServerKey, TrustedCAFile: certs.CA, ClientCertAuth: true},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	cwd := t.TempDir()
	tlsEnv := func(ca string) []string {
		return []string{"ETCDCTL_ENDPOINTS=https://" + tlsEP, "ETCDCTL_CACERT=" + ca, "ETCDCTL_CERT=" + certs.ClientCert, "ETCDCTL_KEY=" + certs.ClientKey}
	}
	r := runEnv(t, time.Minute, cwd, tlsEnv(certs.CA), "bench", "put", "--total", "50", "-o", "json")
	res := envRunResult(t, r)
	if !res.LoadParams().TLS || res.Target.EndpointsFrom != "ETCDCTL_ENDPOINTS" || res.Bench.Ops != 50 {
		t.Errorf("params %v target %+v", res.Params, res.Target)
	}
	if !strings.Contains(r.Stderr, "(with ETCDCTL_CACERT, ETCDCTL_CERT, ETCDCTL_KEY)") {
		t.Errorf("stderr %q", r.Stderr)
	}
	r = runEnv(t, time.Minute, cwd, tlsEnv(certs.OtherCA), "bench", "put", "--total", "50")
	if r.Code != 2 || !strings.Contains(r.Stderr, "server certificate not trusted") {
		t.Errorf("wrong ETCDCTL_CACERT: exit %d, stderr %q", r.Code, r.Stderr)
	}

	authEP, cli := startServer(t)
	testutil.EnableAuth(t, cli, "bench", "right-pw", "/allowed/")
	auth := []string{"ETCDCTL_ENDPOINTS=" + authEP, "ETCDCTL_USER=bench", "ETCDCTL_PASSWORD=right-pw"}
	r = runEnv(t, time.Minute, cwd, auth, "bench", "put", "--total", "50", "--prefix", "/allowed/run/", "-o", "json")
	res = envRunResult(t, r)
	if res.LoadParams().User != "bench" || res.Bench.Ops != 50 || len(res.Bench.Errors) != 0 || strings.Contains(r.Stdout+r.Stderr, "right-pw") {
		t.Errorf("params %v errors %v stderr %q", res.Params, res.Bench.Errors, r.Stderr)
	}
	assertEmptyDir(t, cwd)
}

// scrapeValue reads one metric's value (summed over its series) from a
// /metrics URL.
func scrapeValue(t *testing.T, url, name string) (float64, bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := promscrape.Scrape(ctx, http.DefaultClient, url)
	if err != nil {
		t.Fatal(err)
	}
	return s.Value(name, nil)
}
