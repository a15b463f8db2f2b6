package cli

import (
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/etcdperf/etcdperf/internal/k8s"
)

// The help of 'k8s manifest' says what the node-doctor Job mounts, and how,
// as the Job's YAML does: with the default --data-dir-parent and with
// another one.
func TestK8sHelpSaysWhatNodeDoctorMounts(t *testing.T) {
	root := NewRoot()
	k8sCmd, _, err := root.Find([]string{"k8s"})
	if err != nil {
		t.Fatal(err)
	}
	manifest, _, err := root.Find([]string{"k8s", "manifest"})
	if err != nil {
		t.Fatal(err)
	}
	for _, short := range []string{k8sCmd.Short, manifest.Short} {
		if !strings.Contains(short, "--mode node-doctor") {
			t.Errorf("one-line description without node-doctor: %q", short)
		}
	}
	help := strings.Join(strings.Fields(manifest.Long), " ")
	para := help[strings.Index(help, "On the control-plane nodes' own etcd"):]
	para = para[:strings.Index(para, "Modes:")]

	// "It mounts the node's /etc and /var/log/pods read-only under /host, and
	// --data-dir-parent (/var/lib by default, ...) writable at /host/var/lib"
	ro := regexp.MustCompile(`It mounts the node's (.*?) read-only under /host`).FindStringSubmatch(para)
	if ro == nil {
		t.Fatalf("the help does not say what is mounted read-only:\n%s", para)
	}
	var saidRO []string
	for _, f := range strings.FieldsFunc(ro[1], func(r rune) bool { return r == ',' || r == ' ' }) {
		if strings.HasPrefix(f, "/") {
			saidRO = append(saidRO, f)
		}
	}
	for _, c := range []struct {
		parent   string
		extraRO  []string // read-only besides what the sentence lists
		writable string
	}{
		{"", nil, "/var/lib"},
		{"/data", []string{"/var/lib"}, "/data"},
	} {
		job, err := k8s.Job(k8s.Options{Mode: k8s.ModeNodeDoctor, DataDirParent: c.parent})
		if err != nil {
			t.Fatal(err)
		}
		spec := job.Spec.Template.Spec
		hostPath := map[string]string{}
		for _, v := range spec.Volumes {
			if v.HostPath != nil {
				hostPath[v.Name] = v.HostPath.Path
			}
		}
		var gotRO, gotRW []string
		for _, m := range spec.Containers[0].VolumeMounts {
			p, ok := hostPath[m.Name]
			if !ok {
				continue
			}
			if m.MountPath != "/host"+p {
				t.Errorf("%s mounted at %s", p, m.MountPath)
			}
			if m.ReadOnly {
				gotRO = append(gotRO, p)
			} else {
				gotRW = append(gotRW, p)
			}
		}
		wantRO := append(slices.Clone(saidRO), c.extraRO...)
		slices.Sort(gotRO)
		slices.Sort(wantRO)
		if !slices.Equal(gotRO, wantRO) {
			t.Errorf("--data-dir-parent %q: the Job mounts %v read-only, the help says %v", c.parent, gotRO, wantRO)
		}
		if len(gotRW) != 1 || gotRW[0] != c.writable || !strings.Contains(para, "writable at /host"+c.writable) {
			t.Errorf("--data-dir-parent %q: the Job mounts %v writable; the help: %s", c.parent, gotRW, para)
		}
		for _, p := range c.extraRO {
			if !strings.Contains(para, p+" is then mounted read-only") {
				t.Errorf("--data-dir-parent %q: the help does not say that %s is then mounted read-only", c.parent, p)
			}
		}
	}
}
