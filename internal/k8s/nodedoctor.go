package k8s

import (
	"fmt"
	"path"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ModeNodeDoctor runs `etcdperf doctor --node` on control-plane nodes: it
// finds the node's own etcd member (kubeadm's static pod, k3s/RKE2,
// OpenShift, a systemd unit) from the node's files, reads its certificates
// and logs, and probes the disk beside its data dir.
const ModeNodeDoctor Mode = "node-doctor"

// DefaultDataDirParent is the node directory that node-doctor mounts
// writable: the parent of the usual data dirs (/var/lib/etcd of kubeadm,
// /var/lib/rancher/... of k3s and RKE2).
const DefaultDataDirParent = "/var/lib"

// Node directories node-doctor mounts read-only.
const (
	// nodeEtc holds every distribution's configuration: kubeadm's
	// /etc/kubernetes (manifests, pki; OpenShift's static-pod-resources),
	// systemd's /etc/etcd and units, k3s/RKE2's /etc/rancher. It is
	// mounted whole because a hostPath of a directory that a distribution
	// lacks either keeps the pod from starting (type Directory) or is
	// created empty on the node (no type), which the pod must never do.
	nodeEtc = "/etc"
	// nodePodLogs holds the member's log when it runs as a pod.
	nodePodLogs = "/var/log/pods"
	// nodeVarLib holds k3s/RKE2's files (/var/lib/rancher); mounted
	// read-only when --data-dir-parent does not cover it.
	nodeVarLib = "/var/lib"
)

// controlPlaneLabels are the node labels of the nodes that run etcd: the
// control plane's (kubeadm's control-plane, master before 1.25) and
// Rancher's etcd role. A label selector on their existence, not on a value:
// kubeadm sets "" and k3s/RKE2 set "true".
var controlPlaneLabels = []string{
	"node-role.kubernetes.io/control-plane",
	"node-role.kubernetes.io/master",
	"node-role.kubernetes.io/etcd",
}

// dataDirParent is the writable node directory of node-doctor.
func (o *Options) dataDirParent() string {
	if o.DataDirParent == "" {
		return DefaultDataDirParent
	}
	return path.Clean(o.DataDirParent)
}

// validateNodeDoctor checks what is particular to node-doctor; the common
// checks (names, resources, times) are Validate's.
func (o *Options) validateNodeDoctor() []error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if o.StorageClass != "" || !o.Size.IsZero() {
		bad("--storage-class and --size do not go with --mode node-doctor: it runs on the control-plane nodes' own disks")
	}
	if o.EtcdDataDir != "" || o.HostDir != "" || o.RunAsUser != nil {
		bad("--etcd-data-dir, --host-dir and --run-as-user do not go with --mode node-doctor: it finds etcd's data dir on the node itself; --data-dir-parent sets the node directory it may write in")
	}
	if o.OnNodes() && o.Parallel != 0 && o.Parallel != len(o.Nodes) {
		bad("--parallel %d does not match the %d node(s) of --node: the Job runs one pod per node (leave --parallel out)", o.Parallel, len(o.Nodes))
	}
	p := o.DataDirParent
	switch {
	case p == "":
	case !path.IsAbs(p):
		bad("--data-dir-parent %q must be an absolute path on the node, e.g. %s", p, DefaultDataDirParent)
	case path.Clean(p) == "/":
		bad("--data-dir-parent cannot be /: etcdperf does not mount a node's root writable; give the directory that holds etcd's data dir, e.g. %s", DefaultDataDirParent)
	default:
		for _, ro := range []string{"/proc", "/sys", "/dev", nodeEtc, nodePodLogs} {
			if inside(path.Clean(p), ro) || inside(ro, path.Clean(p)) {
				bad("--data-dir-parent %s: the pod mounts %s read-only or not at all; give the directory that holds etcd's data dir, e.g. %s", p, ro, DefaultDataDirParent)
				break
			}
		}
	}
	return errs
}

