package e2e

import (
	"net"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/etcdperf/etcdperf/internal/result"
	"github.com/etcdperf/etcdperf/internal/testutil"
)

// kubeadmEtcdManifest is the etcd static pod manifest kubeadm writes for
// member cp-1, advertising advertise, listening for clients on listen,
// with more flags (e.g. --listen-metrics-urls).
func kubeadmEtcdManifest(t *testing.T, advertise, listen string, more ...string) []byte {
	t.Helper()
	command := append([]string{"etcd",
		"--advertise-client-urls=" + advertise,
		"--cert-file=/etc/kubernetes/pki/etcd/server.crt",
		"--client-cert-auth=true",
		"--data-dir=/var/lib/etcd",
		"--key-file=/etc/kubernetes/pki/etcd/server.key",
		"--listen-client-urls=" + listen,
		"--name=cp-1",
		"--trusted-ca-file=/etc/kubernetes/pki/etcd/ca.crt",
	}, more...)
	pod := corev1.Pod{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Name: "etcd", Namespace: "kube-system"},
		Spec: corev1.PodSpec{
			HostNetwork: true,
			Containers: []corev1.Container{{
				Name:         "etcd",
				Command:      command,
				VolumeMounts: []corev1.VolumeMount{{Name: "etcd-data", MountPath: "/var/lib/etcd"}, {Name: "etcd-certs", MountPath: "/etc/kubernetes/pki/etcd"}},
			}},
			Volumes: []corev1.Volume{
				{Name: "etcd-certs", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/etc/kubernetes/pki/etcd"}}},
				{Name: "etcd-data", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/var/lib/etcd"}}},
			},
		},
	}
	manifest, err := yaml.Marshal(pod)
	if err != nil {
		t.Fatal(err)
	}
	return manifest
}

// kubeadmRoot builds a control-plane node's files as kubeadm leaves them:
// the etcd static pod manifest, etcd's PKI and kubelet's pod log. Its
// member listens for clients on 10.0.0.5:2379 and on a loopback port where
// something listens (no etcd: nothing answers).
func kubeadmRoot(t *testing.T) string {
	t.Helper()
	root, _ := kubeadmRootPort(t)
	return root
}

// kubeadmRootPort is kubeadmRoot that also returns the loopback port.
func kubeadmRootPort(t *testing.T) (string, string) {
	t.Helper()
	root := t.TempDir()
	_, port, _ := net.SplitHostPort(testutil.SilentListener(t))
	manifest := kubeadmEtcdManifest(t, "https://10.0.0.5:2379", "https://127.0.0.1:"+port+",https://10.0.0.5:2379", "--listen-metrics-urls=http://127.0.0.1:2381")
	files := map[string][]byte{
		"etc/kubernetes/manifests/etcd.yaml":                 manifest,
		"etc/kubernetes/pki/etcd/ca.crt":                     []byte("ca"),
		"etc/kubernetes/pki/etcd/healthcheck-client.crt":     []byte("c"),
		"etc/kubernetes/pki/etcd/healthcheck-client.key":     []byte("k"),
		"var/log/pods/kube-system_etcd-cp-1_4d2a/etcd/0.log": []byte("{}\n"),
	}
	for p, b := range files {
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root, port
}

func TestDiscoverKubeadm(t *testing.T) {
	root, port := kubeadmRootPort(t)
	r := testutil.RunBinary(t, 30*time.Second, "discover", "--root", root)
	if r.Code != 0 {
		t.Fatalf("exit %d, stderr %q", r.Code, r.Stderr)
	}
	for _, want := range []string{
		"etcd from kubeadm's static pod: /etc/kubernetes/manifests/etcd.yaml",
		"name:      cp-1",
		"data dir:  /var/lib/etcd",
		"endpoints: https://127.0.0.1:" + port + ", https://10.0.0.5:2379",
		"metrics:   http://127.0.0.1:2381/metrics",
		"cert:      /etc/kubernetes/pki/etcd/healthcheck-client.crt",
		"log:       /var/log/pods/kube-system_etcd-cp-1_4d2a/etcd/0.log",
		"connect:   --endpoints https://127.0.0.1:" + port + " --cacert /etc/kubernetes/pki/etcd/ca.crt --cert /etc/kubernetes/pki/etcd/healthcheck-client.crt --key /etc/kubernetes/pki/etcd/healthcheck-client.key",
	} {
		if !strings.Contains(r.Stdout, want) {
			t.Errorf("text output lacks %q:\n%s", want, r.Stdout)
		}
	}
	if strings.Contains(r.Stdout, "missing") || strings.Contains(r.Stdout, "nothing listens") {
		t.Errorf("nothing is missing and something listens, yet:\n%s", r.Stdout)
	}

	// Remove the CA: it is listed as missing.
	if err := os.Remove(filepath.Join(root, "etc/kubernetes/pki/etcd/ca.crt")); err != nil {
		t.Fatal(err)
	}
	r = testutil.RunBinary(t, 30*time.Second, "discover", "--root", root, "-o", "json")
	if r.Code != 0 {
		t.Fatalf("json: exit %d, stderr %q", r.Code, r.Stderr)
	}
	res, err := result.Decode(strings.NewReader(r.Stdout))
	if err != nil {
		t.Fatalf("json: %v\n%s", err, r.Stdout)
	}
	if res.Kind != "discover" || res.Discover == nil || len(res.Discover.Found) != 1 {
		t.Fatalf("json: kind %q, discover %+v", res.Kind, res.Discover)
	}
	f := res.Discover.Found[0]
	if f.Source != "kubeadm" || f.Name != "cp-1" || f.DataDir != "/var/lib/etcd" ||
		!reflect.DeepEqual(f.Endpoints, []string{"https://127.0.0.1:" + port, "https://10.0.0.5:2379"}) || f.NothingListens != nil ||
		f.Key != "/etc/kubernetes/pki/etcd/healthcheck-client.key" ||
		!reflect.DeepEqual(f.Missing, []string{"/etc/kubernetes/pki/etcd/ca.crt"}) {
		t.Errorf("json: found %+v", f)
	}
}

func TestDiscoverNothing(t *testing.T) {
	root := t.TempDir()
	h := testutil.RunBinary(t, 30*time.Second, "discover", "--help")
	if h.Code != 0 || !strings.Contains(h.Stdout, "Examples:") || !strings.Contains(h.Stdout, "--root") {
		t.Errorf("discover --help (exit %d) lacks examples or --root:\n%s", h.Code, h.Stdout)
	}
	for _, args := range [][]string{{"discover", "--root", root}, {"discover", "--root", root, "-o", "json"}} {
		r := testutil.RunBinary(t, 30*time.Second, args...)
		if r.Code != 2 || r.Stdout != "" {
			t.Errorf("%v: exit %d, stdout %q; want exit 2 and nothing on stdout", args, r.Code, r.Stdout)
		}
		lines := strings.Split(strings.TrimSuffix(r.Stderr, "\n"), "\n")
		if len(lines) != 1 || !strings.HasPrefix(lines[0], "etcdperf: no etcd found on this node under "+root+"; looked at /etc/kubernetes/manifests/etcd.yaml, ") ||
			!strings.HasSuffix(lines[0], "/etc/etcd/etcd.conf.yml") {
			t.Errorf("%v: stderr %q, want one line naming what was looked at", args, r.Stderr)
		}
	}
	r := testutil.RunBinary(t, 30*time.Second, "discover", "--root", filepath.Join(root, "missing"))
	if r.Code != 2 || !strings.Contains(r.Stderr, "--root") {
		t.Errorf("missing root: exit %d, stderr %q", r.Code, r.Stderr)
	}
}

// writeNode writes a node's files (path as on the node -> content) under
// a temporary root and returns it.
func writeNode(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for p, c := range files {
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// debianEtcdDefault is /etc/default/etcd as Debian's etcd-server installs
// it: every line a comment.
const debianEtcdDefault = `## etcd(1) daemon options
## See "/usr/share/doc/etcd-server/op-guide/configuration.md.gz"

### Member flags

##### --name
## Human-readable name for this member.
# ETCD_NAME="default"

##### --listen-client-urls
## default: "http://localhost:2379"
# ETCD_LISTEN_CLIENT_URLS="http://localhost:2379"
`

// A node where etcd-server is installed and nothing configured: its
// commented-out /etc/default/etcd is no find.
func TestDiscoverCommentsOnly(t *testing.T) {
	root := writeNode(t, map[string]string{"etc/default/etcd": debianEtcdDefault})
	r := testutil.RunBinary(t, 30*time.Second, "discover", "--root", root)
	lines := strings.Split(strings.TrimSuffix(r.Stderr, "\n"), "\n")
	if r.Code != 2 || r.Stdout != "" || len(lines) != 1 ||
		!strings.HasPrefix(lines[0], "etcdperf: no etcd found on this node under "+root+"; looked at /etc/kubernetes/manifests/etcd.yaml, ") ||
		!strings.HasSuffix(lines[0], "; /etc/default/etcd: read, no etcd settings") {
		t.Errorf("exit %d, stdout %q, stderr %q; want exit 2 and one line saying nothing was found", r.Code, r.Stdout, r.Stderr)
	}
}

// A node whose etcd configuration is there but whose etcd does not run:
// discover prints what it found, says that nothing listens there, and
// exits 2.
func TestDiscoverNothingListens(t *testing.T) {
	ep := "http://127.0.0.1:" + itoa(testutil.FreePort(t))
	root := writeNode(t, map[string]string{"etc/default/etcd": debianEtcdDefault +
		"ETCD_NAME=n1\nETCD_DATA_DIR=/var/lib/etcd/default\nETCD_LISTEN_CLIENT_URLS=" + ep + "\n"})
	line := "etcdperf: etcd found in /etc/default/etcd, but nothing listens at " + ep + "; its log: journalctl -u etcd\n"
	r := testutil.RunBinary(t, 30*time.Second, "discover", "--root", root)
	if r.Code != 2 || r.Stderr != line {
		t.Errorf("exit %d, stderr %q; want 2 and %q", r.Code, r.Stderr, line)
	}
	for _, want := range []string{"etcd from etcd's systemd configuration: /etc/default/etcd\n", "  data dir:  /var/lib/etcd/default\n",
		"  found in /etc/default/etcd, but nothing listens at " + ep + "\n"} {
		if !strings.Contains(r.Stdout, want) {
			t.Errorf("text output lacks %q:\n%s", want, r.Stdout)
		}
	}
	r = testutil.RunBinary(t, 30*time.Second, "discover", "--root", root, "-o", "json")
	if r.Code != 2 || r.Stderr != line {
		t.Errorf("json: exit %d, stderr %q", r.Code, r.Stderr)
	}
	res := decodeResult(t, r.Stdout)
	if res.Discover == nil || len(res.Discover.Found) != 1 || !reflect.DeepEqual(res.Discover.Found[0].NothingListens, []string{ep}) ||
		!strings.Contains(res.Summary, "nothing listens") {
		t.Errorf("json: summary %q, discover %+v", res.Summary, res.Discover)
	}
}

// doctor --node on a node whose etcd's manifest is there but whose etcd
// does not run says so in one line, before measuring, and leaves nothing.
func TestDoctorNodeNothingListens(t *testing.T) {
	ep := "127.0.0.1:" + itoa(testutil.FreePort(t))
	root := writeNode(t, map[string]string{
		"etc/kubernetes/manifests/etcd.yaml":             string(kubeadmEtcdManifest(t, "https://"+ep, "https://"+ep)),
		"etc/kubernetes/pki/etcd/ca.crt":                 "ca",
		"etc/kubernetes/pki/etcd/healthcheck-client.crt": "c",
		"etc/kubernetes/pki/etcd/healthcheck-client.key": "k",
	})
	cwd := t.TempDir()
	r := runEnv(t, 30*time.Second, cwd, nil, "doctor", "--node", "--root", root)
	want := "etcd found in /etc/kubernetes/manifests/etcd.yaml, but nothing listens at https://" + ep + "; its log: kubectl -n kube-system logs etcd-NODE -c etcd (no log under /var/log/pods)"
	if r.Code != 2 || r.Stdout != "" || strings.Count(strings.TrimSpace(r.Stderr), "\n") != 0 || !strings.Contains(r.Stderr, want) {
		t.Errorf("exit %d, stdout %q, stderr %q; want exit 2 and one line %q", r.Code, r.Stdout, r.Stderr, want)
	}
	if left := entries(t, root); contains(left, "var") {
		t.Errorf("left behind under the root: %v", left)
	}
	assertEmptyDir(t, cwd)
}
