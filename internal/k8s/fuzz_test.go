package k8s

import (
	"bytes"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/yaml"
)

// FuzzJob feeds the flag values of `k8s manifest` to Job: it never panics,
// and whatever it accepts is a Job that decodes back strictly, with names
// and labels Kubernetes accepts.
func FuzzJob(f *testing.F) {
	f.Add("cp-1", "", "", "", "", "/var/lib/etcd", "", "", 0, "cpu=1")
	f.Add("a.b.c,d", "", "", "x", "kube-system", "/data/etcd/", "/data", "", 2, "")
	f.Add("", "gp3", "10Gi", "", "", "", "", "doctor", 3, "memory=1Gi,cpu=250m")
	f.Add("", "fast", "1e3Mi", strings.Repeat("n", 70), "ns", "", "", "disk", 1000, "cpu=0")
	f.Add("cp-1", "", "", "", "", "/var/lib/etcd", "/var/lib/etcd", "", 0, "memory=1")
	f.Fuzz(func(t *testing.T, nodes, sc, size, name, ns, dataDir, hostDir, mode string, parallel int, limits string) {
		o := Options{StorageClass: sc, Name: name, Namespace: ns, EtcdDataDir: dataDir, HostDir: hostDir, Mode: Mode(mode), Parallel: parallel}
		if nodes != "" {
			o.Nodes = strings.Split(nodes, ",")
		}
		if size != "" {
			q, err := resource.ParseQuantity(size)
			if err != nil {
				return
			}
			o.Size = q
		}
		if limits != "" {
			l, err := ParseResources(limits)
			if err != nil {
				return
			}
			o.Limits = l
		}
		job, err := Job(o)
		if err != nil {
			return
		}
		var buf bytes.Buffer
		if err := WriteYAML(&buf, job); err != nil {
			t.Fatal(err)
		}
		var back batchv1.Job
		if err := yaml.UnmarshalStrict(buf.Bytes(), &back); err != nil {
			t.Fatalf("%v\n%s", err, buf.String())
		}
		pods := int(*back.Spec.Completions)
		if msgs := validation.IsDNS1123Label(back.Name); len(msgs) > 0 || len(back.Name) > maxNameLen(pods) {
			t.Fatalf("job name %q: %v", back.Name, msgs)
		}
		for k, v := range back.Spec.Template.Labels {
			if msgs := validation.IsValidLabelValue(v); len(msgs) > 0 {
				t.Fatalf("label %s=%q: %v", k, v, msgs)
			}
		}
		c := back.Spec.Template.Spec.Containers[0]
		for name, req := range c.Resources.Requests {
			if lim, ok := c.Resources.Limits[name]; ok && req.Cmp(lim) > 0 {
				t.Fatalf("request %s above limit", name)
			}
		}
		for _, v := range back.Spec.Template.Spec.Volumes {
			if v.HostPath != nil && (v.HostPath.Path == "/" || !strings.HasPrefix(v.HostPath.Path, "/")) {
				t.Fatalf("hostPath %q", v.HostPath.Path)
			}
		}
	})
}
