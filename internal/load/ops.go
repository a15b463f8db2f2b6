package load

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"math"
	mrand "math/rand/v2"
	"sync"
	"time"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc"
)

// callOpts are the etcd client's own call options: wait for a connection
// rather than fail at once, and its message size limits.
var callOpts = []grpc.CallOption{
	grpc.WaitForReady(true),
	grpc.MaxCallSendMsgSize(2 * 1024 * 1024),
	grpc.MaxCallRecvMsgSize(math.MaxInt32),
}

// op is one worker's request maker. Its messages are reused from one
// request to the next: gRPC has encoded a request, and the response is
// decoded afresh, by the time a call returns.
type op interface {
	// prep readies request number i (its key, value, kind) before the
	// clock starts, and returns the part it belongs to.
	prep(i int64) (part int)
	// send sends the request prep readied: it is all that is timed.
	send(ctx context.Context) error
	close()
}

func newOp(ctx context.Context, inv invoker, c *clientv3.Client, o *Options, state uint64) (op, error) {
	cc := c.ActiveConnection()
	rnd := mrand.New(mrand.NewPCG(state, state^0x9e3779b97f4a7c15))
	keys := keyGen{prefixLen: len(o.Prefix), space: uint64(max(o.KeySpaceSize, 1)), seq: o.SequentialKeys, rnd: rnd}
	switch o.Workload {
	case Put:
		if o.Objects != nil {
			return &objectOp{inv: inv, gen: o.Objects, req: &pb.PutRequest{}, resp: &pb.PutResponse{}}, nil
		}
		return &putOp{inv: inv, keys: keys, req: &pb.PutRequest{Key: keyBuf(o), Value: value(o.ValSize)}, resp: &pb.PutResponse{}}, nil
	case Range:
		return &rangeOp{inv: inv, req: rangeRequest(o), resp: &pb.RangeResponse{}}, nil
	case TxnPut:
		t := &txnPutOp{inv: inv, keys: keys, n: int64(o.TxnOps), req: &pb.TxnRequest{}, resp: &pb.TxnResponse{}}
		val := value(o.ValSize)
		for range o.TxnOps {
			put := &pb.PutRequest{Key: keyBuf(o), Value: val}
			t.puts = append(t.puts, put)
			t.req.Success = append(t.req.Success, &pb.RequestOp{Request: &pb.RequestOp_RequestPut{RequestPut: put}})
		}
		return t, nil
	case TxnMixed:
		m := &txnMixedOp{inv: inv, keys: keys, rnd: rnd, readShare: o.RWRatio / (1 + o.RWRatio), resp: &pb.TxnResponse{}}
		rr := &pb.RangeRequest{Key: []byte(o.Prefix), RangeEnd: []byte(PrefixEnd(o.Prefix)), Limit: o.Limit, Serializable: o.Serializable}
		m.read = &pb.TxnRequest{Success: []*pb.RequestOp{{Request: &pb.RequestOp_RequestRange{RequestRange: rr}}}}
		m.put = &pb.PutRequest{Key: keyBuf(o), Value: value(o.ValSize)}
		m.write = &pb.TxnRequest{Success: []*pb.RequestOp{{Request: &pb.RequestOp_RequestPut{RequestPut: m.put}}}}
		return m, nil
	case LeaseKeepalive:
		return newLeaseOp(ctx, cc, o.LeaseTTL)
	}
	return nil, fmt.Errorf("workload %q has no request loop", o.Workload)
}

// keyGen picks key numbers.
type keyGen struct {
	prefixLen int
	space     uint64
	seq       bool
	rnd       *mrand.Rand
}

func (k *keyGen) pick(i uint64) uint64 {
	if k.seq {
		return i % k.space
	}
	return k.rnd.Uint64N(k.space)
}

func keyBuf(o *Options) []byte {
	b := make([]byte, len(o.Prefix)+o.KeySize)
	copy(b, o.Prefix)
	return b
}

// value returns n random bytes, as etcd's benchmark does.
func value(n int) []byte {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return b
}

func rangeRequest(o *Options) *pb.RangeRequest {
	r := &pb.RangeRequest{Limit: o.Limit, Serializable: o.Serializable, KeysOnly: o.KeysOnly, CountOnly: o.CountOnly}
	if o.RangeKey == "" {
		r.Key, r.RangeEnd = []byte(o.Prefix), []byte(PrefixEnd(o.Prefix))
	} else {
		r.Key = []byte(o.RangeKey)
		if o.RangeEnd != "" {
			r.RangeEnd = []byte(o.RangeEnd)
		}
	}
	return r
}

type putOp struct {
	inv  invoker
	keys keyGen
	req  *pb.PutRequest
	resp *pb.PutResponse
}

func (p *putOp) prep(i int64) int {
	putKey(p.req.Key, p.keys.prefixLen, p.keys.pick(uint64(i)))
	return 0
}

func (p *putOp) send(ctx context.Context) error {
	return p.inv.invoke(ctx, pb.KV_Put_FullMethodName, p.req, p.resp)
}

func (p *putOp) close() {}

// objectOp puts what Options.Objects makes of request i.
type objectOp struct {
	inv  invoker
	gen  func(i int64, req *pb.PutRequest)
	req  *pb.PutRequest
	resp *pb.PutResponse
}

func (p *objectOp) prep(i int64) int {
	p.gen(i, p.req)
	return 0
}

