package k8s

import (
	"bytes"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/yaml"

	"github.com/etcdperf/etcdperf/internal/testutil"
)

// manifest builds the Job, writes it as YAML, compares it with its golden
// file and decodes it back strictly (an unknown field is an error).
func manifest(t *testing.T, golden string, o Options) (*batchv1.Job, string) {
	t.Helper()
	job, err := Job(o)
	if err != nil {
		t.Fatalf("Job(%+v): %v", o, err)
	}
	var buf bytes.Buffer
	if err := WriteYAML(&buf, job); err != nil {
		t.Fatal(err)
	}
	testutil.Golden(t, golden, buf.Bytes())
	var back batchv1.Job
	if err := yaml.UnmarshalStrict(buf.Bytes(), &back); err != nil {
		t.Fatalf("the YAML does not decode into a batch/v1 Job: %v\n%s", err, buf.String())
	}
	return &back, buf.String()
}

func onlyContainer(t *testing.T, job *batchv1.Job) corev1.Container {
	t.Helper()
	cs := job.Spec.Template.Spec.Containers
	if len(cs) != 1 || len(job.Spec.Template.Spec.InitContainers) != 0 {
		t.Fatalf("want one container, got %d (+%d init)", len(cs), len(job.Spec.Template.Spec.InitContainers))
	}
	return cs[0]
}

func volume(t *testing.T, spec corev1.PodSpec, name string) corev1.Volume {
	t.Helper()
	for _, v := range spec.Volumes {
		if v.Name == name {
			return v
		}
	}
	t.Fatalf("no volume %q in %+v", name, spec.Volumes)
	return corev1.Volume{}
}

func mounts(c corev1.Container) map[string]corev1.VolumeMount {
	m := map[string]corev1.VolumeMount{}
	for _, vm := range c.VolumeMounts {
		m[vm.Name] = vm
	}
	return m
}

// checkCommon asserts what every Job has: indexed, bounded, cleaned up,
// hardened, and printing its Result as JSON.
func checkCommon(t *testing.T, job *batchv1.Job, pods int32) {
	t.Helper()
	s := job.Spec
	if job.APIVersion != "batch/v1" || job.Kind != "Job" {
		t.Errorf("type %s/%s", job.APIVersion, job.Kind)
	}
	if s.CompletionMode == nil || *s.CompletionMode != batchv1.IndexedCompletion {
		t.Errorf("completionMode %v, want Indexed", s.CompletionMode)
	}
	if s.Completions == nil || *s.Completions != pods || s.Parallelism == nil || *s.Parallelism != pods {
		t.Errorf("completions %v parallelism %v, want %d", s.Completions, s.Parallelism, pods)
	}
	if pods == 1 {
		if s.BackoffLimit == nil || *s.BackoffLimit != 0 || s.BackoffLimitPerIndex != nil {
			t.Errorf("one pod: backoffLimit %v perIndex %v, want 0 and none", s.BackoffLimit, s.BackoffLimitPerIndex)
		}
	} else if s.BackoffLimitPerIndex == nil || *s.BackoffLimitPerIndex != 0 || s.BackoffLimit != nil {
		// backoffLimit 0 would stop every index at the first failure.
		t.Errorf("%d pods: backoffLimitPerIndex %v backoffLimit %v, want 0 and none", pods, s.BackoffLimitPerIndex, s.BackoffLimit)
	}
	if s.TTLSecondsAfterFinished == nil || *s.TTLSecondsAfterFinished <= 0 {
		t.Errorf("ttlSecondsAfterFinished %v", s.TTLSecondsAfterFinished)
	}
	if s.ActiveDeadlineSeconds == nil || *s.ActiveDeadlineSeconds <= 0 {
		t.Errorf("activeDeadlineSeconds %v", s.ActiveDeadlineSeconds)
	}
	ps := s.Template.Spec
	if ps.RestartPolicy != corev1.RestartPolicyNever {
		t.Errorf("restartPolicy %q", ps.RestartPolicy)
	}
	if ps.AutomountServiceAccountToken == nil || *ps.AutomountServiceAccountToken {
		t.Error("the pod gets an API token it does not need")
	}
	if ps.SecurityContext == nil || ps.SecurityContext.SeccompProfile == nil || ps.SecurityContext.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
		t.Errorf("pod securityContext %+v, want seccomp RuntimeDefault", ps.SecurityContext)
	}
	// node-doctor shares the node's network and PID namespace on purpose
	// (checkNodeDoctor); no other mode shares any.
	if job.Labels[LabelComponent] != string(ModeNodeDoctor) && (ps.HostNetwork || ps.HostPID || ps.HostIPC) {
		t.Error("the pod shares a host namespace")
	}
	c := onlyContainer(t, job)
	sc := c.SecurityContext
	if sc == nil || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem ||
		sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation ||
		sc.Privileged == nil || *sc.Privileged ||
		sc.Capabilities == nil || !slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) || len(sc.Capabilities.Add) > 0 {
		t.Errorf("container securityContext %+v", sc)
	}
	if c.Resources.Requests.Cpu().IsZero() || c.Resources.Requests.Memory().IsZero() ||
		c.Resources.Limits.Cpu().IsZero() || c.Resources.Limits.Memory().IsZero() {
		t.Errorf("resources %+v: want cpu and memory requests and limits", c.Resources)
	}
	for name, req := range c.Resources.Requests {
		if lim, ok := c.Resources.Limits[name]; ok && req.Cmp(lim) > 0 {
			t.Errorf("request %s %s above its limit %s", name, req.String(), lim.String())
		}
	}
	if !slices.Equal(c.Command, []string{"etcdperf"}) {
		t.Errorf("command %q", c.Command)
	}
	if i := slices.Index(c.Args, "-o"); i < 0 || i+1 >= len(c.Args) || c.Args[i+1] != "json" {
		t.Errorf("args %q do not print the Result JSON", c.Args)
	}
	tmp := volume(t, ps, "tmp")
	if tmp.EmptyDir == nil || tmp.EmptyDir.SizeLimit == nil || mounts(c)["tmp"].MountPath != "/tmp" || c.WorkingDir != "/tmp" {
		t.Errorf("tmp volume %+v, working dir %q", tmp, c.WorkingDir)
	}
	// Labels that select the pods, valid as label values.
	for _, l := range []map[string]string{job.Labels, s.Template.Labels} {
		if l[LabelInstance] != job.Name || l[LabelName] != "etcdperf" {
			t.Errorf("labels %v", l)
		}
		for k, v := range l {
			if msgs := validation.IsValidLabelValue(v); len(msgs) > 0 {
				t.Errorf("label %s=%q: %v", k, v, msgs)
			}
		}
	}
	if msgs := validation.IsDNS1123Label(job.Name); len(msgs) > 0 || len(job.Name)+1+len(strconv.Itoa(int(pods-1))) > 63 {
		t.Errorf("job name %q: %v", job.Name, msgs)
	}
	if !strings.Contains(job.Annotations[AnnotationResults], "kubectl") || !strings.Contains(job.Annotations[AnnotationCleanup], "delete job "+job.Name) {
		t.Errorf("annotations do not say how to read and clean up: %v", job.Annotations)
	}
}

