package e2e

import (
	"bytes"
	"context"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	"sigs.k8s.io/yaml"

	"github.com/etcdperf/etcdperf/internal/result"
	"github.com/etcdperf/etcdperf/internal/testutil"
)

// decodeJob decodes a manifest strictly: a field that batch/v1 does not
// know is an error, as it is for kubectl's server-side validation.
func decodeJob(t *testing.T, text string) *batchv1.Job {
	t.Helper()
	var job batchv1.Job
	if err := yaml.UnmarshalStrict([]byte(text), &job); err != nil {
		t.Fatalf("not a batch/v1 Job: %v\n%s", err, text)
	}
	if job.Kind != "Job" || job.APIVersion != "batch/v1" {
		t.Fatalf("kind %s/%s", job.APIVersion, job.Kind)
	}
	return &job
}

func TestK8sManifest(t *testing.T) {
	r := testutil.RunBinary(t, 30*time.Second, "k8s", "manifest", "--node", "cp-1", "-n", "kube-system")
	if r.Code != 0 || r.Stderr != imageNote {
		t.Fatalf("exit %d, stderr %q", r.Code, r.Stderr)
	}
	job := decodeJob(t, r.Stdout)
	if job.Name != "etcdperf-disk-cp-1" || job.Namespace != "kube-system" {
		t.Errorf("job %s/%s", job.Namespace, job.Name)
	}
	// The image is this version's, or latest for a development build.
	if img := job.Spec.Template.Spec.Containers[0].Image; img != "ghcr.io/etcdperf/etcdperf:latest" {
		t.Errorf("image %q", img)
	}

	// -o FILE writes the same YAML to a file and nothing to stdout.
	file := filepath.Join(t.TempDir(), "job.yaml")
	r2 := testutil.RunBinary(t, 30*time.Second, "k8s", "manifest", "--node", "cp-1", "-n", "kube-system", "-o", file)
	if r2.Code != 0 || r2.Stdout != "" {
		t.Fatalf("-o file: exit %d, stdout %q, stderr %q", r2.Code, r2.Stdout, r2.Stderr)
	}
	if b, err := os.ReadFile(file); err != nil || string(b) != r.Stdout {
		t.Errorf("file differs from stdout (%v)", err)
	}

	r3 := testutil.RunBinary(t, 30*time.Second, "k8s", "manifest", "--storage-class", "gp3", "--size", "10Gi", "--parallel", "4", "--mode", "doctor")
	if r3.Code != 0 {
		t.Fatalf("storage class: exit %d, %s", r3.Code, r3.Stderr)
	}
	job = decodeJob(t, r3.Stdout)
	if *job.Spec.Completions != 4 || job.Spec.Template.Spec.Volumes[1].Ephemeral == nil {
		t.Errorf("storage class job: completions %d volumes %+v", *job.Spec.Completions, job.Spec.Template.Spec.Volumes)
	}
}

// The node-doctor Job as printed is a strict batch/v1 Job: on the node's
// network and PID namespace, tolerating the control-plane taints, pinned
// to cp-1, running doctor --node --root /host, with the node's /etc and
// pod logs read-only and only /var/lib writable; the image note as for
// the other modes.
func TestK8sManifestNodeDoctor(t *testing.T) {
	r := testutil.RunBinary(t, 30*time.Second, "k8s", "manifest", "--mode", "node-doctor", "--node", "cp-1")
	if r.Code != 0 || r.Stderr != imageNote {
		t.Fatalf("exit %d, stderr %q", r.Code, r.Stderr)
	}
	job := decodeJob(t, r.Stdout)
	ps := job.Spec.Template.Spec
	if job.Name != "etcdperf-node-doctor-cp-1" || !ps.HostNetwork || !ps.HostPID || ps.DNSPolicy != "ClusterFirstWithHostNet" {
		t.Errorf("job %s: hostNetwork %v hostPID %v dnsPolicy %q", job.Name, ps.HostNetwork, ps.HostPID, ps.DNSPolicy)
	}
	tolerated := map[string]bool{}
	for _, tol := range ps.Tolerations {
		if tol.Effect == "NoSchedule" && tol.Operator == "Exists" {
			tolerated[tol.Key] = true
		}
	}
	if !tolerated["node-role.kubernetes.io/control-plane"] || !tolerated["node-role.kubernetes.io/master"] {
		t.Errorf("tolerations %+v", ps.Tolerations)
	}
	if f := ps.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms[0].MatchFields; len(f) != 1 || !slices.Equal(f[0].Values, []string{"cp-1"}) {
		t.Errorf("not pinned to cp-1: %+v", ps.Affinity)
	}
	c := ps.Containers[0]
	if !slices.Equal(append(c.Command, c.Args...), []string{"etcdperf", "doctor", "--node", "--root", "/host", "-o", "json"}) {
		t.Errorf("command %q %q", c.Command, c.Args)
	}
	if c.SecurityContext == nil || c.SecurityContext.Privileged == nil || *c.SecurityContext.Privileged {
		t.Errorf("securityContext %+v", c.SecurityContext)
	}
	mounts := map[string]bool{}
	for _, m := range c.VolumeMounts {
		mounts[m.MountPath] = m.ReadOnly
	}
	want := map[string]bool{"/tmp": false, "/host/etc": true, "/host/var/log/pods": true, "/host/var/lib": false}
	if !maps.Equal(mounts, want) {
		t.Errorf("mounts (path: read-only) %v, want %v", mounts, want)
	}
}

