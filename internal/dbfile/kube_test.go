package dbfile

import (
	"testing"
	"unicode/utf8"

	"github.com/etcdperf/etcdperf/internal/result"
)

// Keys as kube-apiserver (and OpenShift's API servers) write them, and
// others.
func TestClassify(t *testing.T) {
	for _, c := range []struct {
		key                       string
		resource, prefix, ns, cls string
	}{
		{"/registry/pods/default/web-1", "pods", "/registry/pods/", "default", result.DBClassKubernetes},
		{"/registry/minions/node-1", "minions", "/registry/minions/", "", result.DBClassKubernetes},
		{"/registry/services/specs/kube-system/kube-dns", "services/specs", "/registry/services/specs/", "kube-system", result.DBClassKubernetes},
		{"/registry/services/endpoints/default/kubernetes", "services/endpoints", "/registry/services/endpoints/", "default", result.DBClassKubernetes},
		{"/registry/events/default/web-1.17a3b", "events", "/registry/events/", "default", result.DBClassKubernetes},
		{"/registry/leases/kube-node-lease/node-1", "leases", "/registry/leases/", "kube-node-lease", result.DBClassKubernetes},
		{"/registry/ranges/serviceips", "ranges", "/registry/ranges/", "", result.DBClassKubernetes},
		{"/registry/apiextensions.k8s.io/customresourcedefinitions/certificates.cert-manager.io",
			"apiextensions.k8s.io/customresourcedefinitions", "/registry/apiextensions.k8s.io/customresourcedefinitions/", "", result.DBClassCRD},
		{"/registry/apiregistration.k8s.io/apiservices/v1.apps", "apiregistration.k8s.io/apiservices", "/registry/apiregistration.k8s.io/apiservices/", "", result.DBClassKubernetes},
		{"/registry/wgpolicyk8s.io/policyreports/team-a/polr-1", "wgpolicyk8s.io/policyreports", "/registry/wgpolicyk8s.io/policyreports/", "team-a", result.DBClassCustom},
		{"/registry/cilium.io/ciliumidentities/12345", "cilium.io/ciliumidentities", "/registry/cilium.io/ciliumidentities/", "", result.DBClassCustom},
		{"/kubernetes.io/pods/openshift-etcd/etcd-0", "pods", "/kubernetes.io/pods/", "openshift-etcd", result.DBClassKubernetes},
		{"/openshift.io/routes/default/web", "routes", "/openshift.io/routes/", "default", result.DBClassKubernetes},
		{"/myapp/config/a", "/myapp", "/myapp/", "", result.DBClassOther},
		{"foo/bar", "foo", "foo/", "", result.DBClassOther},
		{"flat", "(top level)", "", "", result.DBClassOther},
		{"/registry/", "/registry", "/registry/", "", result.DBClassOther},
		{"/registryx/pods/a", "/registryx", "/registryx/", "", result.DBClassOther},
	} {
		p := Classify([]byte(c.key), DefaultKubePrefixes)
		if p.Resource != c.resource || p.Prefix != c.prefix || p.Namespace != c.ns || p.Class != c.cls {
			t.Errorf("%s: %+v, want %s %s %q %s", c.key, p, c.resource, c.prefix, c.ns, c.cls)
		}
	}
}

// FuzzClassify: any key gets a resource, and a resource's prefix is the
// start of the key.
func FuzzClassify(f *testing.F) {
	for _, s := range []string{"/registry/pods/a/b", "/registry/a.b/c/d/e", "/registry/services/specs/x", "/x", "", "/", "//", "/registry//"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, key string) {
		p := Classify([]byte(key), DefaultKubePrefixes)
		if p.Resource == "" && p.Class != result.DBClassKubernetes || p.Class == "" {
			t.Fatalf("%q: %+v", key, p)
		}
		if p.Prefix != "" && len(key) >= len(p.Prefix) && key[:len(p.Prefix)] != p.Prefix && utf8.ValidString(key) {
			t.Fatalf("%q: prefix %q is not the key's", key, p.Prefix)
		}
	})
}
