package load

import (
	"context"
	"strings"
	"testing"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/etcdperf/etcdperf/internal/grpcwire"
)

// The lean path against the real etcd: success, etcd's errors as gRPC
// statuses, and the fallback for requests too large for one frame.
func TestLeanPathAgainstEtcd(t *testing.T) {
	for _, clients := range []int{2, 1} {
		ctx := context.Background()
		l := grpcwire.NewLink(conns[0].Addr, nil, clients, leanMethods...)
		c := l.NewCaller()
		key := prefix(t) + "k"
		for i := range 20 {
			if err := c.Call(ctx, pb.KV_Put_FullMethodName, &pb.PutRequest{Key: []byte(key), Value: []byte{byte(i)}}); err != nil {
				t.Fatalf("put %d (%d clients): %v", i, clients, err)
			}
		}
		r, err := target.Client().Get(ctx, key)
		if err != nil || len(r.Kvs) != 1 || r.Kvs[0].Value[0] != 19 {
			t.Errorf("after 20 puts over HTTP/2: %v %v", r, err)
		}
		if err := c.Call(ctx, pb.KV_Range_FullMethodName, &pb.RangeRequest{Key: []byte(key)}); err != nil {
			t.Errorf("range: %v", err)
		}
		// etcd refuses an empty key: the status comes back as gRPC's.
		err = c.Call(ctx, pb.KV_Put_FullMethodName, &pb.PutRequest{Value: []byte("v")})
		if status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), "key is not provided") {
			t.Errorf("empty key: %v", err)
		}
		// A value larger than a frame goes back to the caller.
		if err := c.Call(ctx, pb.KV_Put_FullMethodName, &pb.PutRequest{Key: []byte(key), Value: make([]byte, 100<<10)}); err != grpcwire.ErrTooLarge {
			t.Errorf("100 KiB value: %v, want ErrTooLarge", err)
		}
		c.Close()
		l.Close()
	}

	// Through the invoker, the large value takes etcd's client.
	l := grpcwire.NewLink(conns[0].Addr, nil, 1, leanMethods...)
	defer l.Close()
	c := l.NewCaller()
	defer c.Close()
	inv := leanInvoker{c, grpcInvoker{conns[0].Client.ActiveConnection()}}
	big := prefix(t) + "big"
	if err := inv.invoke(context.Background(), pb.KV_Put_FullMethodName, &pb.PutRequest{Key: []byte(big), Value: make([]byte, 100<<10)}, &pb.PutResponse{}); err != nil {
		t.Errorf("large put through the fallback: %v", err)
	}
	if r, err := target.Client().Get(context.Background(), big); err != nil || len(r.Kvs) != 1 || len(r.Kvs[0].Value) != 100<<10 {
		t.Errorf("after the large put: %v %v", r, err)
	}
}

func TestPutOneClientPerConnection(t *testing.T) {
	o := base(t, Put)
	o.Clients = len(conns)
	st, err := Run(context.Background(), conns, o)
	checkStats(t, st, err, 200)
}

// BenchmarkLeanPut measures one put on the lean path against the etcd of
// the tests (a process of its own); allocs/op is what the request loop
// costs the garbage collector.
func BenchmarkLeanPut(b *testing.B) {
	l := grpcwire.NewLink(conns[0].Addr, nil, 1, leanMethods...)
	defer l.Close()
	c := l.NewCaller()
	defer c.Close()
	ctx := context.Background()
	req := &pb.PutRequest{Key: []byte("/etcdperf/test/bench/k"), Value: make([]byte, 256)}
	b.ReportAllocs()
	for b.Loop() {
		if err := c.Call(ctx, pb.KV_Put_FullMethodName, req); err != nil {
			b.Fatal(err)
		}
	}
}

// The request loop's promise: a put on the lean path allocates nothing
// (etcd runs in another process, so only the client is counted).
func TestLeanPutDoesNotAllocate(t *testing.T) {
	ctx := context.Background()
	for _, clients := range []int{1, 2} {
		l := grpcwire.NewLink(conns[0].Addr, nil, clients, leanMethods...)
		c := l.NewCaller()
		req := &pb.PutRequest{Key: []byte(prefix(t) + "k"), Value: make([]byte, 256)}
		put := func() {
			if err := c.Call(ctx, pb.KV_Put_FullMethodName, req); err != nil {
				t.Fatal(err)
			}
		}
		put() // the first request dials and grows the buffers
		if n := testing.AllocsPerRun(100, put); n >= 1 {
			t.Errorf("%d clients: %.1f allocations per put, want none", clients, n)
		}
		c.Close()
		l.Close()
	}
}
