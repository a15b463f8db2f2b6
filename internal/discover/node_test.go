package discover

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/etcdperf/etcdperf/internal/cluster"
	"github.com/etcdperf/etcdperf/internal/testutil"
)

// systemdNode writes a node whose etcd is Debian's etcd-server with TLS.
func systemdNode(t *testing.T) string {
	t.Helper()
	return node{
		"etc/default/etcd": "ETCD_NAME=n1\nETCD_DATA_DIR=/var/lib/etcd/default\nETCD_LISTEN_CLIENT_URLS=https://0.0.0.0:2379\n" +
			"ETCD_CERT_FILE=/etc/etcd/server.crt\nETCD_KEY_FILE=/etc/etcd/server.key\nETCD_TRUSTED_CA_FILE=/etc/etcd/ca.crt\n",
		"etc/etcd/server.crt": "c", "etc/etcd/server.key": "k", "etc/etcd/ca.crt": "ca",
	}.build(t)
}

func TestResolveNode(t *testing.T) {
	root := systemdNode(t)
	n, err := Resolve(root, cluster.ConnOptions{})
	if err != nil {
		t.Fatal(err)
	}
	under := func(p string) string { return filepath.Join(root, p) }
	if !reflect.DeepEqual(n.Conn.Endpoints, []string{"https://127.0.0.1:2379"}) || n.Conn.EndpointsFrom != "systemd /etc/default/etcd" {
		t.Errorf("endpoints %v from %q", n.Conn.Endpoints, n.Conn.EndpointsFrom)
	}
	if n.Conn.CACert != under("etc/etcd/ca.crt") || n.Conn.Cert != under("etc/etcd/server.crt") || n.Conn.Key != under("etc/etcd/server.key") {
		t.Errorf("credentials %q %q %q", n.Conn.CACert, n.Conn.Cert, n.Conn.Key)
	}
	if n.DataDir != under("var/lib/etcd/default") || n.ProbeParent() != under("var/lib/etcd") {
		t.Errorf("data dir %q, probe beside it in %q", n.DataDir, n.ProbeParent())
	}
	if n.Name() != "member n1 (systemd, /etc/default/etcd)" || n.LogFile != "" {
		t.Errorf("name %q, log file %q (the journal is not a file)", n.Name(), n.LogFile)
	}

	// etcdctl's flags or variables win over what the node says.
	given := cluster.ConnOptions{Endpoints: []string{"https://10.0.0.9:2379"}, EndpointsFrom: "ETCDCTL_ENDPOINTS", CACert: under("etc/etcd/server.crt")}
	n, err = Resolve(root, given)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(n.Conn, given) {
		t.Errorf("conn %+v, want %+v", n.Conn, given)
	}

	if err := os.Remove(under("etc/etcd/ca.crt")); err != nil {
		t.Fatal(err)
	}
	_, err = Resolve(root, cluster.ConnOptions{})
	if err == nil || !strings.Contains(err.Error(), under("etc/etcd/ca.crt")) || !strings.Contains(err.Error(), "--cacert") {
		t.Errorf("missing CA: %v", err)
	}

	_, err = Resolve(t.TempDir(), cluster.ConnOptions{})
	var nf *NotFoundError
	if !errors.As(err, &nf) {
		t.Errorf("empty node: %v", err)
	}
}

// The probe runs beside the data dir on its file system, never inside it:
// a data dir that is a mount point of its own is refused.
func TestCheckProbeBeside(t *testing.T) {
	root := systemdNode(t)
	n, err := Resolve(root, cluster.ConnOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := n.CheckProbeBeside(); err == nil || !strings.Contains(err.Error(), "--disk-runtime 0") {
		t.Errorf("missing data dir: %v", err)
	}
	if err := os.MkdirAll(n.DataDir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := n.CheckProbeBeside(); err != nil {
		t.Errorf("data dir on the root's file system: %v", err)
	}
	if n.ProbeParent() != filepath.Dir(n.DataDir) {
		t.Errorf("data dir on the root's file system: probe in %s, want beside it", n.ProbeParent())
	}
	// A data dir that is a file system of its own (a dedicated disk): the
	// probe's folder goes in it, beside member/, on that file system.
	mnt := testutil.MountTmpfs(t, "1m", false)
	n.DataDir = mnt
	if err := n.CheckProbeBeside(); err != nil {
		t.Errorf("data dir on a mount of its own: %v", err)
	}
	if n.ProbeParent() != mnt {
		t.Errorf("data dir on a mount of its own: probe in %s, want %s", n.ProbeParent(), mnt)
	}
}