func TestNodeJob(t *testing.T) {
	job, text := manifest(t, "node.yaml", Options{Nodes: []string{"cp-1"}, Namespace: "kube-system", Image: "ghcr.io/etcdperf/etcdperf:v1.0.0"})
	checkCommon(t, job, 1)
	if job.Name != "etcdperf-disk-cp-1" || job.Namespace != "kube-system" {
		t.Errorf("name %s/%s", job.Namespace, job.Name)
	}
	ps := job.Spec.Template.Spec
	// Pinned to the node by its object name, with the control-plane taints
	// tolerated.
	if ps.NodeName != "" {
		t.Errorf("nodeName %q bypasses the scheduler", ps.NodeName)
	}
	terms := ps.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
	if len(terms) != 1 || len(terms[0].MatchFields) != 1 || terms[0].MatchFields[0].Key != "metadata.name" ||
		terms[0].MatchFields[0].Operator != corev1.NodeSelectorOpIn || !slices.Equal(terms[0].MatchFields[0].Values, []string{"cp-1"}) {
		t.Errorf("node affinity %+v", terms)
	}
	if ps.Affinity.PodAntiAffinity != nil {
		t.Error("anti-affinity for a single pod")
	}
	for _, key := range []string{"node-role.kubernetes.io/control-plane", "node-role.kubernetes.io/master"} {
		ok := false
		for _, tol := range ps.Tolerations {
			ok = ok || tol.Key == key && tol.Operator == corev1.TolerationOpExists && tol.Effect == corev1.TaintEffectNoSchedule
		}
		if !ok {
			t.Errorf("no toleration for %s:NoSchedule in %+v", key, ps.Tolerations)
		}
	}
	// Root, said why, and nothing more than root.
	psc := ps.SecurityContext
	if psc.RunAsUser == nil || *psc.RunAsUser != 0 || psc.RunAsNonRoot == nil || *psc.RunAsNonRoot {
		t.Errorf("pod securityContext %+v", psc)
	}
	if !strings.Contains(job.Spec.Template.Annotations[AnnotationRoot], "uid 0") {
		t.Errorf("no reason for root: %v", job.Spec.Template.Annotations)
	}
	// The parent of the data dir, writable; the data dir itself read-only
	// over it; the probe directory beside it.
	host, data := volume(t, ps, "host"), volume(t, ps, "etcd-data")
	if host.HostPath == nil || host.HostPath.Path != "/var/lib" || *host.HostPath.Type != corev1.HostPathDirectory {
		t.Errorf("host volume %+v", host.HostPath)
	}
	if data.HostPath == nil || data.HostPath.Path != "/var/lib/etcd" || *data.HostPath.Type != corev1.HostPathDirectory {
		t.Errorf("etcd-data volume %+v", data.HostPath)
	}
	c := onlyContainer(t, job)
	m := mounts(c)
	if m["host"].MountPath != "/host/var/lib" || m["host"].ReadOnly {
		t.Errorf("host mount %+v", m["host"])
	}
	if m["etcd-data"].MountPath != "/host/var/lib/etcd" || !m["etcd-data"].ReadOnly {
		t.Errorf("etcd-data mount %+v", m["etcd-data"])
	}
	want := []string{"k8s", "in-dir", "--dir", "/host/var/lib/etcdperf-probe", "--beside", "/host/var/lib/etcd", "--name", "$(NODE_NAME)", "--",
		"disk", "--dir", "/host/var/lib/etcdperf-probe", "-o", "json"}
	if !slices.Equal(c.Args, want) {
		t.Errorf("args\n got %q\nwant %q", c.Args, want)
	}
	if c.Image != "ghcr.io/etcdperf/etcdperf:v1.0.0" || c.ImagePullPolicy != corev1.PullIfNotPresent {
		t.Errorf("image %s %s", c.Image, c.ImagePullPolicy)
	}
	// Disk defaults: a CPU limit of 2 keeps GOMAXPROCS at 2.
	if lim := c.Resources.Limits[corev1.ResourceCPU]; lim.Cmp(resource.MustParse("2")) != 0 {
		t.Errorf("cpu limit %s", lim.String())
	}
	if *job.Spec.TTLSecondsAfterFinished != 3600 || *job.Spec.ActiveDeadlineSeconds != 900 {
		t.Errorf("ttl %d deadline %d", *job.Spec.TTLSecondsAfterFinished, *job.Spec.ActiveDeadlineSeconds)
	}
	if strings.Contains(text, "creationTimestamp") {
		t.Error("the YAML carries a creationTimestamp")
	}
}

