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
	"testing"
	"time"

	"sigs.k8s.io/yaml"

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
