package k8s

import (
	"fmt"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/etcdperf/etcdperf/internal/units"
)

// Labels and annotations the Job and its pods carry.
const (
	LabelName      = "app.kubernetes.io/name"
	LabelInstance  = "app.kubernetes.io/instance"
	LabelComponent = "app.kubernetes.io/component"

	AnnotationResults = "etcdperf/results"
	AnnotationCleanup = "etcdperf/cleanup"
	AnnotationRoot    = "etcdperf/runs-as-root"
	AnnotationHost    = "etcdperf/host-paths"
)

// nonRootID is the user and group of the image (distroless "nonroot").
const nonRootID = 65532

// ContainerName is the name of the container that runs etcdperf.
const ContainerName = "etcdperf"

// controlPlaneTaints are the taints that keep ordinary pods off the nodes
// that run etcd: kubeadm's (control-plane, and master before 1.25) and
// Rancher's (controlplane, and etcd with NoExecute).
var controlPlaneTaints = []corev1.Toleration{
	{Key: "node-role.kubernetes.io/control-plane", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule},
	{Key: "node-role.kubernetes.io/master", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule},
	{Key: "node-role.kubernetes.io/controlplane", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule},
	{Key: "node-role.kubernetes.io/etcd", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute},
}

// Default resources per mode. The CPU limit is 2 for the disk probe: Go
// sizes GOMAXPROCS by the CPU limit, and the probe takes its fast path
// (raw system calls, fio's numbers) only with a spare P.
var defaultResources = map[Mode][2]corev1.ResourceList{
	ModeDisk: {
		{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("64Mi")},
		{corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourceMemory: resource.MustParse("256Mi")},
	},
	ModeDoctor: {
		{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("512Mi")},
		{corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourceMemory: resource.MustParse("2Gi")},
	},
	// doctor --node runs no etcd of its own: the disk probe (CPU limit 2,
	// as for disk), the member's metrics and logs.
	ModeNodeDoctor: {
		{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("128Mi")},
		{corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourceMemory: resource.MustParse("512Mi")},
	},
}

// tmpSize bounds the pod's only writable directory besides the storage
// under test.
var tmpSize = resource.MustParse("64Mi")

// Job builds the indexed Job that o describes, after validating o.
func Job(o Options) (*batchv1.Job, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	o.complete()
	labels := map[string]string{
		LabelName:      "etcdperf",
		LabelInstance:  o.Name,
		LabelComponent: string(o.Mode),
	}
	pods := int32(o.Parallel)
	job := &batchv1.Job{
		TypeMeta: metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"},
		ObjectMeta: metav1.ObjectMeta{
			Name:        o.Name,
			Namespace:   o.Namespace,
			Labels:      labels,
			Annotations: jobAnnotations(&o),
		},
		Spec: batchv1.JobSpec{
			CompletionMode:          ptr(batchv1.IndexedCompletion),
			Completions:             ptr(pods),
			Parallelism:             ptr(pods),
			TTLSecondsAfterFinished: ptr(int32(o.TTL.Seconds())),
			ActiveDeadlineSeconds:   ptr(int64(o.Deadline.Seconds())),
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       podSpec(&o, labels),
			},
		},
	}
	// A measurement is not retried: a second run is another sample. With
	// several pods, each index fails on its own, so that one node's slow
	// disk does not stop the probes of the others.
	if pods == 1 {
		job.Spec.BackoffLimit = ptr(int32(0))
	} else {
		job.Spec.BackoffLimitPerIndex = ptr(int32(0))
	}
	if o.Mode == ModeNodeDoctor {
		job.Spec.Template.Annotations = nodeDoctorAnnotations(&o)
	} else if o.OnNodes() {
		a := map[string]string{
			AnnotationHost: fmt.Sprintf("%s is mounted at %s; the pod writes only in %s, which it creates and removes, and only files it creates there. etcd's %s is mounted read-only over it.", o.HostDir, hostRoot+o.HostDir, o.probeDir(), o.protectedDir()),
		}
		if o.runAsUser() == 0 {
			a[AnnotationRoot] = fmt.Sprintf("the probe creates %s in the node's %s, which belongs to root: that needs uid 0 (--run-as-user sets the owner's uid when it is another). All capabilities are dropped, privilege escalation is off, the root file system is read-only.", ProbeDirName, o.HostDir)
		}
		job.Spec.Template.Annotations = a
	}
	return job, nil
}