func TestNodesJobOwnDiskDoctor(t *testing.T) {
	job, _ := manifest(t, "nodes-doctor.yaml", Options{
		Nodes: []string{"ip-10-0-1-17.ec2.internal", "ip-10-0-2-9.ec2.internal", "ip-10-0-3-4.ec2.internal"},
		Mode:  ModeDoctor, EtcdDataDir: "/var/lib/etcd/", HostDir: "/var/lib/etcd",
		Image: "registry.example/etcdperf:dev", TTL: 2 * time.Hour, Deadline: 30 * time.Minute,
		Requests:      corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m")},
		Limits:        corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("1Gi")},
		PriorityClass: "etcdperf-low",
		Args:          []string{"--duration", "30s"},
		RunAsUser:     ptr(int64(998)),
	})
	checkCommon(t, job, 3)
	if job.Name != "etcdperf-doctor" || job.Namespace != "" {
		t.Errorf("name %q namespace %q", job.Name, job.Namespace)
	}
	ps := job.Spec.Template.Spec
	terms := ps.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
	// One term per node: the API server takes one value per node field
	// selector (TestManifestsDryRun sends this manifest to one).
	var got []string
	for _, term := range terms {
		if len(term.MatchFields) != 1 || len(term.MatchFields[0].Values) != 1 {
			t.Fatalf("node selector term %+v: want one node per term", term)
		}
		got = append(got, term.MatchFields[0].Values[0])
	}
	if len(got) != 3 || got[1] != "ip-10-0-2-9.ec2.internal" {
		t.Errorf("nodes %q", got)
	}
	anti := ps.Affinity.PodAntiAffinity
	if anti == nil || len(anti.RequiredDuringSchedulingIgnoredDuringExecution) != 1 ||
		anti.RequiredDuringSchedulingIgnoredDuringExecution[0].TopologyKey != corev1.LabelHostname ||
		anti.RequiredDuringSchedulingIgnoredDuringExecution[0].LabelSelector.MatchLabels[LabelInstance] != job.Name {
		t.Errorf("pod anti-affinity %+v: want one pod per node", anti)
	}
	// The data dir is its own disk: the probe goes in it, and only member/
	// is protected.
	if p := volume(t, ps, "host").HostPath.Path; p != "/var/lib/etcd" {
		t.Errorf("host path %s", p)
	}
	if p := volume(t, ps, "etcd-data").HostPath.Path; p != "/var/lib/etcd/member" {
		t.Errorf("protected path %s", p)
	}
	c := onlyContainer(t, job)
	want := []string{"k8s", "in-dir", "--dir", "/host/var/lib/etcd/etcdperf-probe", "--beside", "/host/var/lib/etcd/member", "--name", "$(NODE_NAME)", "--",
		"doctor", "--data-dir", "/host/var/lib/etcd/etcdperf-probe", "-o", "json", "--duration", "30s"}
	if !slices.Equal(c.Args, want) {
		t.Errorf("args\n got %q\nwant %q", c.Args, want)
	}
	// The owner of the data dir, not root.
	if psc := ps.SecurityContext; *psc.RunAsUser != 998 || !*psc.RunAsNonRoot {
		t.Errorf("pod securityContext %+v, want uid 998 and non-root", psc)
	}
	if _, ok := job.Spec.Template.Annotations[AnnotationRoot]; ok {
		t.Error("says it runs as root")
	}
	if ps.PriorityClassName != "etcdperf-low" {
		t.Errorf("priority class %q", ps.PriorityClassName)
	}
	// Given values replace the mode's defaults one by one.
	if r := c.Resources; r.Requests.Cpu().String() != "500m" || r.Requests.Memory().String() != "512Mi" || r.Limits.Memory().String() != "1Gi" || r.Limits.Cpu().String() != "1" {
		t.Errorf("resources %+v", r)
	}
	if *job.Spec.TTLSecondsAfterFinished != 7200 || *job.Spec.ActiveDeadlineSeconds != 1800 {
		t.Errorf("ttl %d deadline %d", *job.Spec.TTLSecondsAfterFinished, *job.Spec.ActiveDeadlineSeconds)
	}
}

