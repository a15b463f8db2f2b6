package load

import (
	"context"
	"crypto/tls"
	"fmt"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// Dialer opens etcd's clients and says whether an endpoint can be spoken
// to directly (package cluster's Client is one).
type Dialer interface {
	// NewConn opens a client on a connection of its own to endpoints.
	NewConn(ctx context.Context, endpoints ...string) (*clientv3.Client, error)
	// Direct returns the endpoint's host:port and TLS configuration (nil
	// for plain), false when requests need what only etcd's client does
	// (an auth token).
	Direct(endpoint string) (addr string, tc *tls.Config, ok bool)
}

// lean reports whether the workload of o sends its requests on the lean
// HTTP/2 path (package grpcwire) where an endpoint allows it: put, range and txn do,
// unless ClientOnly; watches and leases need etcd's client.
func (o Options) lean() bool {
	return o.Workload != WatchLatency && o.Workload != LeaseKeepalive && !o.ClientOnly
}

// Dial opens n connections for the workload of o, spread over endpoints in
// turn. It is the one place that decides the lean path: a connection gets
// an address for it when the workload takes it and the endpoint allows it,
// and then its etcd client (for what the lean path does not carry) is
// shared with the other connections to the same endpoint; otherwise every
// connection has a client of its own. On error it returns the connections
// opened so far, for Close.
func Dial(ctx context.Context, d Dialer, endpoints []string, n int, o Options) ([]Conn, error) {
	if len(endpoints) == 0 {
		return nil, fmt.Errorf("no endpoint to connect to")
	}
	shared := map[string]*clientv3.Client{}
	n = max(n, 1)
	conns := make([]Conn, 0, n)
	for i := range n {
		ep := endpoints[i%len(endpoints)]
		addr, tc, direct := d.Direct(ep)
		lean := direct && o.lean()
		c := shared[ep]
		if c == nil || !lean {
			var err error
			if c, err = d.NewConn(ctx, ep); err != nil {
				return conns, fmt.Errorf("open connection %d of %d: %w", i+1, n, err)
			}
			shared[ep] = c
		}
		lc := Conn{Client: c}
		if lean {
			lc.Addr, lc.TLS = addr, tc
		}
		conns = append(conns, lc)
	}
	return conns, nil
}

// Close closes the clients of conns, each once.
func Close(conns []Conn) {
	seen := map[*clientv3.Client]bool{}
	for _, c := range conns {
		if c.Client != nil && !seen[c.Client] {
			seen[c.Client] = true
			c.Client.Close()
		}
	}
}