func jobAnnotations(o *Options) map[string]string {
	ns := ""
	if o.Namespace != "" {
		ns = " -n " + o.Namespace
	}
	cleanup := fmt.Sprintf("Kubernetes deletes this Job and its pods %s after it finishes (ttlSecondsAfterFinished); delete it sooner with: kubectl%s delete job %s", units.ShortDuration(o.TTL), ns, o.Name)
	if !o.OnNodes() && o.Mode != ModeNodeDoctor {
		cleanup += ". Each pod's volume is a generic ephemeral volume, deleted with its pod."
	}
	return map[string]string{
		AnnotationResults: fmt.Sprintf("each pod prints its Result JSON to its log: kubectl%s logs -l %s=%s --tail=-1", ns, LabelInstance, o.Name),
		AnnotationCleanup: cleanup,
	}
}

func podSpec(o *Options, labels map[string]string) corev1.PodSpec {
	if o.Mode == ModeNodeDoctor {
		return nodeDoctorPodSpec(o, labels)
	}
	spec := corev1.PodSpec{
		RestartPolicy:                corev1.RestartPolicyNever,
		AutomountServiceAccountToken: ptr(false),
		EnableServiceLinks:           ptr(false),
		PriorityClassName:            o.PriorityClass,
		NodeSelector:                 map[string]string{corev1.LabelOSStable: "linux"},
		Containers:                   []corev1.Container{container(o)},
		Volumes: []corev1.Volume{{
			Name:         "tmp",
			VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{SizeLimit: &tmpSize}},
		}},
	}
	if o.OnNodes() {
		// The owner of the node's directory: root by default, see
		// AnnotationRoot.
		uid := o.runAsUser()
		spec.SecurityContext = &corev1.PodSecurityContext{
			RunAsUser:      ptr(uid),
			RunAsGroup:     ptr(uid),
			RunAsNonRoot:   ptr(uid != 0),
			SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
		}
		spec.Tolerations = controlPlaneTaints
		spec.Affinity = nodeAffinity(o, labels)
		spec.Volumes = append(spec.Volumes,
			hostVolume("host", o.HostDir),
			hostVolume("etcd-data", o.protectedDir()))
		return spec
	}
	spec.SecurityContext = &corev1.PodSecurityContext{
		RunAsUser:           ptr(int64(nonRootID)),
		RunAsGroup:          ptr(int64(nonRootID)),
		RunAsNonRoot:        ptr(true),
		FSGroup:             ptr(int64(nonRootID)),
		FSGroupChangePolicy: ptr(corev1.FSGroupChangeOnRootMismatch),
		SeccompProfile:      &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
	}
	size := o.Size.DeepCopy()
	spec.Volumes = append(spec.Volumes, corev1.Volume{
		Name: "data",
		VolumeSource: corev1.VolumeSource{Ephemeral: &corev1.EphemeralVolumeSource{
			VolumeClaimTemplate: &corev1.PersistentVolumeClaimTemplate{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PersistentVolumeClaimSpec{
					AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
					StorageClassName: ptr(o.StorageClass),
					VolumeMode:       ptr(corev1.PersistentVolumeFilesystem),
					Resources: corev1.VolumeResourceRequirements{
						Requests: corev1.ResourceList{corev1.ResourceStorage: size},
					},
				},
			},
		}},
	})
	return spec
}

// nodeAffinity pins the pods to the named nodes by their object name (not
// the hostname label, which differs from it on some clouds), one pod per
// node.
func nodeAffinity(o *Options, labels map[string]string) *corev1.Affinity {
	// The API server takes one value per node field selector: one term
	// per node, as the terms are ORed.
	var terms []corev1.NodeSelectorTerm
	for _, n := range o.Nodes {
		terms = append(terms, corev1.NodeSelectorTerm{MatchFields: []corev1.NodeSelectorRequirement{{
			Key:      metav1.ObjectNameField,
			Operator: corev1.NodeSelectorOpIn,
			Values:   []string{n},
		}}})
	}
	a := &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: terms},
	}}
	if len(o.Nodes) > 1 {
		a.PodAntiAffinity = &corev1.PodAntiAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
				LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{LabelInstance: labels[LabelInstance]}},
				TopologyKey:   corev1.LabelHostname,
			}},
		}
	}
	return a
}