func TestStorageClassJob(t *testing.T) {
	job, text := manifest(t, "storage-class.yaml", Options{StorageClass: "gp3", Size: resource.MustParse("20Gi"), Namespace: "etcd-test", Args: []string{"--runtime", "30s"}})
	checkCommon(t, job, 1)
	if job.Name != "etcdperf-disk-gp3" {
		t.Errorf("name %q", job.Name)
	}
	ps := job.Spec.Template.Spec
	if ps.Affinity != nil || len(ps.Tolerations) > 0 {
		t.Errorf("a StorageClass pod belongs on ordinary nodes: affinity %+v tolerations %+v", ps.Affinity, ps.Tolerations)
	}
	// Non-root, with fsGroup so that the fresh volume is writable: the
	// restricted Pod Security level.
	psc := ps.SecurityContext
	if psc.RunAsNonRoot == nil || !*psc.RunAsNonRoot || psc.RunAsUser == nil || *psc.RunAsUser == 0 || psc.FSGroup == nil || *psc.FSGroup != *psc.RunAsUser {
		t.Errorf("pod securityContext %+v", psc)
	}
	for _, v := range ps.Volumes {
		if v.HostPath != nil {
			t.Errorf("hostPath volume %s with a StorageClass", v.Name)
		}
	}
	// A generic ephemeral volume: Kubernetes deletes it with the pod.
	data := volume(t, ps, "data")
	if data.Ephemeral == nil || data.Ephemeral.VolumeClaimTemplate == nil {
		t.Fatalf("data volume %+v is not a generic ephemeral volume", data)
	}
	pvc := data.Ephemeral.VolumeClaimTemplate.Spec
	if pvc.StorageClassName == nil || *pvc.StorageClassName != "gp3" || !slices.Equal(pvc.AccessModes, []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}) ||
		pvc.Resources.Requests.Storage().Cmp(resource.MustParse("20Gi")) != 0 || *pvc.VolumeMode != corev1.PersistentVolumeFilesystem {
		t.Errorf("claim template %+v", pvc)
	}
	c := onlyContainer(t, job)
	if m := mounts(c)["data"]; m.MountPath != "/data" || m.ReadOnly {
		t.Errorf("data mount %+v", m)
	}
	if want := []string{"disk", "--dir", "/data", "-o", "json", "--runtime", "30s"}; !slices.Equal(c.Args, want) {
		t.Errorf("args %q, want %q", c.Args, want)
	}
	if strings.Contains(text, "kind: PersistentVolumeClaim") {
		t.Error("a separate PVC document that nobody deletes")
	}
}

func TestStorageClassParallelDoctor(t *testing.T) {
	job, _ := manifest(t, "storage-class-parallel.yaml", Options{StorageClass: "ceph-rbd", Size: resource.MustParse("10Gi"), Parallel: 3, Mode: ModeDoctor})
	checkCommon(t, job, 3)
	c := onlyContainer(t, job)
	if want := []string{"doctor", "--data-dir", "/data", "-o", "json"}; !slices.Equal(c.Args, want) {
		t.Errorf("args %q, want %q", c.Args, want)
	}
	if r := c.Resources.Limits.Memory(); r.Cmp(resource.MustParse("2Gi")) != 0 {
		t.Errorf("doctor memory limit %s", r.String())
	}
}