func (p *objectOp) send(ctx context.Context) error {
	return p.inv.invoke(ctx, pb.KV_Put_FullMethodName, p.req, p.resp)
}

func (p *objectOp) close() {}

type rangeOp struct {
	inv  invoker
	req  *pb.RangeRequest
	resp *pb.RangeResponse
}

func (r *rangeOp) prep(int64) int { return 0 }

func (r *rangeOp) send(ctx context.Context) error {
	return r.inv.invoke(ctx, pb.KV_Range_FullMethodName, r.req, r.resp)
}

func (r *rangeOp) close() {}

// txnPutOp puts keys (i*n + j) mod the key space, j < n, in one
// transaction, as etcd's txn-put does.
type txnPutOp struct {
	inv  invoker
	keys keyGen
	n    int64
	puts []*pb.PutRequest
	req  *pb.TxnRequest
	resp *pb.TxnResponse
}

func (t *txnPutOp) prep(i int64) int {
	for j, p := range t.puts {
		putKey(p.Key, t.keys.prefixLen, uint64(i*t.n+int64(j))%t.keys.space)
	}
	return 0
}

func (t *txnPutOp) send(ctx context.Context) error {
	return t.inv.invoke(ctx, pb.KV_Txn_FullMethodName, t.req, t.resp)
}

func (t *txnPutOp) close() {}

// txnMixedOp sends a range over the prefix with probability
// rw/(1+rw), else a put of key i mod the key space, each in a transaction.
type txnMixedOp struct {
	inv         invoker
	keys        keyGen
	rnd         *mrand.Rand
	readShare   float64
	read, write *pb.TxnRequest
	next        *pb.TxnRequest // read or write, as prep chose
	put         *pb.PutRequest
	resp        *pb.TxnResponse
}

func (m *txnMixedOp) prep(i int64) int {
	if m.rnd.Float64() < m.readShare {
		m.next = m.read
		return 0
	}
	putKey(m.put.Key, m.keys.prefixLen, uint64(i)%m.keys.space)
	m.next = m.write
	return 1
}

func (m *txnMixedOp) send(ctx context.Context) error {
	return m.inv.invoke(ctx, pb.KV_Txn_FullMethodName, m.next, m.resp)
}

func (m *txnMixedOp) close() {}

// leaseOp keeps one lease alive over one keep-alive stream, the way a
// client such as the Kubernetes API server does.
type leaseOp struct {
	cc     *grpc.ClientConn
	id     int64
	ctx    context.Context
	cancel context.CancelFunc
	stream grpc.BidiStreamingClient[pb.LeaseKeepAliveRequest, pb.LeaseKeepAliveResponse]
	req    *pb.LeaseKeepAliveRequest
	resp   *pb.LeaseKeepAliveResponse
}

var errLeaseGone = errors.New("lease not found (expired or revoked)")

func newLeaseOp(ctx context.Context, cc *grpc.ClientConn, ttl int64) (*leaseOp, error) {
	gctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	g, err := pb.NewLeaseClient(cc).LeaseGrant(gctx, &pb.LeaseGrantRequest{TTL: ttl}, callOpts...)
	if err != nil {
		return nil, fmt.Errorf("grant a lease for lease-keepalive: %w", err)
	}
	l := &leaseOp{cc: cc, id: g.ID, req: &pb.LeaseKeepAliveRequest{ID: g.ID}, resp: &pb.LeaseKeepAliveResponse{}}
	return l, nil
}

func (l *leaseOp) prep(int64) int { return 0 }

func (l *leaseOp) send(ctx context.Context) error {
	if l.stream == nil || l.ctx != ctx {
		// A stream lives in the worker's context: a new context (after a
		// timeout) needs a new stream.
		if l.cancel != nil {
			l.cancel()
		}
		sctx, cancel := context.WithCancel(ctx)
		s, err := pb.NewLeaseClient(l.cc).LeaseKeepAlive(sctx, callOpts...)
		if err != nil {
			cancel()
			return err
		}
		l.stream, l.ctx, l.cancel = s, ctx, cancel
	}
	if err := l.stream.Send(l.req); err != nil {
		l.stream = nil
		return err
	}
	if err := l.stream.RecvMsg(l.resp); err != nil {
		l.stream = nil
		return err
	}
	if l.resp.TTL <= 0 {
		return errLeaseGone
	}
	return nil
}

// close revokes the lease, even when the run was interrupted.
func (l *leaseOp) close() {
	if l.cancel != nil {
		l.cancel()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, _ = pb.NewLeaseClient(l.cc).LeaseRevoke(ctx, &pb.LeaseRevokeRequest{ID: l.id}, callOpts...)
}

// prefill writes the key space under the prefix before a range run, with
// a few parallel writers.
func prefill(ctx context.Context, c *clientv3.Client, o Options) error {
	const writers = 8
	var wg sync.WaitGroup
	errs := make([]error, writers)
	val := value(o.ValSize)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req := &pb.PutRequest{Key: keyBuf(&o), Value: val}
			resp := &pb.PutResponse{}
			for n := w; n < o.Prefill; n += writers {
				putKey(req.Key, len(o.Prefix), uint64(n))
				if err := c.ActiveConnection().Invoke(ctx, pb.KV_Put_FullMethodName, req, resp, callOpts...); err != nil {
					errs[w] = fmt.Errorf("write the keys to range over: %w", err)
					return
				}
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}