func hostVolume(name, dir string) corev1.Volume {
	return corev1.Volume{
		Name: name,
		VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{
			Path: dir,
			// Directory: the kubelet never creates it; a node without it
			// (not an etcd node, a wrong --etcd-data-dir) does not start
			// the pod, and `kubectl describe pod` says why.
			Type: ptr(corev1.HostPathDirectory),
		}},
	}
}

func container(o *Options) corev1.Container {
	req, lim, _ := o.resources() // checked by Validate
	c := corev1.Container{
		Name:            ContainerName,
		Image:           o.Image,
		ImagePullPolicy: corev1.PullIfNotPresent,
		Command:         []string{"etcdperf"},
		Args:            Args(o),
		WorkingDir:      tmpPath,
		Env: []corev1.EnvVar{
			{Name: "NODE_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "spec.nodeName"}}},
			{Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}},
		},
		Resources:                corev1.ResourceRequirements{Requests: req, Limits: lim},
		TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
		SecurityContext: &corev1.SecurityContext{
			Privileged:               ptr(false),
			AllowPrivilegeEscalation: ptr(false),
			ReadOnlyRootFilesystem:   ptr(true),
			Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
		},
		VolumeMounts: []corev1.VolumeMount{{Name: "tmp", MountPath: tmpPath}},
	}
	if o.Mode == ModeNodeDoctor {
		for _, m := range nodeDoctorMounts(o) {
			c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: m.name, MountPath: hostRoot + m.dir, ReadOnly: m.readOnly})
		}
	} else if o.OnNodes() {
		c.VolumeMounts = append(c.VolumeMounts,
			corev1.VolumeMount{Name: "host", MountPath: hostRoot + o.HostDir},
			corev1.VolumeMount{Name: "etcd-data", MountPath: hostRoot + o.protectedDir(), ReadOnly: true})
	} else {
		c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: "data", MountPath: volumePath})
	}
	return c
}

// Args is the etcdperf command line the pod runs (after the binary's
// name). On a node it goes through `etcdperf k8s in-dir`, which creates the
// probe directory beside etcd's data dir, checks that it is on the same
// file system, runs the command and removes the directory.
func Args(o *Options) []string {
	if o.Mode == ModeNodeDoctor {
		// doctor --node finds the node's member under --root and prints
		// its Result, named after the node (the pod has the node's host
		// name on the node's network).
		return append([]string{"doctor", "--node", "--root", hostRoot, "-o", "json"}, o.Args...)
	}
	dirFlag := "--dir"
	if o.Mode == ModeDoctor {
		dirFlag = "--data-dir"
	}
	if !o.OnNodes() {
		return append([]string{string(o.Mode), dirFlag, volumePath, "-o", "json"}, o.Args...)
	}
	dir := hostRoot + o.probeDir()
	args := []string{"k8s", "in-dir", "--dir", dir, "--beside", hostRoot + o.protectedDir(), "--name", "$(NODE_NAME)", "--",
		string(o.Mode), dirFlag, dir, "-o", "json"}
	return append(args, o.Args...)
}

// ReservedFlags are the flags of the pod's command that the Job sets
// itself and that extra arguments must not repeat.
func ReservedFlags(m Mode) []string {
	if m == ModeNodeDoctor {
		return []string{"--node", "--root", "--output", "-o"}
	}
	if m == ModeDoctor {
		return []string{"--data-dir", "--output", "-o"}
	}
	return []string{"--dir", "--output", "-o"}
}

// CheckArgs rejects extra arguments that repeat a flag the Job sets.
func CheckArgs(m Mode, args []string) error {
	if m == "" {
		m = ModeDisk
	}
	for _, a := range args {
		for _, f := range ReservedFlags(m) {
			if a == f || strings.HasPrefix(a, f+"=") || (f == "-o" && strings.HasPrefix(a, "-o") && !strings.HasPrefix(a, "--")) {
				set := fmt.Sprintf("%s %s ... -o json", m, ReservedFlags(m)[0])
				if m == ModeNodeDoctor {
					set = strings.Join(Args(&Options{Mode: m}), " ")
				}
				return fmt.Errorf("%s is set by the Job (%s); leave it out of the arguments after --", f, set)
			}
		}
	}
	return nil
}

// runAsUser is the uid of the pod on a node.
func (o *Options) runAsUser() int64 {
	if o.RunAsUser == nil {
		return 0
	}
	return *o.RunAsUser
}

func ptr[T any](v T) *T { return &v }