func TestDefaultName(t *testing.T) {
	long := strings.Repeat("node", 20) + ".example.com"
	cases := []struct {
		o    Options
		want string
	}{
		{Options{Mode: ModeDisk, Nodes: []string{"cp-1"}}, "etcdperf-disk-cp-1"},
		{Options{Mode: ModeDisk, Nodes: []string{"ip-10-0-1-17.ec2.internal"}}, "etcdperf-disk-ip-10-0-1-17-ec2-internal"},
		{Options{Mode: ModeDoctor, Nodes: []string{"a", "b"}}, "etcdperf-doctor"},
		{Options{Mode: ModeDisk, StorageClass: "standard-rwo"}, "etcdperf-disk-standard-rwo"},
	}
	for _, c := range cases {
		if got := DefaultName(&c.o); got != c.want {
			t.Errorf("DefaultName(%v) = %q, want %q", c.o.Nodes, got, c.want)
		}
	}
	for _, pods := range []int{1, 10, 1000} {
		o := Options{Mode: ModeDisk, StorageClass: long, Parallel: pods}
		name := DefaultName(&o)
		host := name + "-" + strconv.Itoa(pods-1)
		if msgs := validation.IsDNS1123Label(name); len(msgs) > 0 || len(host) > 63 {
			t.Errorf("%d pods: name %q (%d chars) is no DNS label for its pods' host names: %v", pods, name, len(name), msgs)
		}
		if _, err := Job(Options{StorageClass: "fast", Size: resource.MustParse("1Gi"), Parallel: pods, Name: name}); err != nil {
			t.Errorf("the default name is refused: %v", err)
		}
	}
}

func TestDefaultImage(t *testing.T) {
	for v, want := range map[string]string{
		"v1.2.3":                             "ghcr.io/etcdperf/etcdperf:v1.2.3",
		"v1.3.0-rc.1":                        "ghcr.io/etcdperf/etcdperf:v1.3.0-rc.1",
		"devel":                              "ghcr.io/etcdperf/etcdperf:latest",
		"v0.0.0-20260101120000-0123456789ab": "ghcr.io/etcdperf/etcdperf:latest",
		"v1.2.3+dirty":                       "ghcr.io/etcdperf/etcdperf:latest",
		"":                                   "ghcr.io/etcdperf/etcdperf:latest",
		"v1.2.3-0.20260101120000-0123456789ab+xx": "ghcr.io/etcdperf/etcdperf:latest",
	} {
		if got := DefaultImage(v); got != want {
			t.Errorf("DefaultImage(%q) = %q, want %q", v, got, want)
		}
	}
}

