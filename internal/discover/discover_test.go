package discover

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/etcdperf/etcdperf/internal/cluster"
	"github.com/etcdperf/etcdperf/internal/result"
)

// node is a fake node's file system: path as on the node -> content.
type node map[string]string

func (n node) build(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	for p, c := range n {
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

func hostPathVolume(name, p string) corev1.Volume {
	return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: p}}}
}

// KubeadmManifest is the etcd static pod kubeadm writes (its flags and
// volumes as in kubeadm's phases/etcd/local.go).
func KubeadmManifest(t *testing.T, nodeName, ip string) string {
	t.Helper()
	pod := corev1.Pod{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Name: "etcd", Namespace: "kube-system", Labels: map[string]string{"component": "etcd", "tier": "control-plane"}},
		Spec: corev1.PodSpec{
			HostNetwork: true,
			Containers: []corev1.Container{{
				Name:  "etcd",
				Image: "registry.k8s.io/etcd:3.5.21-0",
				Command: []string{
					"etcd",
					"--advertise-client-urls=https://" + ip + ":2379",
					"--cert-file=/etc/kubernetes/pki/etcd/server.crt",
					"--client-cert-auth=true",
					"--data-dir=/var/lib/etcd",
					"--initial-advertise-peer-urls=https://" + ip + ":2380",
					"--initial-cluster=" + nodeName + "=https://" + ip + ":2380",
					"--key-file=/etc/kubernetes/pki/etcd/server.key",
					"--listen-client-urls=https://127.0.0.1:2379,https://" + ip + ":2379",
					"--listen-metrics-urls=http://127.0.0.1:2381",
					"--listen-peer-urls=https://" + ip + ":2380",
					"--name=" + nodeName,
					"--peer-cert-file=/etc/kubernetes/pki/etcd/peer.crt",
					"--peer-client-cert-auth=true",
					"--peer-key-file=/etc/kubernetes/pki/etcd/peer.key",
					"--peer-trusted-ca-file=/etc/kubernetes/pki/etcd/ca.crt",
					"--snapshot-count=10000",
					"--trusted-ca-file=/etc/kubernetes/pki/etcd/ca.crt",
				},
				VolumeMounts: []corev1.VolumeMount{
					{Name: "etcd-data", MountPath: "/var/lib/etcd"},
					{Name: "etcd-certs", MountPath: "/etc/kubernetes/pki/etcd"},
				},
			}},
			Volumes: []corev1.Volume{
				hostPathVolume("etcd-certs", "/etc/kubernetes/pki/etcd"),
				hostPathVolume("etcd-data", "/var/lib/etcd"),
			},
		},
	}
	b, err := yaml.Marshal(pod)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// openshiftManifest is the shape of the cluster-etcd-operator's etcd pod:
// a shell script that execs etcd, env, and the certificates mounted from
// static-pod-resources.
func openshiftPod(t *testing.T) string {
	t.Helper()
	pod := corev1.Pod{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Name: "etcd", Namespace: "openshift-etcd"},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "etcdctl", Command: []string{"/bin/bash", "-c", "trap TERM INT; sleep infinity"}}, {
				Name: "etcd",
				Command: []string{"/bin/sh", "-c", `#!/bin/sh
set -euo pipefail
exec nice -n -19 ionice -c2 -n0 etcd \
  --logger=zap \
  --log-level=info \
  --cert-file=/etc/kubernetes/static-pod-certs/secrets/etcd-all-certs/etcd-serving-${NODE_NAME}.crt \
  --key-file=/etc/kubernetes/static-pod-certs/secrets/etcd-all-certs/etcd-serving-${NODE_NAME}.key \
  --trusted-ca-file=/etc/kubernetes/static-pod-certs/configmaps/etcd-serving-ca/ca-bundle.crt \
  --client-cert-auth=true \
  --advertise-client-urls=https://10.0.0.7:2379 \
  --listen-client-urls=https://0.0.0.0:2379 \
  --listen-metrics-urls=https://0.0.0.0:9978 \
  --listen-peer-urls=https://0.0.0.0:2380`},
				Env: []corev1.EnvVar{
					{Name: "ETCD_DATA_DIR", Value: "/var/lib/etcd"},
					{Name: "ETCD_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "spec.nodeName"}}},
				},
				VolumeMounts: []corev1.VolumeMount{
					{Name: "cert-dir", MountPath: "/etc/kubernetes/static-pod-certs"},
					{Name: "data-dir", MountPath: "/var/lib/etcd/"},
				},
			}},
			Volumes: []corev1.Volume{
				hostPathVolume("cert-dir", "/etc/kubernetes/static-pod-resources/etcd-certs"),
				hostPathVolume("data-dir", "/var/lib/etcd"),
			},
		},
	}
	b, err := yaml.Marshal(pod)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// rancherConfig is the etcd config file k3s and RKE2 write