// A soak passes through to doctor in the pod, after --: the Job's
// deadline grows by the soak (15m + 20m), a --deadline given by name
// that would end the Job first is refused, and doctor's own flags are
// checked here, not in the cluster.
func TestK8sManifestSoak(t *testing.T) {
	r := testutil.RunBinary(t, 30*time.Second, "k8s", "manifest", "--storage-class", "gp2", "--size", "100Gi", "--mode", "doctor",
		"--", "--soak", "20m", "--soak-rate", "500", "--soak-interval", "10s")
	if r.Code != 0 {
		t.Fatalf("exit %d, stderr %q", r.Code, r.Stderr)
	}
	job := decodeJob(t, r.Stdout)
	c := job.Spec.Template.Spec.Containers[0]
	want := []string{"doctor", "--data-dir", "/data", "-o", "json", "--soak", "20m", "--soak-rate", "500", "--soak-interval", "10s"}
	if !slices.Equal(c.Args, want) {
		t.Errorf("args %q, want %q", c.Args, want)
	}
	if d := job.Spec.ActiveDeadlineSeconds; d == nil || *d != int64((35*time.Minute).Seconds()) {
		t.Errorf("activeDeadlineSeconds %v, want 2100 (15m and the 20m soak)", d)
	}
	r = testutil.RunBinary(t, 30*time.Second, "k8s", "manifest", "--mode", "node-doctor", "--node", "cp-1", "--deadline", "1h",
		"--", "--capacity", "--soak", "20m")
	if r.Code != 0 {
		t.Fatalf("node-doctor: exit %d, stderr %q", r.Code, r.Stderr)
	}
	if d := decodeJob(t, r.Stdout).Spec.ActiveDeadlineSeconds; d == nil || *d != 3600 {
		t.Errorf("--deadline 1h: activeDeadlineSeconds %v", d)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--storage-class", "gp2", "--size", "100Gi", "--mode", "doctor", "--deadline", "15m", "--", "--soak", "20m"},
			"--deadline 15m ends the Job before doctor's --soak 20m does: give --deadline 35m or more"},
		{[]string{"--storage-class", "gp2", "--size", "100Gi", "--mode", "doctor", "--", "--soak", "20"}, "for 'etcdperf doctor' in the pod"},
		{[]string{"--storage-class", "gp2", "--size", "100Gi", "--", "--soak", "20m"}, "for 'etcdperf disk' in the pod: unknown flag: --soak"},
	} {
		r := testutil.RunBinary(t, 30*time.Second, append([]string{"k8s", "manifest"}, c.args...)...)
		if r.Code != 2 || !strings.Contains(r.Stderr, c.want) || strings.Count(r.Stderr, "\n") != 1 || r.Stdout != "" {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 and one line with %q", c.args, r.Code, r.Stdout, r.Stderr, c.want)
		}
	}
}

// imageNote is what `k8s manifest` says on stderr without --image while
// no release has published the default image.
const imageNote = "etcdperf: note: no release has published ghcr.io/etcdperf/etcdperf:latest yet, so pods with it stay in ImagePullBackOff: " +
	"build and push the image (docker build -t REGISTRY/etcdperf:TAG . && docker push REGISTRY/etcdperf:TAG) and pass --image REGISTRY/etcdperf:TAG\n"