func TestValidate(t *testing.T) {
	node := func(mod func(*Options)) Options {
		o := Options{Nodes: []string{"cp-1"}}
		mod(&o)
		return o
	}
	sc := func(mod func(*Options)) Options {
		o := Options{StorageClass: "gp3", Size: resource.MustParse("10Gi")}
		mod(&o)
		return o
	}
	cases := []struct {
		o    Options
		want string
	}{
		{Options{}, "say where to run"},
		{node(func(o *Options) { o.StorageClass = "gp3" }), "exclude each other"},
		{sc(func(o *Options) { o.Size = resource.Quantity{} }), "needs --size"},
		{sc(func(o *Options) { o.Size = resource.MustParse("10Mi") }), "too small"},
		{sc(func(o *Options) { o.StorageClass = "GP3!" }), "not a StorageClass name"},
		{sc(func(o *Options) { o.EtcdDataDir = "/var/lib/etcd" }), "go with --node"},
		{sc(func(o *Options) { o.RunAsUser = ptr(int64(0)) }), "go with --node"},
		{node(func(o *Options) { o.RunAsUser = ptr(int64(-1)) }), "--run-as-user must be"},
		{sc(func(o *Options) { o.Parallel = MaxParallel + 1 }), "--parallel must be between"},
		{sc(func(o *Options) { o.Parallel = -1 }), "--parallel must be between"},
		{node(func(o *Options) { o.Nodes = []string{"Node_1"} }), "not a node name"},
		{node(func(o *Options) { o.Nodes = []string{strings.Repeat("a", 254)} }), "not a node name"},
		{node(func(o *Options) { o.Nodes = []string{"cp-1", "cp-1"} }), "given twice"},
		{node(func(o *Options) { o.Size = resource.MustParse("1Gi") }), "--size goes with --storage-class"},
		{node(func(o *Options) { o.Parallel = 2 }), "does not match the 1 node"},
		{node(func(o *Options) { o.Mode = "bench" }), "--mode must be disk, doctor or node-doctor"},
		{node(func(o *Options) { o.Name = "Etcd.Perf" }), "not a valid Job name"},
		{node(func(o *Options) { o.Name = strings.Repeat("a", 62) }), "too long"},
		{node(func(o *Options) { o.Namespace = "kube_system" }), "not a valid namespace"},
		{node(func(o *Options) { o.PriorityClass = "Low" }), "not a PriorityClass name"},
		{node(func(o *Options) { o.Image = "ghcr.io/x y" }), "not an image reference"},
		{node(func(o *Options) { o.EtcdDataDir = "/var/lib/etcd\x7f" }), "control characters"},
		{node(func(o *Options) { o.Args = []string{"--runtime", "1s\n"} }), "control characters"},
		{node(func(o *Options) { o.TTL = -time.Second }), "--ttl must not be negative"},
		{node(func(o *Options) { o.Deadline = time.Millisecond }), "whole seconds"},
		{node(func(o *Options) { o.EtcdDataDir = "var/lib/etcd" }), "must be an absolute path"},
		{node(func(o *Options) { o.EtcdDataDir = "/etcd" }), "does not mount a node's root"},
		{node(func(o *Options) { o.EtcdDataDir = "/" }), "cannot be /"},
		{node(func(o *Options) { o.HostDir = "/var/lib/etcd/member" }), "inside etcd's data dir"},
		{node(func(o *Options) { o.HostDir = "/" }), "does not mount a node's root"},
		{node(func(o *Options) { o.HostDir = "/proc/self" }), "not a directory on a disk"},
		{node(func(o *Options) { o.EtcdDataDir = "/var/lib/etcdperf-probe" }), "name of the probe directory"},
		{node(func(o *Options) { o.Requests = corev1.ResourceList{"gpu": resource.MustParse("1")} }), "unknown resource"},
		{node(func(o *Options) { o.Limits = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("0")} }), "must be positive"},
		{node(func(o *Options) {
			o.Requests = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")}
			o.Limits = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("512Mi")}
		}), "request 1Gi is more than its limit 512Mi"},
		{node(func(o *Options) { o.Limits = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("32Mi")} }), "request 64Mi is more than its limit 32Mi (defaults of --mode disk"},
	}
	for _, c := range cases {
		_, err := Job(c.o)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Job(%+v): error %v, want one saying %q", c.o, err, c.want)
		}
	}
	// The same options, corrected, are accepted.
	if _, err := Job(node(func(o *Options) { o.HostDir = "/var/lib/etcd" })); err != nil {
		t.Errorf("--host-dir equal to the data dir: %v", err)
	}
}

func TestParseResources(t *testing.T) {
	l, err := ParseResources("cpu=250m, memory=64Mi,ephemeral-storage=1Gi")
	if err != nil {
		t.Fatal(err)
	}
	if l.Cpu().MilliValue() != 250 || l.Memory().Value() != 64<<20 || l.StorageEphemeral().Value() != 1<<30 {
		t.Errorf("parsed %v", l)
	}
	for _, bad := range []string{"cpu", "cpu=lots", "memory=1Gx"} {
		if _, err := ParseResources(bad); err == nil {
			t.Errorf("ParseResources(%q) accepted", bad)
		}
	}
}

func TestCheckArgs(t *testing.T) {
	for _, c := range []struct {
		mode Mode
		args []string
		ok   bool
	}{
		{ModeDisk, []string{"--runtime", "30s", "--jobs", "2"}, true},
		{ModeDisk, []string{"--dir", "/x"}, false},
		{ModeDisk, []string{"--dir=/x"}, false},
		{ModeDisk, []string{"-o", "text"}, false},
		{ModeDisk, []string{"-otext"}, false},
		{ModeDisk, []string{"--output=run.json"}, false},
		{ModeDoctor, []string{"--data-dir", "/x"}, false},
		{ModeDoctor, []string{"--dir", "/x"}, true}, // not doctor's flag; doctor itself judges
		{"", []string{"--dir", "/x"}, false},
	} {
		err := CheckArgs(c.mode, c.args)
		if (err == nil) != c.ok {
			t.Errorf("CheckArgs(%s, %q) = %v, want ok=%v", c.mode, c.args, err, c.ok)
		}
	}
}

