package grpcwire

import (
	"context"
	"crypto/tls"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

// Link is the lean connection to one endpoint, shared by its Callers, and
// dialled again when it breaks.
type Link struct {
	addr string
	tls  *tls.Config
	cur  atomic.Pointer[conn]
	mu   sync.Mutex // serialises dialling; guards the fields below
	// After a failed dial, the next is not before nextDial.
	nextDial time.Time
	backoff  time.Duration
	lastErr  error
	// sync: one client uses the link, and reads its own responses.
	sync bool

	blocks map[string][]byte // header blocks of the methods
}

// NewLink returns the link to addr (host:port), over TLS when tc is not
// nil, for the given number of clients, that calls methods (gRPC's full
// method names, e.g. "/etcdserverpb.KV/Put"). It dials on the first call.
func NewLink(addr string, tc *tls.Config, clients int, methods ...string) *Link {
	scheme := "http"
	if tc != nil {
		scheme = "https"
	}
	l := &Link{addr: addr, tls: tc, sync: clients == 1, blocks: map[string][]byte{}}
	for _, m := range methods {
		l.blocks[m] = headerBlock(scheme, addr, m)
	}
	return l
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
func (l *Link) get(ctx context.Context) (*conn, error) {
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
			c, err := dial(ctx, l.addr, l.tls, l.sync)
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

// Close closes the link's connection; calls in flight fail.
func (l *Link) Close() {
	if c := l.cur.Load(); c != nil {
		c.close()
	}
}

// Caller is one client's lean path on a link: one call at a time.
type Caller struct {
	link *Link
	call *call
	// On a one-client link the caller blocks in a read: the end of its
	// context interrupts that read (registered once per context, which
	// lives across requests).
	armed context.Context
	stop  func() bool
}

// NewCaller returns a caller on the link.
func (l *Link) NewCaller() *Caller { return &Caller{link: l, call: newCall()} }

// Call sends req to method and waits for the response: nil, or a gRPC
// status error (etcd's own, or Unavailable when the connection failed).
// The response's message is not decoded. A request that does not fit one
// frame of the server's limits returns ErrTooLarge, unsent. A request the
// server did not process (GOAWAY, stream IDs used up) goes again on a new
// connection.
func (r *Caller) Call(ctx context.Context, method string, req proto.Message) error {
	block, ok := r.link.blocks[method]
	if !ok {
		return status.Errorf(codes.Unimplemented, "grpcwire: method %s was not given to NewLink", method)
	}
	c, err := r.link.get(ctx)
	if err != nil {
		return err
	}
	if r.link.sync && ctx != r.armed {
		if r.stop != nil {
			r.stop()
		}
		r.armed = ctx
		link := r.link
		r.stop = context.AfterFunc(ctx, func() {
			if c := link.cur.Load(); c != nil {
				c.interrupt()
			}
		})
	}
	err = c.unary(ctx, r.call, block, req)
	if err == errStreamIDs || err == errRefused { // not processed: go on with a new connection
		if c, err = r.link.get(ctx); err != nil {
			return err
		}
		return c.unary(ctx, r.call, block, req)
	}
	return err
}

// Close releases the caller; its link stays open.
func (r *Caller) Close() {
	if r.stop != nil {
		r.stop()
	}
}