// A manifest applied as printed must not stick in ImagePullBackOff
// silently: without --image, one note on stderr says that the default
// image is not published and how to build one; stdout stays a Job that
// kubectl accepts. With --image there is no note.
func TestK8sManifestImageNote(t *testing.T) {
	for _, c := range []struct {
		args       []string
		image      string
		note, file bool
	}{
		{args: []string{"--node", "cp-1", "-n", "kube-system"}, image: "ghcr.io/etcdperf/etcdperf:latest", note: true},
		{args: []string{"--storage-class", "gp3", "--size", "10Gi"}, image: "ghcr.io/etcdperf/etcdperf:latest", note: true},
		{args: []string{"--node", "cp-1", "-o", "job.yaml"}, image: "ghcr.io/etcdperf/etcdperf:latest", note: true, file: true},
		{args: []string{"--node", "cp-1", "-n", "kube-system", "--image", "registry.example.com/etcdperf:v1.0.0"}, image: "registry.example.com/etcdperf:v1.0.0"},
		{args: []string{"--node", "cp-1", "--image=ghcr.io/etcdperf/etcdperf:latest"}, image: "ghcr.io/etcdperf/etcdperf:latest"},
	} {
		dir := t.TempDir()
		args := append([]string{"k8s", "manifest"}, c.args...)
		if c.file {
			args[len(args)-1] = filepath.Join(dir, "job.yaml")
		}
		r := testutil.RunBinary(t, 30*time.Second, args...)
		if r.Code != 0 {
			t.Fatalf("%v: exit %d, stderr %q", c.args, r.Code, r.Stderr)
		}
		if want := map[bool]string{true: imageNote}[c.note]; r.Stderr != want {
			t.Errorf("%v: stderr %q, want %q", c.args, r.Stderr, want)
		}
		manifest := r.Stdout
		if c.file {
			b, err := os.ReadFile(args[len(args)-1])
			if err != nil || r.Stdout != "" {
				t.Fatalf("%v: stdout %q, file: %v", c.args, r.Stdout, err)
			}
			manifest = string(b)
		}
		job := decodeJob(t, manifest)
		if img := job.Spec.Template.Spec.Containers[0].Image; img != c.image {
			t.Errorf("%v: image %q, want %q", c.args, img, c.image)
		}
	}
}

func TestK8sManifestUsageErrors(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		args []string
		want string
	}{
		{[]string{}, "say where to run"},
		{[]string{"--node", "cp-1", "--storage-class", "gp3", "--size", "10Gi"}, "exclude each other"},
		{[]string{"--storage-class", "gp3"}, "needs --size"},
		{[]string{"--storage-class", "gp3", "--size", "10GB!"}, "not a Kubernetes quantity"},
		{[]string{"--storage-class", "gp3", "--size", "-1Gi"}, "must be positive"},
		{[]string{"--storage-class", "gp3", "--size", "1Mi"}, "too small"},
		{[]string{"--storage-class", "Fast_SSD", "--size", "10Gi"}, "not a StorageClass name"},
		{[]string{"--node", "Node_1"}, "not a node name"},
		{[]string{"--node", "cp-1", "--namespace", "Kube-System"}, "not a valid namespace"},
		{[]string{"--node", "cp-1", "--name", "etcd.perf"}, "not a valid Job name"},
		{[]string{"--node", "cp-1", "--mode", "bench"}, "--mode must be disk, doctor or node-doctor"},
		{[]string{"--node", "cp-1", "--parallel", "3"}, "does not match"},
		{[]string{"--node", "cp-1", "--size", "10Gi"}, "--size goes with --storage-class"},
		{[]string{"--node", "cp-1", "--etcd-data-dir", "etcd"}, "absolute path"},
		{[]string{"--node", "cp-1", "--host-dir", "/var/lib/etcd/member/wal"}, "inside etcd's data dir"},
		{[]string{"--node", "cp-1", "--limits", "memory=32Mi"}, "more than its limit"},
		{[]string{"--node", "cp-1", "--requests", "cpu"}, "NAME=QUANTITY"},
		{[]string{"--node", "cp-1", "--ttl", "-1h"}, "--ttl must not be negative"},
		{[]string{"--node", "cp-1", "--ttl", "0"}, "as soon as it finishes"},
		{[]string{"--node", "cp-1", "--deadline", "0s"}, "forever"},
		{[]string{"--node", "cp-1", "-o", "json"}, "the manifest is YAML"},
		{[]string{"--node", "cp-1", "stray"}, "after --"},
		{[]string{"--node", "cp-1", "--", "--dir", "/x"}, "set by the Job"},
		{[]string{"--node", "cp-1", "--", "--runtime", "ten"}, "for 'etcdperf disk'"},
		{[]string{"--node", "cp-1", "--", "--no-such-flag"}, "unknown flag"},
		{[]string{"--node", "cp-1", "--no-such-flag"}, "unknown flag"},
		{[]string{"--node", "cp-1", "-o", filepath.Join(dir, "missing", "job.yaml")}, "missing does not exist"},
		{[]string{"--mode", "node-doctor", "--storage-class", "gp3", "--size", "10Gi"}, "do not go with --mode node-doctor"},
		{[]string{"--mode", "node-doctor", "--node", "cp-1", "--etcd-data-dir", "/var/lib/etcd"}, "finds etcd's data dir on the node itself"},
		{[]string{"--mode", "node-doctor", "--data-dir-parent", "lib"}, "must be an absolute path"},
		{[]string{"--mode", "node-doctor", "--data-dir-parent", "/etc"}, "read-only or not at all"},
		{[]string{"--mode", "node-doctor", "--node", "cp-1", "--", "--root", "/"}, "set by the Job"},
		{[]string{"--node", "cp-1", "--data-dir-parent", "/data"}, "--data-dir-parent goes with --mode node-doctor"},
	}
	for _, c := range cases {
		r := testutil.RunBinary(t, 30*time.Second, append([]string{"k8s", "manifest"}, c.args...)...)
		if r.Code != 2 || !strings.Contains(r.Stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and %q", c.args, r.Code, r.Stderr, c.want)
		}
		if strings.Count(strings.TrimSpace(r.Stderr), "\n") > 0 || r.Stdout != "" {
			t.Errorf("%v: want one line on stderr and nothing on stdout, got %q / %q", c.args, r.Stderr, r.Stdout)
		}
	}
	r := testutil.RunBinary(t, 30*time.Second, "k8s", "nosuch")
	if r.Code != 2 || !strings.Contains(r.Stderr, "unknown command") {
		t.Errorf("k8s nosuch: exit %d, %q", r.Code, r.Stderr)
	}
	assertEmptyDir(t, dir)
}

