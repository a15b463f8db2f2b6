package load

import (
	"context"
	"crypto/tls"
	"sync"
	"sync/atomic"
	"time"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

// Conn is one connection of the load.
type Conn struct {
	// Client is etcd's client on this connection: watch-latency and
	// lease-keepalive use it, and so do requests that are too large for the
	// lean path.
	Client *clientv3.Client
	// Addr, when set, lets put, range and txn requests speak gRPC over
	// HTTP/2 to this host:port directly (the lean path, see h2.go), over
	// TLS with the TLS configuration when it is not nil. Leave it empty
	// when etcd needs an auth token.
	Addr string
	TLS  *tls.Config
}

// invoker sends one unary request.
type invoker interface {
	invoke(ctx context.Context, method string, req, resp proto.Message) error
}

// grpcInvoker goes through etcd's client connection.
type grpcInvoker struct{ cc *grpc.ClientConn }

func (g grpcInvoker) invoke(ctx context.Context, method string, req, resp proto.Message) error {
	return g.cc.Invoke(ctx, method, req, resp, callOpts...)
}

// h2link is the lean connection of one Conn, shared by its clients, and
// dialled again when it breaks.
type h2link struct {
	addr string
	tls  *tls.Config
	cur  atomic.Pointer[h2conn]
	mu   sync.Mutex // serialises dialling; guards the fields below
	// After a failed dial, the next is not before nextDial.
	nextDial time.Time
	backoff  time.Duration
	lastErr  error
	// sync: one client uses the link, and reads its own responses.
	sync bool

	put, rng, txn []byte // header blocks of the methods
}

func newH2Link(addr string, tc *tls.Config, clients int) *h2link {
	scheme := "http"
	if tc != nil {
		scheme = "https"
	}
	return &h2link{addr: addr, tls: tc, sync: clients == 1,
		put: headerBlock(scheme, addr, pb.KV_Put_FullMethodName),
		rng: headerBlock(scheme, addr, pb.KV_Range_FullMethodName),
		txn: headerBlock(scheme, addr, pb.KV_Txn_FullMethodName),
	}
}

// Backoff between failed dials of a lean connection.
const (
	minRedial = 50 * time.Millisecond
	maxRedial = time.Second
)

// get returns a working connection, dialling one if needed. Like etcd's
// client (which waits for a connection to be ready), it keeps trying, with
// a backoff, until ctx ends: a member that is down costs a timeout per
// request, not a storm of failed dials.
func (l *h2link) get(ctx context.Context) (*h2conn, error) {
	if c := l.cur.Load(); c != nil && !c.broken() {
		return c, nil
	}
	for {
		l.mu.Lock()
		if c := l.cur.Load(); c != nil && !c.broken() {
			l.mu.Unlock()
			return c, nil
		}
		now := time.Now()
		if !now.Before(l.nextDial) {
			c, err := dialH2(ctx, l.addr, l.tls, l.sync)
			if err == nil {
				if old := l.cur.Swap(c); old != nil {
					old.retire()
				}
				l.backoff = 0
				l.mu.Unlock()
				return c, nil
			}
			l.backoff = min(max(2*l.backoff, minRedial), maxRedial)
			l.nextDial = time.Now().Add(l.backoff)
			l.lastErr = err
		}
		wait, lastErr := time.Until(l.nextDial), l.lastErr
		l.mu.Unlock()
		if ctx.Err() != nil {
			return nil, unavailable(lastErr)
		}
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return nil, status.FromContextError(ctx.Err()).Err()
		}
	}
}

func (h *h2Invoker) close() {
	if h.stop != nil {
		h.stop()
	}
}

func (l *h2link) close() {
	if c := l.cur.Load(); c != nil {
		c.close()
	}
}

func (l *h2link) block(method string) []byte {
	switch method {
	case pb.KV_Put_FullMethodName:
		return l.put
	case pb.KV_Range_FullMethodName:
		return l.rng
	}
	return l.txn
}

// h2Invoker is one worker's lean path.
type h2Invoker struct {
	link     *h2link
	call     *h2call
	fallback grpcInvoker
	// On a one-client link the worker blocks in a read: the end of its
	// context interrupts that read (registered once per context, which
	// lives across requests).
	armed context.Context
	stop  func() bool
}

func (h *h2Invoker) invoke(ctx context.Context, method string, req, resp proto.Message) error {
	c, err := h.link.get(ctx)
	if err != nil {
		return err
	}
	if h.link.sync && ctx != h.armed {
		if h.stop != nil {
			h.stop()
		}
		h.armed = ctx
		link := h.link
		h.stop = context.AfterFunc(ctx, func() {
			if c := link.cur.Load(); c != nil {
				c.interrupt()
			}
		})
	}
	err = c.unary(ctx, h.call, h.link.block(method), req)
	switch err {
	case errTooLarge:
		return h.fallback.invoke(ctx, method, req, resp)
	case errStreamIDs, errRefused: // not processed: go on with a new connection
		if c, err = h.link.get(ctx); err != nil {
			return err
		}
		return c.unary(ctx, h.call, h.link.block(method), req)
	}
	return err
}