// checkNodeDoctor asserts the pod of node-doctor: the node's network and
// PID namespace, root without privilege, the control-plane taints
// tolerated, the node's configuration and logs read-only and only the
// data dir's parent writable, and the doctor --node command line.
func checkNodeDoctor(t *testing.T, job *batchv1.Job, parent string, ro map[string]string) {
	t.Helper()
	ps := job.Spec.Template.Spec
	if !ps.HostNetwork || ps.DNSPolicy != corev1.DNSClusterFirstWithHostNet || !ps.HostPID || ps.HostIPC {
		t.Errorf("hostNetwork %v dnsPolicy %q hostPID %v hostIPC %v", ps.HostNetwork, ps.DNSPolicy, ps.HostPID, ps.HostIPC)
	}
	for _, key := range []string{"node-role.kubernetes.io/control-plane", "node-role.kubernetes.io/master"} {
		ok := false
		for _, tol := range ps.Tolerations {
			ok = ok || tol.Key == key && tol.Operator == corev1.TolerationOpExists && tol.Effect == corev1.TaintEffectNoSchedule
		}
		if !ok {
			t.Errorf("no toleration for %s:NoSchedule in %+v", key, ps.Tolerations)
		}
	}
	psc := ps.SecurityContext
	if psc == nil || psc.RunAsUser == nil || *psc.RunAsUser != 0 || psc.RunAsNonRoot == nil || *psc.RunAsNonRoot ||
		psc.SeccompProfile == nil || psc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
		t.Errorf("pod securityContext %+v", psc)
	}
	c := onlyContainer(t, job)
	sc := c.SecurityContext
	if sc == nil || sc.Privileged == nil || *sc.Privileged || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation ||
		sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem ||
		sc.Capabilities == nil || !slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) || len(sc.Capabilities.Add) > 0 {
		t.Errorf("container securityContext %+v", sc)
	}
	if ps.AutomountServiceAccountToken == nil || *ps.AutomountServiceAccountToken {
		t.Error("the pod gets an API token it does not need")
	}
	// Every host path: the read-only ones of ro (volume name -> node
	// directory) and exactly one writable, the data dir's parent.
	want := map[string]string{"data-dir-parent": parent}
	for k, v := range ro {
		want[k] = v
	}
	m := mounts(c)
	got := map[string]string{}
	for _, v := range ps.Volumes {
		if v.HostPath == nil {
			continue
		}
		got[v.Name] = v.HostPath.Path
		if v.HostPath.Type == nil || *v.HostPath.Type != corev1.HostPathDirectory {
			t.Errorf("volume %s: type %v, want Directory (never created on the node)", v.Name, v.HostPath.Type)
		}
		vm, ok := m[v.Name]
		if !ok || vm.MountPath != "/host"+v.HostPath.Path {
			t.Errorf("volume %s (%s) mounted at %q, want /host%s", v.Name, v.HostPath.Path, vm.MountPath, v.HostPath.Path)
		}
		if vm.ReadOnly != (v.Name != "data-dir-parent") {
			t.Errorf("volume %s (%s): readOnly %v", v.Name, v.HostPath.Path, vm.ReadOnly)
		}
	}
	if !maps.Equal(got, want) {
		t.Errorf("host paths %v, want %v", got, want)
	}
	args := []string{"doctor", "--node", "--root", "/host", "-o", "json"}
	if !slices.Equal(c.Command, []string{"etcdperf"}) || !slices.Equal(c.Args[:min(len(c.Args), len(args))], args) {
		t.Errorf("command %q args %q, want etcdperf %q", c.Command, c.Args, args)
	}
	if !strings.Contains(job.Spec.Template.Annotations[AnnotationRoot], "uid 0") ||
		!strings.Contains(job.Spec.Template.Annotations[AnnotationHost], "writable at /host"+parent) {
		t.Errorf("annotations %v", job.Spec.Template.Annotations)
	}
}

var nodeDoctorRO = map[string]string{"node-etc": "/etc", "node-pod-logs": "/var/log/pods"}

func TestNodeDoctorJob(t *testing.T) {
	job, _ := manifest(t, "node-doctor.yaml", Options{Mode: ModeNodeDoctor, Nodes: []string{"cp-1"}, Namespace: "kube-system", Image: "ghcr.io/etcdperf/etcdperf:v1.0.0"})
	checkCommon(t, job, 1)
	if job.Name != "etcdperf-node-doctor-cp-1" {
		t.Errorf("name %q", job.Name)
	}
	checkNodeDoctor(t, job, "/var/lib", nodeDoctorRO)
	ps := job.Spec.Template.Spec
	terms := ps.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
	if len(terms) != 1 || len(terms[0].MatchFields) != 1 || terms[0].MatchFields[0].Key != "metadata.name" ||
		!slices.Equal(terms[0].MatchFields[0].Values, []string{"cp-1"}) || ps.Affinity.PodAntiAffinity != nil {
		t.Errorf("affinity %+v", ps.Affinity)
	}
	if c := onlyContainer(t, job); len(c.Args) != 6 {
		t.Errorf("args %q", c.Args)
	}
}