// (server/db/etcd/config, etcd's YAML keys).
func rancherConfig(dist string) string {
	tls := "/var/lib/rancher/" + dist + "/server/tls/etcd/"
	return `advertise-client-urls: https://10.0.0.6:2379
client-transport-security:
  cert-file: ` + tls + `server-client.crt
  client-cert-auth: true
  key-file: ` + tls + `server-client.key
  trusted-ca-file: ` + tls + `server-ca.crt
data-dir: /var/lib/rancher/` + dist + `/server/db/etcd
election-timeout: 5000
heartbeat-interval: 500
listen-client-urls: https://127.0.0.1:2379,https://10.0.0.6:2379
listen-metrics-urls: http://127.0.0.1:2381
listen-peer-urls: https://127.0.0.1:2380,https://10.0.0.6:2380
log-outputs:
- stderr
logger: zap
name: server-1-5f1c2d3e
peer-transport-security:
  cert-file: ` + tls + `peer-server-client.crt
  client-cert-auth: true
  key-file: ` + tls + `peer-server-client.key
  trusted-ca-file: ` + tls + `peer-ca.crt
`
}

func TestFind(t *testing.T) {
	const pki = "/etc/kubernetes/pki/"
	cases := []struct {
		name  string
		files node
		// logs are written after files, oldest first, with rising mtimes.
		logs     []string
		want     []result.FoundEtcd
		problems []string // files with a problem
		// noSettings are the files read that set nothing for etcd.
		noSettings []string
	}{{
		name: "kubeadm",
		files: node{
			kubeadmManifest:                     KubeadmManifest(t, "cp-1", "10.0.0.5"),
			pki + "etcd/ca.crt":                 "ca",
			pki + "etcd/healthcheck-client.crt": "c",
			pki + "etcd/healthcheck-client.key": "k",
			pki + "apiserver-etcd-client.crt":   "c",
			pki + "apiserver-etcd-client.key":   "k",
			"/var/log/pods/kube-system_kube-apiserver-cp-1_u1/kube-apiserver/0.log": "x",
		},
		logs: []string{"/var/log/pods/kube-system_etcd-cp-1_9f8e/etcd/1.log", "/var/log/pods/kube-system_etcd-cp-1_9f8e/etcd/0.log"},
		want: []result.FoundEtcd{{
			Source: "kubeadm", File: kubeadmManifest, Name: "cp-1", DataDir: "/var/lib/etcd",
			Endpoints:           []string{"https://127.0.0.1:2379", "https://10.0.0.5:2379"},
			ListenClientURLs:    []string{"https://127.0.0.1:2379", "https://10.0.0.5:2379"},
			AdvertiseClientURLs: []string{"https://10.0.0.5:2379"},
			MetricsURL:          "http://127.0.0.1:2381/metrics",
			CACert:              pki + "etcd/ca.crt", Cert: pki + "etcd/healthcheck-client.crt", Key: pki + "etcd/healthcheck-client.key",
			Log:   "/var/log/pods/kube-system_etcd-cp-1_9f8e/etcd/0.log",
			Flags: map[string]string{"snapshot-count": "10000"},
		}},
	}, {
		name: "kubeadm without the health check's certificate nor the CA",
		files: node{
			kubeadmManifest:                   KubeadmManifest(t, "cp-2", "10.0.0.8"),
			pki + "apiserver-etcd-client.crt": "c",
			pki + "apiserver-etcd-client.key": "k",
		},
		want: []result.FoundEtcd{{
			Source: "kubeadm", File: kubeadmManifest, Name: "cp-2", DataDir: "/var/lib/etcd",
			Endpoints:           []string{"https://127.0.0.1:2379", "https://10.0.0.8:2379"},
			ListenClientURLs:    []string{"https://127.0.0.1:2379", "https://10.0.0.8:2379"},
			AdvertiseClientURLs: []string{"https://10.0.0.8:2379"},
			MetricsURL:          "http://127.0.0.1:2381/metrics",
			CACert:              pki + "etcd/ca.crt", Cert: pki + "apiserver-etcd-client.crt", Key: pki + "apiserver-etcd-client.key",
			Missing: []string{pki + "etcd/ca.crt"},
			Log:     "kubectl -n kube-system logs etcd-NODE -c etcd (no log under /var/log/pods)",
			Flags:   map[string]string{"snapshot-count": "10000"},
		}},
	}, {
		name: "k3s",
		files: node{
			"/var/lib/rancher/k3s/server/db/etcd/config":             rancherConfig("k3s"),
			"/var/lib/rancher/k3s/server/tls/etcd/client.crt":        "c",
			"/var/lib/rancher/k3s/server/tls/etcd/client.key":        "k",
			"/var/lib/rancher/k3s/server/tls/etcd/server-ca.crt":     "ca",
			"/var/lib/rancher/k3s/server/tls/etcd/server-client.crt": "c",
		},
		want: []result.FoundEtcd{{
			Source: "k3s", File: "/var/lib/rancher/k3s/server/db/etcd/config", Name: "server-1-5f1c2d3e",
			DataDir:             "/var/lib/rancher/k3s/server/db/etcd",
			Endpoints:           []string{"https://127.0.0.1:2379", "https://10.0.0.6:2379"},
			ListenClientURLs:    []string{"https://127.0.0.1:2379", "https://10.0.0.6:2379"},
			AdvertiseClientURLs: []string{"https://10.0.0.6:2379"},
			MetricsURL:          "http://127.0.0.1:2381/metrics",
			CACert:              "/var/lib/rancher/k3s/server/tls/etcd/server-ca.crt",
			Cert:                "/var/lib/rancher/k3s/server/tls/etcd/client.crt",
			Key:                 "/var/lib/rancher/k3s/server/tls/etcd/client.key",
			Log:                 "journalctl -u k3s (etcd logs in k3s' own log)", Unit: "k3s",
			Flags: map[string]string{"heartbeat-interval": "500", "election-timeout": "5000"},
		}},
	}, {
		name: "rke2 with only the server's certificate",
		files: node{
			"/var/lib/rancher/rke2/server/db/etcd/config":             rancherConfig("rke2"),
			"/var/lib/rancher/rke2/server/tls/etcd/server-client.crt": "c",
			"/var/lib/rancher/rke2/server/tls/etcd/server-client.key": "k",
		},
		logs: []string{"/var/log/pods/kube-system_etcd-rke2-a_77/etcd/0.log"},
		want: []result.FoundEtcd{{
			Source: "rke2", File: "/var/lib/rancher/rke2/server/db/etcd/config", Name: "server-1-5f1c2d3e",
			DataDir:             "/var/lib/rancher/rke2/server/db/etcd",
			Endpoints:           []string{"https://127.0.0.1:2379", "https://10.0.0.6:2379"},
			ListenClientURLs:    []string{"https://127.0.0.1:2379", "https://10.0.0.6:2379"},
			AdvertiseClientURLs: []string{"https://10.0.0.6:2379"},
			MetricsURL:          "http://127.0.0.1:2381/metrics",
			CACert:              "/var/lib/rancher/rke2/server/tls/etcd/server-ca.crt",
			Cert:                "/var/lib/rancher/rke2/server/tls/etcd/server-client.crt",
			Key:                 "/var/lib/rancher/rke2/server/tls/etcd/server-client.key",
			Missing:             []string{"/var/lib/rancher/rke2/server/tls/etcd/server-ca.crt"},
			Log:                 "/var/log/pods/kube-system_etcd-rke2-a_77/etcd/0.log",
			Flags:               map[string]string{"heartbeat-interval": "500", "election-timeout": "5000"},
		}},
	}, {
		name: "openshift, newest revision, this node's peer certificate",
		files: node{
			"/etc/hostname": "master-1\n",
			"/etc/kubernetes/static-pod-resources/etcd-pod-3/etcd-pod.yaml":   "old: [",
			"/etc/kubernetes/static-pod-resources/etcd-pod-12/etcd-pod.yaml":  openshiftPod(t),
			openshiftCerts + "/secrets/etcd-all-certs/etcd-peer-master-0.crt": "c",
			openshiftCerts + "/secrets/etcd-all-certs/etcd-peer-master-1.crt": "c",
			openshiftCerts + "/secrets/etcd-all-certs/etcd-peer-master-1.key": "k",
			openshiftCerts + "/configmaps/etcd-serving-ca/ca-bundle.crt":      "ca",
		},
		logs: []string{"/var/log/pods/openshift-etcd_etcd-master-1_ab12/etcd/0.log"},
		want: []result.FoundEtcd{{
			Source: "openshift", File: "/etc/kubernetes/static-pod-resources/etcd-pod-12/etcd-pod.yaml",
			Name:                "master-1",
			DataDir:             "/var/lib/etcd",
			Endpoints:           []string{"https://127.0.0.1:2379"},
			ListenClientURLs:    []string{"https://0.0.0.0:2379"},
			AdvertiseClientURLs: []string{"https://10.0.0.7:2379"},
			MetricsURL:          "https://127.0.0.1:9978/metrics",
			CACert:              openshiftCerts + "/configmaps/etcd-serving-ca/ca-bundle.crt",
			Cert:                openshiftCerts + "/secrets/etcd-all-certs/etcd-peer-master-1.crt",
			Key:                 openshiftCerts + "/secrets/etcd-all-certs/etcd-peer-master-1.key",
			Log:                 "/var/log/pods/openshift-etcd_etcd-master-1_ab12/etcd/0.log",
		}},
	}, {
		name: "systemd environment file and etcd.conf.yml",
		files: node{
			"/etc/default/etcd": `# Debian's etcd-server
ETCD_NAME="node-a"
ETCD_DATA_DIR=/var/lib/etcd/default
export ETCD_LISTEN_CLIENT_URLS='http://0.0.0.0:2379,http://[::]:2379'
ETCD_ADVERTISE_CLIENT_URLS=http://192.168.1.4:2379
#ETCD_LISTEN_METRICS_URLS=http://127.0.0.1:2381
`,
			etcdConfYAML: `name: node-b
data-dir: /srv/etcd
listen-client-urls: https://[::1]:2379,https://127.0.0.1:2379
client-transport-security:
  cert-file: /etc/etcd/server.crt
  key-file: /etc/etcd/server.key
  trusted-ca-file: /etc/etcd/ca.crt
  client-cert-auth: true
`,
			"/etc/etcd/server.crt": "c",
			"/etc/etcd/server.key": "k",
		},
		want: []result.FoundEtcd{{
			Source: "systemd", File: "/etc/default/etcd", Name: "node-a", DataDir: "/var/lib/etcd/default",
			Endpoints:           []string{"http://127.0.0.1:2379"},
			ListenClientURLs:    []string{"http://0.0.0.0:2379", "http://[::]:2379"},
			AdvertiseClientURLs: []string{"http://192.168.1.4:2379"},
			Log:                 "journalctl -u etcd", Unit: "etcd",
		}, {
			Source: "systemd", File: etcdConfYAML, Name: "node-b", DataDir: "/srv/etcd",
			Endpoints:        []string{"https://127.0.0.1:2379", "https://[::1]:2379"},
			ListenClientURLs: []string{"https://[::1]:2379", "https://127.0.0.1:2379"},
			CACert:           "/etc/etcd/ca.crt", Cert: "/etc/etcd/server.crt", Key: "/etc/etcd/server.key",
			Missing: []string{"/etc/etcd/ca.crt"},
			Log:     "journalctl -u etcd", Unit: "etcd",
			Notes: []string{"cert and key are the server's own (etcd's --cert-file), which clients can use when it allows client authentication"},
		}},
	}, {
		// What Debian's etcd-server installs: every line a comment. It
		// configures no etcd, and neither do files that hold nothing.
		name: "files that set nothing for etcd",
		files: node{
			"/etc/default/etcd":   debianDefault,
			"/etc/sysconfig/etcd": "#ETCD_NAME=default\nGOMAXPROCS=2\n\n",
			etcdConfYAML:          "# name: default\n# data-dir: /var/lib/etcd\n",
			kubeadmManifest:       "",
			"/var/lib/rancher/k3s/server/db/etcd/config": "---\n# written by k3s\n",
			// The installed manifest holds nothing: the revision is
			// not what kubelet runs.
			openshiftManifest: "\n",
			"/etc/kubernetes/static-pod-resources/etcd-pod-4/etcd-pod.yaml": openshiftPod(t),
		},
		noSettings: []string{kubeadmManifest, "/var/lib/rancher/k3s/server/db/etcd/config", openshiftManifest,
			"/etc/default/etcd", "/etc/sysconfig/etcd", etcdConfYAML},
	}, {
		name:  "one setting in Debian's file",
		files: node{"/etc/default/etcd": debianDefault + "ETCD_DATA_DIR=/srv/etcd\n"},
		want: []result.FoundEtcd{{
			Source: "systemd", File: "/etc/default/etcd", DataDir: "/srv/etcd",
			Endpoints:        []string{"http://localhost:2379"},
			ListenClientURLs: []string{"http://localhost:2379"},
			Log:              "journalctl -u etcd", Unit: "etcd",
			Notes: []string{"no listen-client-urls: etcd's default http://localhost:2379"},
		}},
	}, {
		name:  "nothing",
		files: node{"/etc/hostname": "worker-1\n", "/etc/kubernetes/manifests/kube-apiserver.yaml": "kind: Pod\n"},
	}, {
		name: "malformed manifest, the others still read",
		files: node{
			kubeadmManifest:       "apiVersion: v1\nkind: Pod\nspec:\n  containers: [\n",
			"/etc/sysconfig/etcd": "ETCD_LISTEN_CLIENT_URLS=http://127.0.0.1:2379\n",
		},
		problems: []string{kubeadmManifest},
		want: []result.FoundEtcd{{
			Source: "systemd", File: "/etc/sysconfig/etcd",
			Endpoints:        []string{"http://127.0.0.1:2379"},
			ListenClientURLs: []string{"http://127.0.0.1:2379"},
			Log:              "journalctl -u etcd", Unit: "etcd",
		}},
	}, {
		name:     "a manifest without an etcd container",
		files:    node{kubeadmManifest: "apiVersion: v1\nkind: Pod\nspec:\n  containers:\n  - name: nginx\n"},
		problems: []string{kubeadmManifest},
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			root := c.files.build(t)
			at := time.Now().Add(-time.Hour)
			for i, l := range c.logs {
				full := filepath.Join(root, l)
				if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(full, []byte("{}\n"), 0o644); err != nil {
					t.Fatal(err)
				}
				mt := at.Add(time.Duration(i) * time.Minute)
				if err := os.Chtimes(full, mt, mt); err != nil {
					t.Fatal(err)
				}
			}
			d, err := Find(root)
			if err != nil {
				t.Fatal(err)
			}
			if d.Root != root {
				t.Errorf("root %q, want %q", d.Root, root)
			}
			if !reflect.DeepEqual(d.Found, c.want) {
				t.Errorf("found\n%+v\nwant\n%+v", d.Found, c.want)
			}
			var probs []string
			for _, p := range d.Problems {
				probs = append(probs, p.File)
				if p.Error == "" {
					t.Errorf("problem with %s has no error", p.File)
				}
			}
			if !reflect.DeepEqual(probs, c.problems) {
				t.Errorf("problems %v (%+v), want %v", probs, d.Problems, c.problems)
			}
			if !reflect.DeepEqual(d.NoSettings, c.noSettings) {
				t.Errorf("read, no etcd settings: %v, want %v", d.NoSettings, c.noSettings)
			}
			if len(d.Looked) != 9 || d.Looked[0] != kubeadmManifest || d.Looked[8] != etcdConfYAML {
				t.Errorf("looked at %v", d.Looked)
			}
		})
	}
}