// measured checks that a run measured and printed its Result: exit 0, or 1
// with a failed verdict (this machine's disk is shared and may be slow).
func measured(t *testing.T, r testutil.Run) *result.Result {
	t.Helper()
	if r.Code != 0 && r.Code != 1 {
		t.Fatalf("exit %d\n%s", r.Code, r.Stderr)
	}
	res := decodeResult(t, r.Stdout)
	if r.Code == 1 && res.Verdict != result.Fail || res.Error != "" {
		t.Fatalf("exit %d, verdict %s, error %q", r.Code, res.Verdict, res.Error)
	}
	return res
}

// podArgs makes a manifest and returns the etcdperf arguments of its pod,
// with the container paths turned into this machine's (/host<p> is <p> on
// the node, and the StorageClass volume /data is dataDir) and $(NODE_NAME)
// expanded as Kubernetes does, to node.
func podArgs(t *testing.T, dataDir, node string, manifestArgs ...string) []string {
	t.Helper()
	r := testutil.RunBinary(t, 30*time.Second, append([]string{"k8s", "manifest"}, manifestArgs...)...)
	if r.Code != 0 {
		t.Fatalf("manifest %v: exit %d %s", manifestArgs, r.Code, r.Stderr)
	}
	c := decodeJob(t, r.Stdout).Spec.Template.Spec.Containers[0]
	if !slices.Equal(c.Command, []string{"etcdperf"}) {
		t.Fatalf("command %q", c.Command)
	}
	var args []string
	for _, a := range c.Args {
		switch {
		case strings.HasPrefix(a, "/host/"):
			a = strings.TrimPrefix(a, "/host")
		case a == "/data":
			a = dataDir
		}
		a = strings.ReplaceAll(a, "$(NODE_NAME)", node)
		args = append(args, a)
	}
	return args
}

