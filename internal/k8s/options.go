// Package k8s builds the Kubernetes Job that runs etcdperf inside a cluster,
// on a node's etcd disk or on a fresh volume of a StorageClass, from the
// typed Kubernetes API structs. It also prepares the probe directory that
// such a pod creates beside etcd's data dir. It prints nothing.
package k8s

import (
	"errors"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"
)

// Mode is the etcdperf command a pod runs.
type Mode string

// The modes of the Job.
const (
	// ModeDisk runs `etcdperf disk`: the WAL fdatasync probe.
	ModeDisk Mode = "disk"
	// ModeDoctor runs `etcdperf doctor`: the probe, an embedded etcd on
	// the same storage and a short check.
	ModeDoctor Mode = "doctor"
)

// Defaults of the Job.
const (
	DefaultEtcdDataDir = "/var/lib/etcd"
	DefaultTTL         = time.Hour
	DefaultDeadline    = 15 * time.Minute
	// ImageRepository is where the project's image (the Dockerfile at the
	// repository's root) is published, by .github/workflows/release.yml
	// on a v* tag.
	ImageRepository = "ghcr.io/etcdperf/etcdperf"
	// ImagePublished says whether a release has published the image yet.
	// Until one has, the default image cannot be pulled (a Job with it
	// stays in ImagePullBackOff) and `k8s manifest` says so when --image
	// is not given; the release that first publishes it sets this true.
	ImagePublished = false
	// ProbeDirName is the directory a pod creates on the node, beside
	// etcd's data dir, and removes when it is done.
	ProbeDirName = "etcdperf-probe"
	// MinSize is the smallest volume accepted with a StorageClass: the
	// probe writes 22MiB per job by default and doctor runs an etcd on it.
	MinSize = "64Mi"
	// MaxParallel bounds the number of pods of one Job.
	MaxParallel = 1000
)

// Paths inside the container.
const (
	hostRoot   = "/host" // the node's directories appear under it
	volumePath = "/data" // the StorageClass volume
	tmpPath    = "/tmp"  // the only other writable place
)

// Options describe the Job. Exactly one of Nodes and StorageClass is set,
// except with ModeNodeDoctor, which takes Nodes or nothing (then Parallel
// control-plane nodes).
type Options struct {
	// Name of the Job; empty: DefaultName.
	Name string
	// Namespace of the Job; empty: the namespace kubectl is using.
	Namespace string
	// Image that holds the etcdperf binary in its PATH.
	Image string
	Mode  Mode

	// Nodes whose etcd disk is probed, one pod per node.
	Nodes []string
	// EtcdDataDir is etcd's data dir on the nodes (default /var/lib/etcd).
	EtcdDataDir string
	// HostDir is the node directory in which the pod creates its probe
	// directory; empty: the parent of EtcdDataDir.
	HostDir string
	// RunAsUser is the user the pod runs as on a node; nil: root, the
	// owner of /var/lib. Set it to the owner of HostDir when that is not
	// root (e.g. a data dir of an etcd user).
	RunAsUser *int64

	// DataDirParent is the node directory that --mode node-doctor mounts
	// writable, the one holding etcd's data dir; empty: /var/lib.
	DataDirParent string

	// StorageClass of the fresh volume each pod gets, of Size.
	StorageClass string
	Size         resource.Quantity

	// Parallel is the number of pods (completions and parallelism of the
	// indexed Job). With Nodes it is the number of nodes; 0 means that.
	Parallel int
	// TTL deletes the finished Job and its pods after this long.
	TTL time.Duration
	// Deadline ends the Job, whatever its pods are doing, after this long.
	Deadline time.Duration
	// Requests and Limits of the container, over the mode's defaults.
	Requests, Limits corev1.ResourceList
	// PriorityClass of the pods; empty: the cluster's default priority.
	PriorityClass string
	// Args are appended to the etcdperf command the pod runs (e.g.
	// --runtime 30s). They may use $(NODE_NAME), $(POD_NAME) and
	// $(JOB_COMPLETION_INDEX), which Kubernetes expands.
	Args []string
}

// OnNodes tells whether the Job probes the nodes' etcd disks.
func (o *Options) OnNodes() bool { return len(o.Nodes) > 0 }

// releaseVersion matches the versions that have an image of their own.
var releaseVersion = regexp.MustCompile(`^v[0-9]+\.[0-9]+\.[0-9]+(-(alpha|beta|rc)\.[0-9]+)?$`)