// debianDefault is the start of /etc/default/etcd as Debian's etcd-server
// installs it: etcd's flags, every one commented out.
const debianDefault = `## etcd(1) daemon options
## See "/usr/share/doc/etcd-server/op-guide/configuration.md.gz"

### Member flags

##### --name
## Human-readable name for this member.
## default: host name returned by ` + "`hostname`" + `
# ETCD_NAME="default"

##### --data-dir
## Path to the data directory.
## default: "${name}.etcd"
# ETCD_DATA_DIR="/var/lib/etcd/default"

##### --listen-client-urls
## List of URLs to listen on for client traffic.
## default: "http://localhost:2379"
# ETCD_LISTEN_CLIENT_URLS="http://localhost:2379"
`

// A node where no etcd runs and the only file is Debian's commented-out
// /etc/default/etcd: nothing found, and the error says the file was read.
func TestFindCommentsOnly(t *testing.T) {
	root := node{"/etc/default/etcd": debianDefault}.build(t)
	_, err := Resolve(root, cluster.ConnOptions{})
	var nf *NotFoundError
	if !errors.As(err, &nf) || len(nf.D.Found) != 0 {
		t.Fatalf("Resolve: %v, want nothing found", err)
	}
	if !strings.Contains(err.Error(), "no etcd found on this node under "+root) || !strings.HasSuffix(err.Error(), "; /etc/default/etcd: read, no etcd settings") {
		t.Errorf("error %q", err)
	}
}

