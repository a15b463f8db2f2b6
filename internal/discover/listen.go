package discover

import (
	"context"
	"errors"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/etcdperf/etcdperf/internal/procstats"
	"github.com/etcdperf/etcdperf/internal/result"
)

// dialTimeout bounds each try of an endpoint: an address of this host
// accepts or refuses a connection at once.
const dialTimeout = 300 * time.Millisecond

// NotListeningError says that etcd's configuration was found on the node
// but that nothing listens at its client endpoints on this host: no etcd
// runs there.
type NotListeningError struct{ Found []result.FoundEtcd }

func (e *NotListeningError) Error() string {
	var parts []string
	for _, f := range e.Found {
		s := "etcd " + f.NotRunning()
		if f.Log != "" {
			s += "; its log: " + f.Log
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, "; ")
}

// CheckListeners tries, for each etcd found, whether anything listens at
// its client endpoints, and sets NothingListens where every endpoint tried
// refused the connection. Only this host's addresses are tried (loopback,
// localhost and the addresses of its interfaces); an endpoint of another
// host is never dialed. An endpoint this host's listening sockets
// (/proc/net/tcp, tcp6) show a listener on is taken as answering without
// a connection: a running etcd logs a TLS client that goes away before its
// handshake as a rejected connection. Elsewhere a TCP connection is opened
// and closed at once, nothing sent. A try that times out or fails
// otherwise says nothing, so NothingListens stays empty.
func CheckListeners(ctx context.Context, d *result.Discover) {
	h := here{local: localAddrs(), sockets: listeningSockets(procstats.Host)}
	for i := range d.Found {
		d.Found[i].NothingListens = h.nothingListens(ctx, d.Found[i].Endpoints)
	}
}

// here is what this host knows of its own addresses.
type here struct {
	// local are its interfaces' addresses.
	local map[string]bool
	// sockets are its listening TCP sockets; nil when /proc cannot tell.
	sockets []procstats.Listen
}

// AllNotListening returns a *NotListeningError when something was found
// and nothing listens at the endpoints of any of it; nil otherwise.
func AllNotListening(d *result.Discover) error {
	if len(d.Found) == 0 {
		return nil
	}
	for _, f := range d.Found {
		if len(f.NothingListens) == 0 {
			return nil
		}
	}
	return &NotListeningError{Found: d.Found}
}

// nothingListens returns the endpoints on this host that refused a
// connection when every one tried did; nil when one listens or accepted,
// when a try failed otherwise, or when none is on this host.
func (h here) nothingListens(ctx context.Context, endpoints []string) []string {
	var refused []string
	for _, ep := range endpoints {
		u, err := url.Parse(ep)
		if err != nil || u.Port() == "" || !isLocal(u.Hostname(), h.local) {
			continue
		}
		if h.socketAt(u.Hostname(), u.Port()) {
			return nil
		}
		dctx, cancel := context.WithTimeout(ctx, dialTimeout)
		var dialer net.Dialer
		conn, err := dialer.DialContext(dctx, "tcp", u.Host)
		cancel()
		if err == nil {
			conn.Close()
			return nil
		}
		if !errors.Is(err, syscall.ECONNREFUSED) {
			return nil
		}
		refused = append(refused, ep)
	}
	return refused
}

// socketAt reports whether a listening socket of this host serves
// host:port: on that address or on a wildcard one.
func (h here) socketAt(host, port string) bool {
	p, err := strconv.Atoi(port)
	if err != nil {
		return false
	}
	want := []net.IP{net.ParseIP(host)}
	if host == "localhost" {
		want = []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback}
	}
	for _, l := range h.sockets {
		if l.Port != p {
			continue
		}
		if l.IP.IsUnspecified() {
			return true
		}
		for _, w := range want {
			if l.IP.Equal(w) {
				return true
			}
		}
	}
	return false
}

// listeningSockets reads this host's listening TCP sockets, IPv4 and IPv6;
// nil when /proc cannot be read.
func listeningSockets(proc procstats.Proc) []procstats.Listen {
	var out []procstats.Listen
	for _, f := range []string{"tcp", "tcp6"} {
		fh, err := os.Open(filepath.Join(string(proc), "net", f))
		if err != nil {
			continue // no IPv6, or no /proc
		}
		ls, err := procstats.ParseListeners(fh)
		fh.Close()
		if err == nil {
			out = append(out, ls...)
		}
	}
	return out
}

// isLocal reports whether host (an address or localhost, never a name
// to resolve) is one of this host's.
func isLocal(host string, local map[string]bool) bool {
	if procstats.IsLoopback(host) {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && local[ip.String()]
}

// localAddrs returns the addresses of this host's interfaces.
func localAddrs() map[string]bool {
	out := map[string]bool{}
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return out
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok {
			out[n.IP.String()] = true
		}
	}
	return out
}
