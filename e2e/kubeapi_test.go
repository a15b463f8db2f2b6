package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"slices"

	clientv3 "go.etcd.io/etcd/client/v3"
	"sigs.k8s.io/yaml"

	"github.com/etcdperf/etcdperf/internal/diagnose"
	"github.com/etcdperf/etcdperf/internal/lab"
	"github.com/etcdperf/etcdperf/internal/result"
	"github.com/etcdperf/etcdperf/internal/testutil"
)

// The tests against a real Kubernetes API server (built once per run by
// testutil.KubeAPIServerPath from the module proxy; skipped with the
// reason where it cannot be built) live in this file.

// TestManifestsDryRun: every manifest `etcdperf k8s manifest` writes (the
// goldens of internal/k8s, which its tests compare with what it renders)
// is accepted by a real API server with server-side dry run (dryRun=All)
// and strict field validation, as `kubectl apply --dry-run=server` would
// do: an unknown or misplaced field, an invalid value or name fails here,
// not on the operator's cluster.
func TestManifestsDryRun(t *testing.T) {
	_, file, _, _ := runtime.Caller(0)
	goldens, err := filepath.Glob(filepath.Join(filepath.Dir(file), "..", "internal", "k8s", "testdata", "*.yaml"))
	if err != nil || len(goldens) == 0 {
		t.Fatalf("no manifests in internal/k8s/testdata: %v", err)
	}
	ep, _ := startServer(t)
	s := testutil.StartKubeAPIServer(t, "http://"+ep)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	api := newKubeAPI(t, ctx, s)
	for _, path := range goldens {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, doc := range strings.Split(string(b), "\n---\n") {
			if strings.TrimSpace(doc) == "" {
				continue
			}
			obj := decodeObject(t, doc)
			code, body := api.create(obj, true)
			if code != http.StatusCreated && code != http.StatusOK {
				t.Errorf("%s: the API server refused %s %s: HTTP %d: %s", filepath.Base(path), obj.kind, obj.name, code, statusMessage(body))
			}
		}
	}
	// The dry run sees what the YAML alone does not: a field that the Job's
	// pod template does not have is refused.
	b, err := os.ReadFile(goldens[0])
	if err != nil {
		t.Fatal(err)
	}
	bad := decodeObject(t, string(b))
	spec := bad.raw["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)
	spec["containers"].([]any)[0].(map[string]any)["imagePullPolicyy"] = "Always"
	if code, body := api.create(bad, true); code != http.StatusBadRequest || !strings.Contains(string(body), "imagePullPolicyy") {
		t.Errorf("a Job with an unknown field: HTTP %d, want 400 naming the field: %s", code, statusMessage(body))
	}
}

// kubeObject is one object of a manifest.
type kubeObject struct {
	apiVersion, kind, name, namespace string
	raw                               map[string]any
}

func decodeObject(t *testing.T, doc string) kubeObject {
	t.Helper()
	j, err := yaml.YAMLToJSON([]byte(doc))
	if err != nil {
		t.Fatalf("not YAML: %v", err)
	}
	var raw map[string]any
	if err := json.Unmarshal(j, &raw); err != nil {
		t.Fatalf("not an object: %v", err)
	}
	meta, _ := raw["metadata"].(map[string]any)
	o := kubeObject{raw: raw}
	o.apiVersion, _ = raw["apiVersion"].(string)
	o.kind, _ = raw["kind"].(string)
	o.name, _ = meta["name"].(string)
	o.namespace, _ = meta["namespace"].(string)
	if o.apiVersion == "" || o.kind == "" {
		t.Fatalf("an object without apiVersion or kind:\n%s", doc)
	}
	return o
}

// kubeAPI creates objects through the API server's REST paths, found by
// its discovery.
type kubeAPI struct {
	t   *testing.T
	ctx context.Context
	s   *testutil.KubeAPIServer
	// namespaces made for real (a dry run into a missing one is refused).
	namespaces map[string]bool
}

func newKubeAPI(t *testing.T, ctx context.Context, s *testutil.KubeAPIServer) *kubeAPI {
	return &kubeAPI{t: t, ctx: ctx, s: s, namespaces: map[string]bool{"default": true}}
}

// resource finds the plural name of kind in apiVersion, and whether it is
// namespaced.
func (a *kubeAPI) resource(apiVersion, kind string) (string, bool) {
	a.t.Helper()
	base := "/apis/" + apiVersion
	if !strings.Contains(apiVersion, "/") {
		base = "/api/" + apiVersion
	}
	code, body, err := a.s.Do(a.ctx, http.MethodGet, base, "", nil)
	if err != nil || code != http.StatusOK {
		a.t.Fatalf("discovery of %s: HTTP %d, %v: %s", apiVersion, code, err, body)
	}
	var list struct {
		Resources []struct {
			Name       string `json:"name"`
			Kind       string `json:"kind"`
			Namespaced bool   `json:"namespaced"`
		} `json:"resources"`
	}
	if err := json.Unmarshal(body, &list); err != nil {
		a.t.Fatal(err)
	}
	for _, r := range list.Resources {
		if r.Kind == kind && !strings.Contains(r.Name, "/") {
			return base + "/" + r.Name, r.Namespaced
		}
	}
	a.t.Fatalf("the API server has no %s in %s", kind, apiVersion)
	return "", false
}

// create posts an object (with dryRun=All when dry) and returns the
// status and the body.
func (a *kubeAPI) create(o kubeObject, dry bool) (int, []byte) {
	a.t.Helper()
	path, namespaced := a.resource(o.apiVersion, o.kind)
	if namespaced {
		ns := o.namespace
		if ns == "" {
			ns = "default"
		}
		a.ensureNamespace(ns)
		base := "/apis/" + o.apiVersion
		if !strings.Contains(o.apiVersion, "/") {
			base = "/api/" + o.apiVersion
		}
		path = base + "/namespaces/" + ns + strings.TrimPrefix(path, base)
	}
	q := "?fieldValidation=Strict"
	if dry {
		q += "&dryRun=All"
	}
	b, err := json.Marshal(o.raw)
	if err != nil {
		a.t.Fatal(err)
	}
	code, body, err := a.s.Do(a.ctx, http.MethodPost, path+q, "application/json", b)
	if err != nil {
		a.t.Fatalf("POST %s: %v", path, err)
	}
	return code, body
}

func (a *kubeAPI) ensureNamespace(ns string) {
	a.t.Helper()
	if a.namespaces[ns] {
		return
	}
	body := fmt.Appendf(nil, `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":%q}}`, ns)
	code, out, err := a.s.Do(a.ctx, http.MethodPost, "/api/v1/namespaces", "application/json", body)
	if err != nil || (code != http.StatusCreated && code != http.StatusConflict) {
		a.t.Fatalf("create namespace %s: HTTP %d, %v: %s", ns, code, err, out)
	}
	a.namespaces[ns] = true
}

// statusMessage is the message of a Kubernetes Status body.
func statusMessage(body []byte) string {
	var st struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(body, &st) == nil && st.Message != "" {
		return st.Message
	}
	return string(bytes.TrimSpace(body))
}

// TestKubeAPIServerBuilds builds the API server the tests in this file
// run (or finds it built); .ci/run runs it before the other tests.
func TestKubeAPIServerBuilds(t *testing.T) {
	path, skip, err := testutil.KubeAPIServerPath()
	if err != nil {
		t.Fatal(err)
	}
	if skip != "" {
		t.Skip(skip)
	}
	out, err := exec.Command(path, "--version").CombinedOutput()
	if err != nil || !strings.Contains(string(out), testutil.KubeAPIServerVersion) {
		t.Fatalf("%s --version: %v: %s", path, err, out)
	}
}

// TestKubeScale runs `etcdperf scale` through a real API server on an
// etcd member, twice: on a plain directory a small density run holds the
// SLO on API call latency; then, with the same member's data behind a
// slow disk (every fsync 1s late, as a saturated shared disk can be), the
// API server's calls break the SLO and the verdict names etcd's disk
// with its WAL fsync as evidence. Both runs leave nothing behind in the
// API server.
func TestKubeScale(t *testing.T) {
	if err := lab.SlowDiskSupported(); err != nil {
		t.Skipf("skipped: %v", err)
	}
	dir := testutil.QuietDirOr(t, "512M")
	ep := fmt.Sprintf("127.0.0.1:%d", testutil.FreePort(t))
	peer := fmt.Sprintf("http://127.0.0.1:%d", testutil.FreePort(t))
	// The member's files are in data/real: where --slow-fsync keeps them
	// when it serves them through its slow view.
	data := filepath.Join(dir, "data")
	_, stopPlain := startServerWith(t, filepath.Join(data, "real"), filepath.Join(dir, "etcd.log"), ep, peer)
	s := testutil.StartKubeAPIServer(t, "http://"+ep)

	scaleRun := func(objects string, more ...string) *result.Result {
		t.Helper()
		t0 := time.Now()
		defer func() { t.Logf("scale --objects %s: %s", objects, time.Since(t0).Round(time.Second)) }()
		ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
		defer cancel()
		args := append([]string{"scale", "--kubeconfig", s.Kubeconfig, "--endpoints", ep, "--objects", objects, "--steps", "2", "--clients", "4",
			"--list-interval", "1s", "--lease-renew", "1s", "-o", "json"}, more...)
		r := testutil.Wait(t, exec.CommandContext(ctx, testutil.Binary(t), args...), ctx)
		if r.Code == 2 || r.Stdout == "" {
			t.Fatalf("scale: exit %d: %s", r.Code, r.Stderr)
		}
		return decodeResult(t, r.Stdout)
	}

	// The updates run on tickers beside the creations, whose steps last
	// about a second here: a pod's status every 50ms, each of the 5
	// leases of step 1 renewed every 200ms (every 40ms in all), so that
	// a step holds some of each (at --lease-renew 1s, a CI run's second
	// step held no renewal).
	res := scaleRun("pods=60,services=10,configmaps=10,secrets=10,leases=10,events=60", "--update-rate", "20", "--lease-renew", "200ms")
	t.Logf("plain directory: %s: %s", res.Verdict, res.Summary)
	k := res.Kube
	if k == nil || len(k.Steps) != 2 || k.Steps[1].Objects != 160 {
		t.Fatalf("plain directory: want 2 steps up to 160 objects: %+v", k)
	}
	if res.Verdict != result.Pass {
		t.Errorf("plain directory: verdict %s, want pass; findings:\n%s", res.Verdict, findingLines(res))
	}
	if !k.ServerMetrics || k.QPS <= 0 || k.Burst <= 0 || !strings.Contains(res.Summary, "QPS") {
		t.Errorf("plain directory: the API server's metrics read %v, QPS %g, burst %d, summary %q", k.ServerMetrics, k.QPS, k.Burst, res.Summary)
	}
	// Every verb the run makes, timed by etcdperf and by the API server in
	// the same step (the leases are renewed from the second step on, once
	// some exist).
	seen := map[string]bool{}
	for _, st := range k.Steps {
		for _, c := range st.Calls {
			if c.Client != nil && c.Client.Count > 0 && c.Server != nil && c.Server.Count > 0 {
				seen[c.Verb+" "+c.Resource] = true
			}
		}
	}
	for _, want := range []string{"POST pods", "POST secrets", "POST leases", "PUT leases", "PATCH pods/status", "GET configmaps", "LIST pods"} {
		if !seen[want] {
			t.Errorf("plain directory: no %s timed by both etcdperf and the API server in a step: %v", want, seen)
		}
	}
	if st := k.Steps[1]; st.WALFsync == nil || st.WALFsync.Count == 0 || len(st.Etcd) == 0 {
		t.Errorf("plain directory: step 2 has no etcd WAL fsync histogram or API server etcd requests: %+v", st)
	}
	assertNamespaceGone(t, s, k.Namespace)

	// Ctrl-C midway: the partial Result, incomplete, and the namespace
	// deleted all the same.
	out := filepath.Join(t.TempDir(), "partial.json")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, testutil.Binary(t), "scale", "--kubeconfig", s.Kubeconfig, "--objects", "pods=50000", "--steps", "2", "-o", out)
	done := make(chan testutil.Run, 1)
	go func() { done <- testutil.Wait(t, cmd, ctx) }()
	time.Sleep(4 * time.Second)
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	r := <-done
	part, err := result.ReadFile(out)
	if err != nil {
		t.Fatalf("interrupted: no partial Result (exit %d, %s): %v", r.Code, r.Stderr, err)
	}
	if r.Code != 2 || !strings.Contains(r.Stderr, "interrupted") || part.Verdict != result.Incomplete || part.Kube == nil {
		t.Errorf("interrupted: exit %d, stderr %q, verdict %s; want 2, interrupted, incomplete, and the kube section", r.Code, r.Stderr, part.Verdict)
	} else {
		assertNamespaceGone(t, s, part.Kube.Namespace)
	}

	// The same member on a slow disk: the API server reconnects to it.
	stopPlain()
	t0 := time.Now()
	cli, _ := startServerWith(t, data, filepath.Join(dir, "etcd-slow.log"), ep, peer, "--slow-fsync", "1s")
	waitReady(t, cli, ep, s)
	t.Logf("etcd on a slow disk, the API server reading from it: %s", time.Since(t0).Round(time.Second))
	// Few calls: each waits seconds for etcd.
	res = scaleRun("pods=2,secrets=2,leases=2", "--update-rate", "1", "--gets", "1", "--lists", "1")
	t.Logf("slow disk: %s: %s\n%s", res.Verdict, res.Summary, findingLines(res))
	if res.Verdict != result.Fail {
		t.Errorf("slow disk: verdict %s, want fail", res.Verdict)
	}
	for _, st := range res.Kube.Steps {
		for _, c := range st.Calls {
			for msg, n := range c.Errors {
				t.Logf("slow disk: step %d: %d %s %s failed: %s", st.Step, n, c.Verb, c.Resource, msg)
			}
		}
	}
	if f, ok := findingOf(res, "api_slo_broken"); !ok || !strings.Contains(f.Title, "step 1") {
		t.Errorf("slow disk: no api_slo_broken finding at step 1:\n%s", findingLines(res))
	}
	if len(res.Kube.Steps) != 1 || res.Kube.Stopped == "" {
		t.Errorf("slow disk: want the run stopped after step 1, got %d steps, stopped %q", len(res.Kube.Steps), res.Kube.Stopped)
	}
	if f, ok := findingOf(res, diagnose.FindingMemberDisk); !ok || f.Cause != result.CauseDisk ||
		!slices.ContainsFunc(f.Evidence, func(e result.Evidence) bool { return strings.Contains(e.What, "WAL fsync") && e.Observed >= 1 }) {
		t.Errorf("slow disk: the verdict does not name etcd's disk with its WAL fsync as evidence:\n%s", findingLines(res))
	}
	assertNamespaceGone(t, s, res.Kube.Namespace)
}

