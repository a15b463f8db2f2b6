package discover

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/etcdperf/etcdperf/internal/cluster"
	"github.com/etcdperf/etcdperf/internal/procstats"
	"github.com/etcdperf/etcdperf/internal/result"
	"github.com/etcdperf/etcdperf/internal/testutil"
)

// systemdNode writes a node whose etcd is Debian's etcd-server with TLS,
// listening for clients on a loopback port where something listens. It
// returns the root and the member's client URL as a client dials it.
func systemdNode(t *testing.T) (string, string) {
	t.Helper()
	_, port, _ := net.SplitHostPort(testutil.SilentListener(t))
	return node{
		"etc/default/etcd": "ETCD_NAME=n1\nETCD_DATA_DIR=/var/lib/etcd/default\nETCD_LISTEN_CLIENT_URLS=https://0.0.0.0:" + port + "\n" +
			"ETCD_CERT_FILE=/etc/etcd/server.crt\nETCD_KEY_FILE=/etc/etcd/server.key\nETCD_TRUSTED_CA_FILE=/etc/etcd/ca.crt\n",
		"etc/etcd/server.crt": "c", "etc/etcd/server.key": "k", "etc/etcd/ca.crt": "ca",
	}.build(t), "https://127.0.0.1:" + port
}

func TestResolveNode(t *testing.T) {
	root, ep := systemdNode(t)
	n, err := Resolve(root, cluster.ConnOptions{})
	if err != nil {
		t.Fatal(err)
	}
	under := func(p string) string { return filepath.Join(root, p) }
	if !reflect.DeepEqual(n.Conn.Endpoints, []string{ep}) || n.Conn.EndpointsFrom != "systemd /etc/default/etcd" {
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
	root, _ := systemdNode(t)
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

// A member found on the node whose endpoint refuses connections is not
// taken: Resolve says where it was found and that nothing listens there,
// or takes another member found that does listen.
func TestResolveNothingListens(t *testing.T) {
	ep := "http://127.0.0.1:" + strconv.Itoa(testutil.FreePort(t))
	root := node{"etc/default/etcd": debianDefault + "ETCD_DATA_DIR=/var/lib/etcd/default\nETCD_LISTEN_CLIENT_URLS=" + ep + "\n"}.build(t)
	_, err := Resolve(root, cluster.ConnOptions{})
	var nl *NotListeningError
	want := "etcd found in /etc/default/etcd, but nothing listens at " + ep + "; its log: journalctl -u etcd"
	if !errors.As(err, &nl) || err.Error() != want {
		t.Errorf("Resolve: %v\nwant %s", err, want)
	}
	// Endpoints given by flags or etcdctl's variables win: nothing is
	// tried.
	given := cluster.ConnOptions{Endpoints: []string{"http://10.0.0.9:2379"}}
	if n, err := Resolve(root, given); err != nil || n.Found.File != "/etc/default/etcd" {
		t.Errorf("with --endpoints: %v", err)
	}

	// Another configuration, whose endpoint listens, is taken instead.
	live := testutil.SilentListener(t)
	yml := filepath.Join(root, etcdConfYAML)
	if err := os.MkdirAll(filepath.Dir(yml), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(yml, []byte("name: b\ndata-dir: /srv/etcd\nlisten-client-urls: http://"+live+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	n, err := Resolve(root, cluster.ConnOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if n.Found.File != etcdConfYAML || !reflect.DeepEqual(n.Conn.Endpoints, []string{"http://" + live}) {
		t.Errorf("took %s at %v, want %s at %s", n.Found.File, n.Conn.Endpoints, etcdConfYAML, live)
	}
	if wantOthers := []string{"systemd (/etc/default/etcd, nothing listens at " + ep + ")"}; !reflect.DeepEqual(n.Others, wantOthers) {
		t.Errorf("others %q, want %q", n.Others, wantOthers)
	}
}

func TestCheckListeners(t *testing.T) {
	free := strconv.Itoa(testutil.FreePort(t))
	live := testutil.SilentListener(t)
	cases := []struct {
		name      string
		endpoints []string
		want      []string
	}{
		{"refused", []string{"https://127.0.0.1:" + free, "https://localhost:" + free}, []string{"https://127.0.0.1:" + free, "https://localhost:" + free}},
		{"one listens", []string{"http://127.0.0.1:" + free, "http://" + live}, nil},
		// Addresses of other hosts are never dialed: nothing is said of
		// them, and only the local one refused.
		{"another host", []string{"https://192.0.2.1:2379"}, nil},
		{"this host and another", []string{"https://127.0.0.1:" + free, "https://192.0.2.1:2379"}, []string{"https://127.0.0.1:" + free}},
		{"no port", []string{"http://127.0.0.1"}, nil},
	}
	for _, c := range cases {
		d := &result.Discover{Found: []result.FoundEtcd{{File: "/etc/etcd/etcd.conf", Endpoints: c.endpoints}}}
		start := time.Now()
		CheckListeners(context.Background(), d)
		if got := d.Found[0].NothingListens; !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: nothing listens at %v, want %v", c.name, got, c.want)
		}
		if el := time.Since(start); el > 2*dialTimeout {
			t.Errorf("%s: took %s", c.name, el)
		}
		if err := AllNotListening(d); (err != nil) != (c.want != nil) {
			t.Errorf("%s: AllNotListening %v", c.name, err)
		}
	}
	f := result.FoundEtcd{File: "/etc/etcd/etcd.conf", NothingListens: []string{"https://127.0.0.1:" + free}}
	if got, want := f.NotRunning(), "found in /etc/etcd/etcd.conf, but nothing listens at https://127.0.0.1:"+free; got != want {
		t.Errorf("NotRunning %q, want %q", got, want)
	}
}

// A member that runs is seen in this host's listening sockets, without a
// connection: etcd would log a TLS client that goes away before its
// handshake as a rejected connection.
func TestCheckListenersConnectsToNoMember(t *testing.T) {
	if len(listeningSockets(procstats.Host)) == 0 {
		t.Skip("skipped: /proc/net/tcp lists no listening socket here, so every endpoint is dialed")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	d := &result.Discover{Found: []result.FoundEtcd{{Endpoints: []string{"https://" + l.Addr().String()}}}}
	CheckListeners(context.Background(), d)
	if d.Found[0].NothingListens != nil {
		t.Errorf("nothing listens at %v, yet a socket listens there", d.Found[0].NothingListens)
	}
	if err := l.(*net.TCPListener).SetDeadline(time.Now().Add(100 * time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	if c, err := l.Accept(); err == nil {
		c.Close()
		t.Errorf("the listening member was connected to")
	}
}

func TestSocketAt(t *testing.T) {
	h := here{sockets: []procstats.Listen{
		{IP: net.ParseIP("127.0.0.1"), Port: 2379},
		{IP: net.IPv6unspecified, Port: 2381},
		{IP: net.ParseIP("::1"), Port: 2382},
		{IP: net.ParseIP("10.0.0.5"), Port: 2383},
	}}
	cases := []struct {
		host, port string
		want       bool
	}{
		{"127.0.0.1", "2379", true}, {"localhost", "2379", true}, {"::1", "2379", false},
		{"127.0.0.1", "2381", true}, {"10.0.0.5", "2381", true},
		{"localhost", "2382", true}, {"127.0.0.1", "2382", false},
		{"10.0.0.5", "2383", true}, {"127.0.0.1", "2383", false},
		{"127.0.0.1", "2380", false}, {"127.0.0.1", "x", false},
	}
	for _, c := range cases {
		if got := h.socketAt(c.host, c.port); got != c.want {
			t.Errorf("socketAt(%s, %s) = %v, want %v", c.host, c.port, got, c.want)
		}
	}
}
