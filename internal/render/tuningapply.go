package render

import (
	"fmt"
	"io"
	"path"
	"strconv"
	"strings"

	"github.com/etcdperf/etcdperf/internal/result"
)

// TuningFile is the tuning's changes as the node's own layout takes them
// (t.Layout, from doctor --node): a file to merge into the configuration
// that sets the member's flags, its comments saying where and how to
// apply it, one member at a time. Nothing is changed on the node. It is
// false without a layout.
func TuningFile(t *result.Tuning) (string, bool) {
	if t == nil || t.Layout == nil {
		return "", false
	}
	var b strings.Builder
	changes := t.Changes()
	fmt.Fprintf(&b, "# etcd's flags for %s (%s, %s), as etcdperf doctor --node computed them from what it measured.\n", t.Layout.Member, t.Layout.Source, t.Layout.File)
	b.WriteString("# Nothing was changed on the node. Set the same flags on every member, one member at a time,\n")
	b.WriteString("# waiting for it to be healthy again (etcdctl endpoint health) before the next.\n")
	if len(changes) == 0 {
		b.WriteString("# No change: every flag computed suits what was measured.\n")
		return b.String(), true
	}
	for _, f := range changes {
		fmt.Fprintf(&b, "#   --%s=%s: %s\n", f.Name, FlagArg(f), firstClause(f.Why))
	}
	switch t.Layout.Source {
	case "kubeadm":
		kubeadmFile(&b, changes)
	case "k3s", "rke2":
		rancherFile(&b, t.Layout.Source, changes)
	case "openshift":
		openshiftFile(&b, changes)
	default:
		systemdFile(&b, t.Layout.File, changes)
	}
	return b.String(), true
}

// kubeadmFile writes the changes as a kubeadm ClusterConfiguration's
// etcd.local.extraArgs (v1beta4's list), and how kubeadm applies them.
func kubeadmFile(b *strings.Builder, changes []result.TunedFlag) {
	b.WriteString(`# kubeadm keeps etcd's flags in its ClusterConfiguration: merge etcd.local.extraArgs below into the
# ClusterConfiguration of the kubeadm-config ConfigMap (kubectl -n kube-system edit configmap kubeadm-config)
# and into your kubeadm configuration file; then, on each control-plane node in turn, write etcd's static pod
# again with: kubeadm init phase etcd local --config <that file>
# (or add the flags to the command of /etc/kubernetes/manifests/etcd.yaml: kubelet restarts etcd, and the next
# kubeadm upgrade writes that file again from the ClusterConfiguration). kubeadm v1beta3 takes extraArgs as a
# map (heartbeat-interval: "500").
apiVersion: kubeadm.k8s.io/v1beta4
kind: ClusterConfiguration
etcd:
  local:
    extraArgs:
`)
	for _, f := range changes {
		fmt.Fprintf(b, "    - name: %s\n      value: %q\n", f.Name, FlagArg(f))
	}
}

// rancherFile writes the changes as k3s' or RKE2's etcd-arg list in
// their config.yaml.
func rancherFile(b *strings.Builder, dist string, changes []result.TunedFlag) {
	fmt.Fprintf(b, `# %[1]s passes etcd-arg to its embedded etcd: merge the list below into /etc/rancher/%[1]s/config.yaml on
# every server node (keep the etcd-arg entries it already has), then restart one server at a time:
# systemctl restart %[2]s
etcd-arg:
`, dist, rancherUnit(dist))
	for _, f := range changes {
		fmt.Fprintf(b, "- %s=%s\n", f.Name, FlagArg(f))
	}
}

func rancherUnit(dist string) string {
	if dist == "rke2" {
		return "rke2-server"
	}
	return dist
}

// openshiftFile says that OpenShift's etcd operator owns the flags, and
// which of its presets fits the timers.
func openshiftFile(b *strings.Builder, changes []result.TunedFlag) {
	b.WriteString("# OpenShift's cluster-etcd-operator writes etcd's static pod and undoes edits to it. It sets the timers\n" +
		"# from the cluster's control plane hardware speed: Standard (heartbeat 100ms, election 1s) or Slower\n" +
		"# (500ms, 2.5s); the quota and compaction it sets itself.\n")
	for _, f := range changes {
		if f.Name != "heartbeat-interval" {
			continue
		}
		if f.Suggested <= 500 {
			b.WriteString("# The suggested heartbeat fits Slower:\n#   oc patch etcd/cluster --type=merge -p '{\"spec\":{\"controlPlaneHardwareSpeed\":\"Slower\"}}'\n")
		} else {
			b.WriteString("# The suggested heartbeat is over Slower's 500ms: no preset fits; the members are too far apart for OpenShift's control plane.\n")
		}
	}
}

// systemdFile writes the changes for an etcd run by systemd: an
// environment file's ETCD_ variables, or etcd's YAML config file's keys.
func systemdFile(b *strings.Builder, file string, changes []result.TunedFlag) {
	if ext := path.Ext(file); ext == ".yml" || ext == ".yaml" {
		fmt.Fprintf(b, "# Merge these keys into %s on every member, then restart one at a time: systemctl restart etcd\n", file)
		for _, f := range changes {
			v := FlagArg(f)
			if _, err := strconv.ParseFloat(v, 64); err != nil {
				v = strconv.Quote(v)
			}
			fmt.Fprintf(b, "%s: %s\n", f.Name, v)
		}
		return
	}
	fmt.Fprintf(b, "# Set these variables in %s on every member, then restart one at a time: systemctl restart etcd\n", file)
	for _, f := range changes {
		fmt.Fprintf(b, "ETCD_%s=%s\n", strings.ToUpper(strings.ReplaceAll(f.Name, "-", "_")), FlagArg(f))
	}
}

// firstClause is a reason's first clause, for a one-line comment.
func firstClause(why string) string {
	if i := strings.Index(why, ": "); i > 0 {
		return why[:i]
	}
	return why
}

// tuningApplyText writes the file TuningFile makes, indented, under the
// tuning section.
func tuningApplyText(w io.Writer, t *result.Tuning) {
	body, ok := TuningFile(t)
	if !ok || len(t.Changes()) == 0 {
		return
	}
	fmt.Fprintf(w, "  ready to apply (--tuning-out FILE writes it):\n")
	for _, line := range strings.Split(strings.TrimRight(body, "\n"), "\n") {
		fmt.Fprintf(w, "    %s\n", line)
	}
}