// assertNamespaceGone: a run's namespace and its objects are gone (a bare
// API server has no namespace controller: a namespace it was asked to
// delete may stay Terminating, but empty).
func assertNamespaceGone(t *testing.T, s *testutil.KubeAPIServer, ns string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, p := range []string{"/api/v1/namespaces/" + ns + "/pods", "/api/v1/namespaces/" + ns + "/secrets", "/apis/coordination.k8s.io/v1/namespaces/" + ns + "/leases"} {
		code, body, err := s.Do(ctx, http.MethodGet, p, "", nil)
		if err != nil {
			t.Fatal(err)
		}
		var l struct {
			Items []any `json:"items"`
		}
		if code != http.StatusOK || json.Unmarshal(body, &l) != nil || len(l.Items) > 0 {
			t.Errorf("%s after the run: HTTP %d, %d items", p, code, len(l.Items))
		}
	}
	code, body, err := s.Do(ctx, http.MethodGet, "/api/v1/namespaces/"+ns, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if code == http.StatusOK && !strings.Contains(string(body), `"deletionTimestamp"`) {
		t.Errorf("namespace %s is still there and not being deleted", ns)
	}
}

// waitReady waits for the member at ep to have a leader and the API
// server to read from it again, up to a minute. (Its /readyz may stay
// unready on a slow etcd: its etcd check times out after 2s.)
func waitReady(t *testing.T, cli *clientv3.Client, ep string, s *testutil.KubeAPIServer) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		st, err := cli.Status(ctx, ep)
		code := 0
		if err == nil && st.Leader != 0 {
			code, _, err = s.Do(ctx, http.MethodGet, "/api/v1/namespaces/default", "", nil)
		}
		cancel()
		if code == http.StatusOK {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("etcd at %s with a leader and the API server reading from it: not within a minute (last: HTTP %d, %v)", ep, code, err)
		}
		time.Sleep(500 * time.Millisecond)
	}
}
