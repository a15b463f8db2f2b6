package load

import (
	"context"
	"crypto/tls"
	"testing"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// fakeDialer hands out unconnected clients and counts them.
type fakeDialer struct {
	direct bool
	opened int
}

func (d *fakeDialer) NewConn(ctx context.Context, _ ...string) (*clientv3.Client, error) {
	d.opened++
	return clientv3.NewCtxClient(ctx), nil
}

func (d *fakeDialer) Direct(ep string) (string, *tls.Config, bool) { return ep, nil, d.direct }

// Dial alone decides the lean path: put, range and txn take it where the
// endpoint allows, sharing one etcd client per endpoint; watches, leases,
// --etcd-client and an endpoint that needs a token get a client per
// connection and no address.
func TestDialDecidesTheLeanPath(t *testing.T) {
	eps := []string{"a:2379", "b:2379"}
	cases := []struct {
		name    string
		direct  bool
		o       Options
		lean    bool
		clients int
	}{
		{"put, direct", true, Options{Workload: Put}, true, 2},
		{"put, token needed", false, Options{Workload: Put}, false, 6},
		{"put, --etcd-client", true, Options{Workload: Put, ClientOnly: true}, false, 6},
		{"watch", true, Options{Workload: WatchLatency}, false, 6},
		{"lease keepalive", true, Options{Workload: LeaseKeepalive}, false, 6},
	}
	for _, c := range cases {
		d := &fakeDialer{direct: c.direct}
		conns, err := Dial(context.Background(), d, eps, 6, c.o)
		if err != nil {
			t.Fatal(err)
		}
		if len(conns) != 6 || d.opened != c.clients {
			t.Errorf("%s: %d connections over %d clients, want 6 over %d", c.name, len(conns), d.opened, c.clients)
		}
		for i, cn := range conns {
			if (cn.Addr != "") != c.lean || (c.lean && cn.Addr != eps[i%2]) {
				t.Errorf("%s: connection %d has address %q, want the lean path %v", c.name, i, cn.Addr, c.lean)
			}
		}
		Close(conns)
	}
}