func TestFindMalformedSaysWhy(t *testing.T) {
	root := node{kubeadmManifest: "spec: {containers: 3}\n"}.build(t)
	d, err := Find(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Problems) != 1 || !strings.Contains(d.Problems[0].Error, "not a pod manifest") || strings.Contains(d.Problems[0].Error, root) {
		t.Errorf("problems %+v: want one saying it is not a pod manifest, without the root's path", d.Problems)
	}
}

func TestFindUnreadable(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root reads files whatever their mode; the unreadable case needs another user")
	}
	root := node{kubeadmManifest: "x"}.build(t)
	if err := os.Chmod(filepath.Join(root, kubeadmManifest), 0); err != nil {
		t.Fatal(err)
	}
	d, err := Find(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Problems) != 1 || !strings.Contains(d.Problems[0].Error, "permission denied") {
		t.Errorf("problems %+v, want permission denied", d.Problems)
	}
}

func TestFindBadRoot(t *testing.T) {
	f := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(f, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, r := range []string{f, filepath.Join(t.TempDir(), "missing")} {
		if _, err := Find(r); err == nil || !strings.Contains(err.Error(), "--root") {
			t.Errorf("Find(%s) = %v, want an error naming --root", r, err)
		}
	}
}

func TestEndpoints(t *testing.T) {
	cases := []struct{ in, want []string }{
		{[]string{"https://10.0.0.1:2379", "https://0.0.0.0:2379"}, []string{"https://127.0.0.1:2379", "https://10.0.0.1:2379"}},
		{[]string{"http://localhost:2379", "http://127.0.0.1:2379"}, []string{"http://127.0.0.1:2379", "http://localhost:2379"}},
		{[]string{"https://[::]:2379", "https://0.0.0.0:2379"}, []string{"https://127.0.0.1:2379"}},
		{[]string{"unix://etcd.sock", "not a url %"}, nil},
	}
	for _, c := range cases {
		if got := endpoints(c.in); !reflect.DeepEqual(got, c.want) {
			t.Errorf("endpoints(%v) = %v, want %v", c.in, got, c.want)
		}
	}
}

// FuzzParsers feeds any bytes to the three parsers: they return a value
// or an error, never panic.
func FuzzParsers(f *testing.F) {
	f.Add([]byte(rancherConfig("k3s")))
	f.Add([]byte("ETCD_NAME=\"a\"\nexport ETCD_DATA_DIR='/x'\n#c\n=\n"))
	f.Add([]byte("apiVersion: v1\nkind: Pod\nspec:\n  containers:\n  - name: etcd\n    command: [\"etcd --name x --data-dir\"]\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if pod, c, err := parsePod(b); err == nil {
			cfg := podConfig(pod, c)
			_ = cfg.found("kubeadm", "f")
			_ = cfg.hostPath(cfg.get("data-dir"))
		}
		if cfg, err := parseConfigYAML(b); err == nil {
			_ = cfg.found("systemd", "f")
		}
		_ = parseEnvFile(b)
		_ = blankYAML(b)
	})
}