// DefaultImage is the image of this etcdperf version: its own tag for a
// release, else latest.
func DefaultImage(version string) string {
	if releaseVersion.MatchString(version) {
		return ImageRepository + ":" + version
	}
	return ImageRepository + ":latest"
}

// DefaultName is the Job's name when none is given:
// etcdperf-<mode>-<node> for one node, etcdperf-<mode>-<storage class>
// with a StorageClass, etcdperf-<mode> for several nodes. It is cut to fit
// the limits of names and labels.
func DefaultName(o *Options) string {
	name := "etcdperf-" + string(o.Mode)
	switch {
	case len(o.Nodes) == 1:
		name += "-" + o.Nodes[0]
	case o.StorageClass != "":
		name += "-" + o.StorageClass
	}
	name = strings.ToLower(strings.NewReplacer(".", "-", "_", "-").Replace(name))
	if max := maxNameLen(o.pods()); len(name) > max {
		name = name[:max]
	}
	return strings.TrimRight(name, "-")
}

// maxNameLen is the longest Job name whose pods' host names,
// <name>-<index>, still fit in a DNS label.
func maxNameLen(pods int) int {
	return validation.DNS1123LabelMaxLength - 1 - len(fmt.Sprint(max(pods-1, 0)))
}

// pods is the number of pods the Job runs.
func (o *Options) pods() int {
	if o.Parallel > 0 {
		return o.Parallel
	}
	if len(o.Nodes) > 0 {
		return len(o.Nodes)
	}
	return 1
}

// probeDir is the directory the pod probes, as the node sees it.
func (o *Options) probeDir() string {
	return path.Join(o.HostDir, ProbeDirName)
}

// protectedDir is the part of etcd's data that the pod mounts read-only
// over the writable host directory: the data dir, or its member directory
// when the probe directory is inside the data dir.
func (o *Options) protectedDir() string {
	if o.HostDir == o.EtcdDataDir {
		return path.Join(o.EtcdDataDir, "member")
	}
	return o.EtcdDataDir
}

// complete fills in the defaults.
func (o *Options) complete() {
	if o.Mode == "" {
		o.Mode = ModeDisk
	}
	if o.OnNodes() && o.Mode != ModeNodeDoctor {
		if o.EtcdDataDir == "" {
			o.EtcdDataDir = DefaultEtcdDataDir
		}
		o.EtcdDataDir = path.Clean(o.EtcdDataDir)
		if o.HostDir == "" {
			o.HostDir = path.Dir(o.EtcdDataDir)
		}
		o.HostDir = path.Clean(o.HostDir)
	}
	if o.Parallel == 0 {
		o.Parallel = o.pods()
	}
	if o.Name == "" {
		o.Name = DefaultName(o)
	}
	if o.TTL == 0 {
		o.TTL = DefaultTTL
	}
	if o.Deadline == 0 {
		o.Deadline = DefaultDeadline
	}
	if o.Image == "" {
		o.Image = ImageRepository + ":latest"
	}
}

