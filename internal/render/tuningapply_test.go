package render

import (
	"strings"
	"testing"

	"github.com/etcdperf/etcdperf/internal/result"
)

// The changes are written as each layout takes them, kept flags left
// out; no layout, no file; nothing to change, a file that says so.
func TestTuningFile(t *testing.T) {
	flags := []result.TunedFlag{
		{Name: "heartbeat-interval", Unit: "ms", Suggested: 500, Action: result.TuneChange, Why: "round trip 450ms: about it"},
		{Name: "election-timeout", Unit: "ms", Suggested: 5000, Action: result.TuneKeep, Why: "kept"},
		{Name: "auto-compaction-retention", SuggestedArg: "2m30s", Action: result.TuneChange, Why: "spikes"},
	}
	for _, c := range []struct {
		source, file string
		want         []string
		not          string
	}{
		{"kubeadm", "/etc/kubernetes/manifests/etcd.yaml", []string{"kind: ClusterConfiguration\n", "    - name: heartbeat-interval\n      value: \"500\"\n", "    - name: auto-compaction-retention\n      value: \"2m30s\"\n", "kubeadm init phase etcd local"}, "election-timeout\n"},
		{"k3s", "/var/lib/rancher/k3s/server/db/etcd/config", []string{"etcd-arg:\n- heartbeat-interval=500\n- auto-compaction-retention=2m30s\n", "/etc/rancher/k3s/config.yaml", "systemctl restart k3s\n"}, "election-timeout="},
		{"rke2", "/var/lib/rancher/rke2/server/db/etcd/config", []string{"/etc/rancher/rke2/config.yaml", "systemctl restart rke2-server\n"}, "election-timeout="},
		{"systemd", "/etc/default/etcd", []string{"ETCD_HEARTBEAT_INTERVAL=500\n", "ETCD_AUTO_COMPACTION_RETENTION=2m30s\n", "systemctl restart etcd"}, "ETCD_ELECTION"},
		{"systemd", "/etc/etcd/etcd.conf.yml", []string{"heartbeat-interval: 500\n", "auto-compaction-retention: \"2m30s\"\n"}, "election-timeout:"},
		{"openshift", "/etc/kubernetes/manifests/etcd-pod.yaml", []string{"cluster-etcd-operator", "controlPlaneHardwareSpeed\":\"Slower"}, "ETCD_"},
	} {
		body, ok := TuningFile(&result.Tuning{Flags: flags, Layout: &result.FlagLayout{Member: "cp-1", Source: c.source, File: c.file}})
		if !ok {
			t.Fatalf("%s: no file", c.source)
		}
		for _, w := range c.want {
			if !strings.Contains(body, w) {
				t.Errorf("%s %s: no %q in\n%s", c.source, c.file, w, body)
			}
		}
		if strings.Contains(body, c.not) {
			t.Errorf("%s %s: a kept flag is written (%q):\n%s", c.source, c.file, c.not, body)
		}
	}
	if _, ok := TuningFile(&result.Tuning{Flags: flags}); ok {
		t.Error("a file without a layout")
	}
	body, ok := TuningFile(&result.Tuning{Flags: flags[1:2], Layout: &result.FlagLayout{Member: "cp-1", Source: "kubeadm", File: "/etc/kubernetes/manifests/etcd.yaml"}})
	if !ok || !strings.Contains(body, "No change") || strings.Contains(body, "apiVersion") {
		t.Errorf("nothing to change:\n%s", body)
	}
}