// nodeDoctorPodSpec is the pod of node-doctor.
func nodeDoctorPodSpec(o *Options, labels map[string]string) corev1.PodSpec {
	spec := corev1.PodSpec{
		RestartPolicy:                corev1.RestartPolicyNever,
		AutomountServiceAccountToken: ptr(false),
		EnableServiceLinks:           ptr(false),
		PriorityClassName:            o.PriorityClass,
		NodeSelector:                 map[string]string{corev1.LabelOSStable: "linux"},
		// The member listens for clients on 127.0.0.1:2379 of the node
		// (kubeadm's --listen-client-urls); only the node's network
		// namespace reaches it. ClusterFirstWithHostNet keeps cluster DNS.
		HostNetwork: true,
		DNSPolicy:   corev1.DNSClusterFirstWithHostNet,
		// doctor --node measures the member's process through /proc
		// (CPU time, threads, its command line): the process must be
		// visible, which needs the node's PID namespace. Reading
		// /proc/PID/stat, status, cmdline and cgroup of another process
		// needs no capability, so the container stays unprivileged.
		HostPID: true,
		// Root, with every capability dropped: the certificates' keys
		// under /etc/kubernetes/pki, the pod logs and /var/lib are root's
		// (mode 0600/0640/0755), readable and writable by their owner.
		SecurityContext: &corev1.PodSecurityContext{
			RunAsUser:      ptr(int64(0)),
			RunAsGroup:     ptr(int64(0)),
			RunAsNonRoot:   ptr(false),
			SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
		},
		Tolerations: controlPlaneTaints,
		Containers:  []corev1.Container{container(o)},
		Volumes: []corev1.Volume{{
			Name:         "tmp",
			VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{SizeLimit: &tmpSize}},
		}},
	}
	for _, m := range nodeDoctorMounts(o) {
		spec.Volumes = append(spec.Volumes, hostVolume(m.name, m.dir))
	}
	if o.OnNodes() {
		spec.Affinity = nodeAffinity(o, labels)
		return spec
	}
	// Any node that runs etcd; node selector terms are ORed.
	var terms []corev1.NodeSelectorTerm
	for _, l := range controlPlaneLabels {
		terms = append(terms, corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: l, Operator: corev1.NodeSelectorOpExists}}})
	}
	spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: terms},
	}}
	if o.Parallel > 1 {
		// One pod per node: a second pod would measure the same member.
		spec.Affinity.PodAntiAffinity = &corev1.PodAntiAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
				LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{LabelInstance: labels[LabelInstance]}},
				TopologyKey:   corev1.LabelHostname,
			}},
		}
	}
	return spec
}

type nodeMount struct {
	name, dir string
	readOnly  bool
}

// nodeDoctorMounts are the node's directories that node-doctor mounts
// under /host: the configuration and logs read-only, and the directory
// holding etcd's data dir writable, for the probe directory that doctor
// creates beside the data dir and removes.
func nodeDoctorMounts(o *Options) []nodeMount {
	parent := o.dataDirParent()
	ms := []nodeMount{
		{"node-etc", nodeEtc, true},
		{"node-pod-logs", nodePodLogs, true},
	}
	if !inside(nodeVarLib, parent) {
		ms = append(ms, nodeMount{"node-var-lib", nodeVarLib, true})
	}
	return append(ms, nodeMount{"data-dir-parent", parent, false})
}

// nodeDoctorAnnotations say what the pod reads, writes and why it runs as
// root with the node's namespaces.
func nodeDoctorAnnotations(o *Options) map[string]string {
	var ro []string
	for _, m := range nodeDoctorMounts(o) {
		if m.readOnly {
			ro = append(ro, m.dir)
		}
	}
	return map[string]string{
		AnnotationHost: fmt.Sprintf("%s are mounted read-only under %s; %s is mounted writable at %s, where doctor creates a probe directory beside etcd's data dir, writes only files of its own there and removes it.",
			strings.Join(ro, ", "), hostRoot, o.dataDirParent(), hostRoot+o.dataDirParent()),
		AnnotationRoot: "the certificates' keys, the pod logs and " + o.dataDirParent() + " belong to root: that needs uid 0. hostNetwork reaches the member on 127.0.0.1:2379; hostPID shows its process. Not privileged: all capabilities are dropped, privilege escalation is off, the root file system is read-only.",
	}
}