// Validate checks the options as given (before defaults) and returns an
// error naming the flag and what to do; every error is a usage error.
func (o *Options) Validate() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }

	switch o.Mode {
	case "", ModeDisk, ModeDoctor, ModeNodeDoctor:
	default:
		bad("--mode must be disk, doctor or node-doctor, got %q", o.Mode)
	}
	if o.Mode == ModeNodeDoctor {
		errs = append(errs, o.validateNodeDoctor()...)
		errs = append(errs, o.validateNodes()...)
	} else if o.DataDirParent != "" {
		return errors.New("--data-dir-parent goes with --mode node-doctor; with --node, --etcd-data-dir and --host-dir say where the pod writes")
	}
	switch {
	case o.Mode == ModeNodeDoctor:
	case o.OnNodes() && o.StorageClass != "":
		return errors.New("--node and --storage-class exclude each other: --node probes a node's etcd disk, --storage-class a fresh volume")
	case !o.OnNodes() && o.StorageClass == "":
		return errors.New("say where to run: --node NAME (that node's etcd disk), --storage-class SC --size 10Gi (a fresh volume of that class) or --mode node-doctor (the etcd member of each control-plane node)")
	}
	if o.Mode == ModeNodeDoctor {
		// checked above
	} else if o.OnNodes() {
		errs = append(errs, o.validateNodes()...)
		if !o.Size.IsZero() {
			bad("--size goes with --storage-class; with --node the pod uses the node's disk")
		}
		if o.Parallel != 0 && o.Parallel != len(o.Nodes) {
			bad("--parallel %d does not match the %d node(s) of --node: the Job runs one pod per node (leave --parallel out)", o.Parallel, len(o.Nodes))
		}
		errs = append(errs, o.validateDirs())
		if o.RunAsUser != nil && (*o.RunAsUser < 0 || *o.RunAsUser > 1<<31-1) {
			bad("--run-as-user must be a user id between 0 and 2147483647, got %d", *o.RunAsUser)
		}
	} else if o.StorageClass != "" {
		if msgs := validation.IsDNS1123Subdomain(o.StorageClass); len(msgs) > 0 {
			bad("--storage-class %q is not a StorageClass name: %s", o.StorageClass, strings.Join(msgs, "; "))
		}
		if o.Size.IsZero() {
			bad("--storage-class needs --size, the size of the volume to create (e.g. --size 10Gi; cloud disks are often faster when larger)")
		} else if min := resource.MustParse(MinSize); o.Size.Cmp(min) < 0 {
			bad("--size %s is too small: the volume needs at least %s", o.Size.String(), MinSize)
		}
		if o.EtcdDataDir != "" || o.HostDir != "" || o.RunAsUser != nil {
			bad("--etcd-data-dir, --host-dir and --run-as-user go with --node; with --storage-class the pod uses its own volume")
		}
	}
	if o.Parallel < 0 || o.Parallel > MaxParallel {
		bad("--parallel must be between 1 and %d, got %d", MaxParallel, o.Parallel)
	}
	if o.Name != "" {
		if msgs := validation.IsDNS1123Label(o.Name); len(msgs) > 0 {
			bad("--name %q is not a valid Job name: %s", o.Name, strings.Join(msgs, "; "))
		} else if max := maxNameLen(o.pods()); len(o.Name) > max {
			bad("--name %q is too long: with %d pod(s) it may have at most %d characters (the pods' host names add -<index>)", o.Name, o.pods(), max)
		}
	}
	if o.Namespace != "" {
		if msgs := validation.IsDNS1123Label(o.Namespace); len(msgs) > 0 {
			bad("--namespace %q is not a valid namespace: %s", o.Namespace, strings.Join(msgs, "; "))
		}
	}
	if o.PriorityClass != "" {
		if msgs := validation.IsDNS1123Subdomain(o.PriorityClass); len(msgs) > 0 {
			bad("--priority-class %q is not a PriorityClass name: %s", o.PriorityClass, strings.Join(msgs, "; "))
		}
	}
	if o.Image != "" && (strings.ContainsAny(o.Image, " \t\n") || strings.HasPrefix(o.Image, "-")) {
		bad("--image %q is not an image reference (e.g. %s:latest)", o.Image, ImageRepository)
	}
	for flag, vals := range map[string][]string{"--etcd-data-dir": {o.EtcdDataDir}, "--host-dir": {o.HostDir}, "--data-dir-parent": {o.DataDirParent}, "--image": {o.Image}, "the arguments after --": o.Args} {
		for _, v := range vals {
			if strings.ContainsFunc(v, unicode.IsControl) || !utf8.ValidString(v) {
				bad("%s: %q has control characters or is not UTF-8", flag, v)
			}
		}
	}
	if o.TTL < 0 {
		bad("--ttl must not be negative")
	}
	if o.Deadline < 0 {
		bad("--deadline must not be negative")
	}
	if o.TTL > 0 && o.TTL < time.Second || o.Deadline > 0 && o.Deadline < time.Second {
		bad("--ttl and --deadline are whole seconds; use at least 1s")
	}
	if _, _, err := o.resources(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// validateNodes checks the names of --node.
func (o *Options) validateNodes() []error {
	var errs []error
	seen := map[string]bool{}
	for _, n := range o.Nodes {
		if msgs := validation.IsDNS1123Subdomain(n); len(msgs) > 0 {
			errs = append(errs, fmt.Errorf("--node %q is not a node name: %s", n, strings.Join(msgs, "; ")))
		}
		if seen[n] {
			errs = append(errs, fmt.Errorf("--node %q is given twice", n))
		}
		seen[n] = true
	}
	return errs
}

// validateDirs checks the node paths: absolute, not the root, and the
// probe directory never inside etcd's data.
func (o *Options) validateDirs() error {
	data := o.EtcdDataDir
	if data == "" {
		data = DefaultEtcdDataDir
	}
	if !path.IsAbs(data) {
		return fmt.Errorf("--etcd-data-dir %q must be an absolute path on the node, e.g. %s", data, DefaultEtcdDataDir)
	}
	data = path.Clean(data)
	host := o.HostDir
	if host == "" {
		host = path.Dir(data)
	}
	if !path.IsAbs(host) {
		return fmt.Errorf("--host-dir %q must be an absolute path on the node", host)
	}
	host = path.Clean(host)
	switch {
	case data == "/":
		return fmt.Errorf("--etcd-data-dir cannot be /")
	case host == "/":
		return fmt.Errorf("the probe directory would be created in the node's / (the parent of --etcd-data-dir %s): etcdperf does not mount a node's root; pass --host-dir, a directory on the same disk as etcd's data", data)
	case inside(host, data) && host != data:
		return fmt.Errorf("--host-dir %s is inside etcd's data dir %s: the probe never writes there; use the data dir's parent or, when the data dir is a mount of its own, the data dir itself", host, data)
	case path.Join(host, ProbeDirName) == data:
		return fmt.Errorf("etcd's data dir %s has the name of the probe directory; pass --host-dir elsewhere", data)
	}
	for _, sys := range []string{"/proc", "/sys", "/dev"} {
		if inside(host, sys) {
			return fmt.Errorf("--host-dir %s is not a directory on a disk", host)
		}
	}
	return nil
}

// inside tells whether p is dir or below it.
func inside(p, dir string) bool {
	return p == dir || strings.HasPrefix(p, strings.TrimSuffix(dir, "/")+"/")
}

// resources merges the given requests and limits into the mode's defaults
// and checks them: cpu, memory and ephemeral-storage only, positive, and
// no request above its limit.
func (o *Options) resources() (req, lim corev1.ResourceList, err error) {
	mode := o.Mode
	if mode == "" {
		mode = ModeDisk
	}
	def, ok := defaultResources[mode]
	if !ok {
		return nil, nil, nil // the mode is reported by Validate
	}
	req, lim = def[0].DeepCopy(), def[1].DeepCopy()
	allowed := []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceEphemeralStorage}
	for _, given := range []struct {
		flag string
		l    corev1.ResourceList
		into corev1.ResourceList
	}{{"--requests", o.Requests, req}, {"--limits", o.Limits, lim}} {
		for name, q := range given.l {
			if !slices.Contains(allowed, name) {
				return nil, nil, fmt.Errorf("%s: unknown resource %q (use cpu, memory or ephemeral-storage)", given.flag, name)
			}
			if q.Sign() <= 0 {
				return nil, nil, fmt.Errorf("%s: %s must be positive, got %s", given.flag, name, q.String())
			}
			given.into[name] = q.DeepCopy()
		}
	}
	for _, name := range allowed {
		r, okr := req[name]
		l, okl := lim[name]
		if okr && okl && r.Cmp(l) > 0 {
			return nil, nil, fmt.Errorf("the %s request %s is more than its limit %s (defaults of --mode %s: requests %s, limits %s)",
				name, r.String(), l.String(), mode, listString(def[0]), listString(def[1]))
		}
	}
	return req, lim, nil
}

// listString prints a ResourceList in the notation of --requests.
func listString(l corev1.ResourceList) string {
	var parts []string
	for name, q := range l {
		parts = append(parts, string(name)+"="+q.String())
	}
	slices.Sort(parts)
	return strings.Join(parts, ",")
}

// ParseResources parses kubectl's NAME=QUANTITY,... notation
// (cpu=250m,memory=64Mi).
func ParseResources(s string) (corev1.ResourceList, error) {
	out := corev1.ResourceList{}
	for _, kv := range strings.Split(s, ",") {
		kv = strings.TrimSpace(kv)
		if kv == "" {
			continue
		}
		name, val, ok := strings.Cut(kv, "=")
		if !ok {
			return nil, fmt.Errorf("%q is not NAME=QUANTITY (e.g. cpu=500m,memory=256Mi)", kv)
		}
		q, err := resource.ParseQuantity(strings.TrimSpace(val))
		if err != nil {
			return nil, fmt.Errorf("%s=%s: not a quantity (e.g. 500m, 2, 256Mi)", name, val)
		}
		out[corev1.ResourceName(strings.TrimSpace(name))] = q
	}
	return out, nil
}