// TestK8sPodCommandOnNode runs the command line of a --node Job's pod, as
// the Job carries it, on a directory standing for the node's /var/lib: it
// creates etcdperf-probe beside the etcd data dir, prints the Result JSON,
// and leaves the directory as it found it.
func TestK8sPodCommandOnNode(t *testing.T) {
	varLib := t.TempDir()
	etcd := filepath.Join(varLib, "etcd")
	if err := os.Mkdir(etcd, 0o700); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(etcd, "keep"), []byte("etcd's"), 0o600)
	args := podArgs(t, "", "cp-1", "--node", "cp-1", "--etcd-data-dir", etcd, "--", "--size", "256k")
	probe := filepath.Join(varLib, "etcdperf-probe")
	if !slices.Contains(args, probe) {
		t.Fatalf("args %q do not probe %s", args, probe)
	}
	cmd := exec.Command(testutil.Binary(t), args...)
	cmd.Env = append(os.Environ(), "NODE_NAME=cp-1")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	r := testutil.Wait(t, cmd, ctx)
	res := measured(t, r)
	if res.Kind != "disk" || res.Env.Dir != probe || res.Disk.Ops != (256<<10)/2300 || res.Name != "cp-1" {
		t.Errorf("Result: kind %s dir %s ops %d name %q", res.Kind, res.Env.Dir, res.Disk.Ops, res.Name)
	}
	if !strings.Contains(r.Stderr, "probing "+probe+" on node cp-1") {
		t.Errorf("stderr does not say where: %q", r.Stderr)
	}
	ents, _ := os.ReadDir(varLib)
	if len(ents) != 1 || ents[0].Name() != "etcd" {
		t.Errorf("left behind in the node's directory: %v", ents)
	}
	if b, _ := os.ReadFile(filepath.Join(etcd, "keep")); string(b) != "etcd's" {
		t.Error("etcd's data changed")
	}

	// A failed verdict keeps its exit code through in-dir and still cleans up.
	args = podArgs(t, "", "cp-1", "--node", "cp-1", "--etcd-data-dir", etcd, "--", "--size", "64k", "--limit", "disk_sync_p99=1ns")
	r = testutil.RunBinary(t, time.Minute, args...)
	if r.Code != 1 || decodeResult(t, r.Stdout).Verdict != result.Fail {
		t.Errorf("failed verdict: exit %d\n%s", r.Code, r.Stderr)
	}
	if _, err := os.Stat(probe); !os.IsNotExist(err) {
		t.Errorf("probe dir left after a failed verdict: %v", err)
	}
}

// TestK8sPodCommandOnVolume runs the command line of a --storage-class
// Job's pod on a directory standing for the fresh volume.
func TestK8sPodCommandOnVolume(t *testing.T) {
	vol := t.TempDir()
	args := podArgs(t, vol, "", "--storage-class", "gp3", "--size", "10Gi", "--", "--size", "128k")
	r := testutil.RunBinary(t, time.Minute, args...)
	if res := measured(t, r); res.Env.Dir != vol || res.Disk.Ops != (128<<10)/2300 {
		t.Errorf("Result dir %s ops %d", res.Env.Dir, res.Disk.Ops)
	}
	assertEmptyDir(t, vol)
}

// TestK8sInDirOtherDisk: etcd's data dir on another file system than its
// parent (a dedicated disk) stops the pod before it writes anything.
func TestK8sInDirOtherDisk(t *testing.T) {
	shm, err := os.MkdirTemp("/dev/shm", "etcdperf-e2e-")
	if err != nil {
		t.Skipf("skipped: needs /dev/shm: %v", err)
	}
	defer os.RemoveAll(shm)
	parent := t.TempDir()
	probe := filepath.Join(parent, "etcdperf-probe")
	r := testutil.RunBinary(t, 30*time.Second, "k8s", "in-dir", "--dir", probe, "--beside", shm, "--", "disk", "--dir", probe, "--size", "64k")
	if r.Code != 2 || !strings.Contains(r.Stderr, "--host-dir") || r.Stdout != "" {
		t.Errorf("exit %d, stderr %q; want exit 2 pointing to --host-dir", r.Code, r.Stderr)
	}
	assertEmptyDir(t, parent)
}

// TestK8sInDirNotOwner: a directory of another user gives one line that
// says which --run-as-user to use.
func TestK8sInDirNotOwner(t *testing.T) {
	parent := t.TempDir()
	os.Chmod(parent, 0o755)
	os.Chmod(filepath.Dir(parent), 0o755)
	probe := filepath.Join(parent, "etcdperf-probe")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, testutil.Binary(t), "k8s", "in-dir", "--dir", probe, "--", "disk", "--dir", probe, "--size", "64k")
	testutil.RunAsNobody(t, cmd)
	r := testutil.Wait(t, cmd, ctx)
	if r.Code != 2 || !strings.Contains(r.Stderr, "--run-as-user 0") || strings.Count(strings.TrimSpace(r.Stderr), "\n") > 0 {
		t.Errorf("exit %d, stderr %q; want exit 2 and one line naming --run-as-user 0", r.Code, r.Stderr)
	}
	assertEmptyDir(t, parent)
}