// Without --node: N pods on N different nodes that run etcd; the data dir
// elsewhere than under /var/lib adds /var/lib read-only (k3s/RKE2 files).
func TestNodeDoctorControlPlane(t *testing.T) {
	job, _ := manifest(t, "node-doctor-parallel.yaml", Options{Mode: ModeNodeDoctor, Parallel: 3, DataDirParent: "/data/", Args: []string{"--runtime", "30s"}})
	checkCommon(t, job, 3)
	if job.Name != "etcdperf-node-doctor" {
		t.Errorf("name %q", job.Name)
	}
	ro := map[string]string{"node-var-lib": "/var/lib"}
	for k, v := range nodeDoctorRO {
		ro[k] = v
	}
	checkNodeDoctor(t, job, "/data", ro)
	ps := job.Spec.Template.Spec
	var keys []string
	for _, term := range ps.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
		if len(term.MatchExpressions) != 1 || term.MatchExpressions[0].Operator != corev1.NodeSelectorOpExists || len(term.MatchFields) > 0 {
			t.Errorf("term %+v", term)
			continue
		}
		keys = append(keys, term.MatchExpressions[0].Key)
	}
	if !slices.Equal(keys, []string{"node-role.kubernetes.io/control-plane", "node-role.kubernetes.io/master", "node-role.kubernetes.io/etcd"}) {
		t.Errorf("node affinity keys %q", keys)
	}
	anti := ps.Affinity.PodAntiAffinity
	if anti == nil || len(anti.RequiredDuringSchedulingIgnoredDuringExecution) != 1 ||
		anti.RequiredDuringSchedulingIgnoredDuringExecution[0].TopologyKey != corev1.LabelHostname ||
		anti.RequiredDuringSchedulingIgnoredDuringExecution[0].LabelSelector.MatchLabels[LabelInstance] != "etcdperf-node-doctor" {
		t.Errorf("pod anti-affinity %+v", anti)
	}
	if c := onlyContainer(t, job); !slices.Equal(c.Args[6:], []string{"--runtime", "30s"}) {
		t.Errorf("args %q", c.Args)
	}
	// One pod: no anti-affinity needed.
	one, err := Job(Options{Mode: ModeNodeDoctor})
	if err != nil || *one.Spec.Completions != 1 || one.Spec.Template.Spec.Affinity.PodAntiAffinity != nil {
		t.Errorf("one pod: %v %+v", err, one)
	}
}

func TestValidateNodeDoctor(t *testing.T) {
	nd := func(mod func(*Options)) Options {
		o := Options{Mode: ModeNodeDoctor}
		mod(&o)
		return o
	}
	for _, c := range []struct {
		o    Options
		want string
	}{
		{nd(func(o *Options) { o.StorageClass = "gp3"; o.Size = resource.MustParse("10Gi") }), "do not go with --mode node-doctor"},
		{nd(func(o *Options) { o.EtcdDataDir = "/var/lib/etcd" }), "finds etcd's data dir on the node itself"},
		{nd(func(o *Options) { o.HostDir = "/var/lib" }), "finds etcd's data dir on the node itself"},
		{nd(func(o *Options) { o.Nodes = []string{"cp-1"}; o.Parallel = 3 }), "does not match the 1 node"},
		{nd(func(o *Options) { o.Nodes = []string{"CP_1"} }), "not a node name"},
		{nd(func(o *Options) { o.DataDirParent = "var/lib" }), "must be an absolute path"},
		{nd(func(o *Options) { o.DataDirParent = "/" }), "cannot be /"},
		{nd(func(o *Options) { o.DataDirParent = "/etc/kubernetes" }), "read-only or not at all"},
		{nd(func(o *Options) { o.DataDirParent = "/var/log" }), "read-only or not at all"},
		{nd(func(o *Options) { o.DataDirParent = "/proc/1" }), "read-only or not at all"},
		{nd(func(o *Options) { o.Parallel = MaxParallel + 1 }), "--parallel must be between"},
		{Options{Nodes: []string{"cp-1"}, DataDirParent: "/data"}, "--data-dir-parent goes with --mode node-doctor"},
	} {
		_, err := Job(c.o)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Job(%+v): error %v, want one saying %q", c.o, err, c.want)
		}
	}
	if err := CheckArgs(ModeNodeDoctor, []string{"--root", "/"}); err == nil || !strings.Contains(err.Error(), "doctor --node --root /host -o json") {
		t.Errorf("--root after --: %v", err)
	}
	if err := CheckArgs(ModeNodeDoctor, []string{"--runtime", "30s"}); err != nil {
		t.Errorf("--runtime after --: %v", err)
	}
}
