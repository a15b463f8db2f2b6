package kubescale

import (
	"errors"
	"os"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/etcdperf/etcdperf/internal/promscrape"
	"github.com/etcdperf/etcdperf/internal/result"
)

func TestParseObjects(t *testing.T) {
	cs, err := ParseObjects(DefaultObjects)
	if err != nil || len(cs) != 6 || cs[0] != (Count{"pods", 3000}) {
		t.Fatalf("the default: %v, %v", cs, err)
	}
	if cs, err := ParseObjects("Leases=1.5k, events=10"); err != nil || len(cs) != 2 || cs[0] != (Count{"leases", 1500}) {
		t.Errorf("leases=1.5k,events=10: %v, %v", cs, err)
	}
	for _, bad := range []string{"", "pods", "nodes=10", "pods=0", "pods=10,pods=20", "pods=x"} {
		if _, err := ParseObjects(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestValidate(t *testing.T) {
	kc := t.TempDir() + "/kubeconfig"
	if err := os.WriteFile(kc, []byte("apiVersion: v1\nkind: Config\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	good := func() Options {
		o := Options{Conn: Conn{Kubeconfig: kc}, Counts: []Count{{"pods", 100}}}
		o.Defaults()
		return o
	}
	if o := good(); o.Validate() != nil || !strings.HasPrefix(o.Namespace, "etcdperf-") {
		t.Fatalf("the defaults: %v, namespace %q", o.Validate(), o.Namespace)
	}
	for name, change := range map[string]func(o *Options){
		"no API server":          func(o *Options) { o.Conn = Conn{} },
		"--server without token": func(o *Options) { o.Conn = Conn{Server: "https://127.0.0.1:6443"} },
		"--context alone":        func(o *Options) { o.Conn = Conn{Server: "https://x", Token: "t", Context: "c"} },
		"missing kubeconfig":     func(o *Options) { o.Conn.Kubeconfig = kc + ".gone" },
		"fewer objects than steps": func(o *Options) {
			o.Counts, o.Steps = []Count{{"pods", 3}}, 5
		},
		"no qps":            func(o *Options) { o.QPS = -1 },
		"negative rate":     func(o *Options) { o.UpdateRate = -1 },
		"negative renewals": func(o *Options) { o.LeaseRenew = -1 },
	} {
		o := good()
		change(&o)
		if o.Validate() == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// The API server's status reason and the first line of its message name
// a failed call: what an operator greps its logs for.
func TestErrorKey(t *testing.T) {
	timeout := apierrors.NewTimeoutError("etcdserver: request timed out\nmore", 0)
	if got := errorKey(timeout); got != "Timeout: etcdserver: request timed out" {
		t.Errorf("timeout: %q", got)
	}
	internal := apierrors.NewInternalError(errors.New("etcdserver: leader changed"))
	if got := errorKey(internal); !strings.HasPrefix(got, "InternalError: ") || !strings.Contains(got, "leader changed") {
		t.Errorf("internal error: %q", got)
	}
	if !transient(timeout) || !transient(internal) || transient(apierrors.NewNotFound(schema.GroupResource{Resource: "pods"}, "x")) {
		t.Error("a timeout and an internal error are worth another try, a NotFound is not")
	}
}

func readSnap(t *testing.T, name string) promscrape.Snapshot {
	t.Helper()
	f, err := os.Open("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s, err := promscrape.Parse(f)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// Two scrapes of Kubernetes 1.37's API server around a run that created 50
// pods and 10 leases and read 20 of each: the step's calls get the API
// server's histogram over the step, and its etcd requests are read by
// operation and resource.
func TestServerLatencies(t *testing.T) {
	before, after := readSnap(t, "apiserver-before.txt"), readSnap(t, "apiserver-after.txt")
	st := result.KubeStep{Calls: []result.KubeCall{
		{Resource: "pods", Verb: "POST", Scope: ScopeResource},
		{Resource: "leases", Verb: "GET", Scope: ScopeResource},
		{Resource: "pods", Verb: "LIST", Scope: ScopeNamespace},
		{Resource: "pods/status", Verb: "PATCH", Scope: ScopeResource},
	}}
	serverLatencies(&st, before, after)
	want := map[string]int64{"POST pods": 50, "GET leases": 20, "LIST pods": 3}
	for _, c := range st.Calls {
		k := c.Verb + " " + c.Resource
		switch n, ok := want[k]; {
		case !ok:
			if c.Server != nil {
				t.Errorf("%s: the run made none, got %+v", k, c.Server)
			}
		case c.Server == nil || c.Server.Count != n:
			t.Errorf("%s: want %d calls in the API server's histogram over the step, got %+v", k, n, c.Server)
		case !c.Server.Bucketed || c.Server.Resolution != 0.005 || c.Server.P99 > 0.1:
			t.Errorf("%s: want a bucketed p99 from 5ms buckets, got %+v", k, c.Server)
		}
	}
	var creates int64
	for _, e := range st.Etcd {
		if e.Operation == "create" && e.Type == "pods" {
			creates = e.Latency.Count
		}
	}
	if creates != 50 {
		t.Errorf("the API server's etcd creates of pods over the step: %d, want 50: %+v", creates, st.Etcd)
	}
}