func TestK8sHelp(t *testing.T) {
	for _, args := range [][]string{{"k8s", "--help"}, {"k8s", "manifest", "--help"}} {
		r := testutil.RunBinary(t, 30*time.Second, args...)
		if r.Code != 0 || !strings.Contains(r.Stdout, "Examples:") || !strings.Contains(r.Stdout, "kubectl apply -f -") {
			t.Errorf("%v: exit %d, no examples:\n%s", args, r.Code, r.Stdout)
		}
	}
	// The in-pod helper is hidden from the command list.
	r := testutil.RunBinary(t, 30*time.Second, "k8s", "--help")
	if strings.Contains(r.Stdout, "in-dir") {
		t.Errorf("k8s --help lists the hidden in-dir:\n%s", r.Stdout)
	}
}

// TestK8sInDirTerminated: the deadline of a Job ends its pod with SIGTERM;
// the probe stops, and the directory it created on the node is removed.
func TestK8sInDirTerminated(t *testing.T) {
	parent := t.TempDir()
	probe := filepath.Join(parent, "etcdperf-probe")
	r := signalWhenProbing(t, probe, syscall.SIGTERM, "k8s", "in-dir", "--dir", probe, "--", "disk", "--dir", probe, "--runtime", "20s", "-o", "json")
	if r.Code != 2 || !strings.Contains(r.Stderr, "interrupted") {
		t.Errorf("exit %d, stderr %q; want 2 and 'interrupted'", r.Code, r.Stderr)
	}
	// The partial Result is in the log.
	if res := decodeResult(t, r.Stdout); res.Error == "" || res.Disk == nil || res.Disk.Ops == 0 {
		t.Errorf("partial Result: error %q disk %+v", res.Error, res.Disk)
	}
	assertEmptyDir(t, parent)
}

// signalWhenProbing runs etcdperf with args, sends it sig once its probe
// files are in dir, and returns how it ended.
func signalWhenProbing(t *testing.T, dir string, sig os.Signal, args ...string) testutil.Run {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, testutil.Binary(t), args...)
	done := make(chan testutil.Run, 1)
	go func() { done <- testutil.Wait(t, cmd, ctx) }()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if m, _ := filepath.Glob(filepath.Join(dir, ".etcdperf-probe-*")); len(m) > 0 {
			break
		}
	}
	time.Sleep(200 * time.Millisecond)
	if err := cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	return <-done
}

// TestK8sLogsToReport: the logs of a Job's pods, as `kubectl logs -l ...`
// prints them (each pod's stderr line, then its Result JSON), go to
// `etcdperf report -` as they are, one run per node, named after it.
func TestK8sLogsToReport(t *testing.T) {
	var logs bytes.Buffer
	for _, node := range []string{"cp-1", "cp-2"} {
		varLib := t.TempDir()
		os.Mkdir(filepath.Join(varLib, "etcd"), 0o700)
		args := podArgs(t, "", node, "--node", "cp-1,cp-2", "--etcd-data-dir", filepath.Join(varLib, "etcd"),
			"--", "--size", "64k", "--limit", "disk_sync_p99=1h")
		out, err := exec.Command(testutil.Binary(t), args...).CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", node, err, out)
		}
		logs.Write(out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	html := filepath.Join(t.TempDir(), "report.html")
	cmd := exec.CommandContext(ctx, testutil.Binary(t), "report", "-", "-o", "json", "-o", html)
	cmd.Stdin = &logs
	r := testutil.Wait(t, cmd, ctx)
	if r.Code != 0 {
		t.Fatalf("report: exit %d\n%s", r.Code, r.Stderr)
	}
	res := decodeResult(t, r.Stdout)
	var names []string
	for _, run := range res.Runs {
		names = append(names, run.Name)
	}
	if !slices.Equal(names, []string{"cp-1", "cp-2"}) {
		t.Errorf("report runs %q, want one per node named after it", names)
	}
	if b, err := os.ReadFile(html); err != nil || !bytes.Contains(b, []byte("cp-2")) {
		t.Errorf("the HTML report does not name the nodes (%v)", err)
	}
}
