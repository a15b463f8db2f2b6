package load

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/etcdperf/etcdperf/internal/testutil"
)

// The lean path against the real etcd: success, etcd's errors as gRPC
// statuses, and the fallback for requests too large for one frame.
func TestH2AgainstEtcd(t *testing.T) {
	for _, oneClient := range []bool{false, true} {
		ctx := context.Background()
		c, err := dialH2(ctx, conns[0].Addr, nil, oneClient)
		if err != nil {
			t.Fatal(err)
		}
		block := headerBlock("http", conns[0].Addr, pb.KV_Put_FullMethodName)
		cl := newH2Call()
		key := prefix(t) + "k"
		for i := range 20 {
			if err := c.unary(ctx, cl, block, &pb.PutRequest{Key: []byte(key), Value: []byte{byte(i)}}); err != nil {
				t.Fatalf("put %d (one client %v): %v", i, oneClient, err)
			}
		}
		r, err := target.Client().Get(ctx, key)
		if err != nil || len(r.Kvs) != 1 || r.Kvs[0].Value[0] != 19 {
			t.Errorf("after 20 puts over HTTP/2: %v %v", r, err)
		}
		// etcd refuses an empty key: the status comes back as gRPC's.
		err = c.unary(ctx, cl, block, &pb.PutRequest{Value: []byte("v")})
		if status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), "key is not provided") {
			t.Errorf("empty key: %v", err)
		}
		// A value larger than a frame goes back to the caller.
		if err := c.unary(ctx, cl, block, &pb.PutRequest{Key: []byte(key), Value: make([]byte, 100<<10)}); err != errTooLarge {
			t.Errorf("100 KiB value: %v, want errTooLarge", err)
		}
		c.close()
	}

	// Through the invoker, the large value takes etcd's client.
	l := newH2Link(conns[0].Addr, nil, 1)
	defer l.close()
	inv := &h2Invoker{link: l, call: newH2Call(), fallback: grpcInvoker{conns[0].Client.ActiveConnection()}}
	defer inv.close()
	if err := inv.invoke(context.Background(), pb.KV_Put_FullMethodName, &pb.PutRequest{Key: []byte(prefix(t) + "big"), Value: make([]byte, 100<<10)}, &pb.PutResponse{}); err != nil {
		t.Errorf("large put through the fallback: %v", err)
	}
}

func TestH2NewConnectionWhenStreamIDsRunOut(t *testing.T) {
	l := newH2Link(conns[0].Addr, nil, 1)
	defer l.close()
	inv := &h2Invoker{link: l, call: newH2Call()}
	defer inv.close()
	put := &pb.PutRequest{Key: []byte(prefix(t) + "k")}
	if err := inv.invoke(context.Background(), pb.KV_Put_FullMethodName, put, nil); err != nil {
		t.Fatal(err)
	}
	first := l.cur.Load()
	first.wmu.Lock()
	first.nextID = maxStreamID + 2
	first.wmu.Unlock()
	if err := inv.invoke(context.Background(), pb.KV_Put_FullMethodName, put, nil); err != nil {
		t.Fatalf("the put after the last stream ID: %v", err)
	}
	if l.cur.Load() == first || !first.broken() {
		t.Error("the exhausted connection was not replaced")
	}
}

func TestH2WaitsForAMemberThatIsDown(t *testing.T) {
	// Nothing listens: requests wait (redialling with a backoff) until
	// their context ends, as etcd's client waits for a ready connection,
	// instead of failing thousands of times a second.
	l := newH2Link(fmt.Sprintf("127.0.0.1:%d", testutil.FreePort(t)), nil, 2)
	defer l.close()
	inv := &h2Invoker{link: l, call: newH2Call()}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	err := inv.invoke(ctx, pb.KV_Put_FullMethodName, &pb.PutRequest{Key: []byte("k")}, nil)
	if status.Code(err) != codes.DeadlineExceeded || time.Since(start) < 250*time.Millisecond {
		t.Errorf("after %v: %v, want DeadlineExceeded at the context's end", time.Since(start), err)
	}
	l.mu.Lock()
	backoff := l.backoff
	l.mu.Unlock()
	if backoff < 2*minRedial {
		t.Errorf("backoff %v after several failed dials", backoff)
	}
}

func TestPutOneClientPerConnection(t *testing.T) {
	o := base(t, Put)
	o.Clients = len(conns)
	st, err := Run(context.Background(), conns, o)
	checkStats(t, st, err, 200)
}

func TestH2ServerGoesAway(t *testing.T) {
	// A server that accepts, reads a little and closes: calls in flight
	// fail with Unavailable instead of hanging, and the link dials again.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				buf := make([]byte, 64)
				c.Read(buf)
				time.Sleep(20 * time.Millisecond)
				c.Close()
			}()
		}
	}()
	for _, oneClient := range []bool{false, true} {
		link := newH2Link(l.Addr().String(), nil, map[bool]int{false: 2, true: 1}[oneClient])
		inv := &h2Invoker{link: link, call: newH2Call()}
		for range 2 {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			err := inv.invoke(ctx, pb.KV_Put_FullMethodName, &pb.PutRequest{Key: []byte("k")}, &pb.PutResponse{})
			cancel()
			if status.Code(err) != codes.Unavailable {
				t.Errorf("one client %v: %v, want Unavailable", oneClient, err)
			}
		}
		inv.close()
		link.close()
	}
}

func TestDecodeGRPCMessage(t *testing.T) {
	for in, want := range map[string]string{"plain": "plain", "a%20b%25": "a b%", "bad%zz": "bad%zz", "end%2": "end%2"} {
		if got := decodeGRPCMessage(in); got != want {
			t.Errorf("%q: %q, want %q", in, got, want)
		}
	}
}

// FuzzH2Frames feeds arbitrary bytes as a server's frames: the client
// must fail or finish the call, never panic or hang.
func FuzzH2Frames(f *testing.F) {
	settings := appendFrameHeader(nil, 6, frameSettings, 0, 0)
	settings = append(settings, 0, 4, 0, 1, 0, 0)
	f.Add(settings)
	// A trailers-only response to stream 1: grpc-status 5 (not found).
	var hb strings.Builder
	block := headerBlockFields(&hb, [][2]string{{":status", "200"}, {"grpc-status", "5"}, {"grpc-message", "no%20key"}})
	f.Add(append(appendFrameHeader(nil, len(block), frameHeaders, flagEndHeaders|flagEndStream, 1), block...))
	f.Add(append(appendFrameHeader(nil, 8, framePing, 0, 0), 1, 2, 3, 4, 5, 6, 7, 8))
	f.Add(appendFrameHeader(nil, 3, frameData, flagEndStream|flagPadded, 1))
	f.Fuzz(func(t *testing.T, in []byte) {
		client, server := net.Pipe()
		defer server.Close()
		go func() {
			// Swallow what the client writes; answer with the input.
			go func() {
				buf := make([]byte, 4096)
				for {
					if _, err := server.Read(buf); err != nil {
						return
					}
				}
			}()
			server.Write(in)
			server.Close()
		}()
		c := &h2conn{conn: client, nextID: 1, sendWin: defaultWindow, peerWin: defaultWindow, maxFrame: defaultMaxFrame, streams: map[uint32]*h2call{}}
		c.init(client)
		go c.readLoop()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		err := c.unary(ctx, newH2Call(), headerBlock("http", "x", pb.KV_Put_FullMethodName), &pb.PutRequest{Key: []byte("k")})
		if errors.Is(err, context.DeadlineExceeded) || status.Code(err) == codes.DeadlineExceeded {
			t.Fatalf("the call hung on input %x", in)
		}
		c.close()
	})
}

// BenchmarkH2Put measures one put on the lean path against the embedded
// etcd; allocs/op is what the request loop costs the garbage collector.
func BenchmarkH2Put(b *testing.B) {
	ctx := context.Background()
	c, err := dialH2(ctx, conns[0].Addr, nil, true)
	if err != nil {
		b.Fatal(err)
	}
	defer c.close()
	block := headerBlock("http", conns[0].Addr, pb.KV_Put_FullMethodName)
	cl := newH2Call()
	req := &pb.PutRequest{Key: []byte("/etcdperf/test/bench/k"), Value: make([]byte, 256)}
	b.ReportAllocs()
	for b.Loop() {
		if err := c.unary(ctx, cl, block, req); err != nil {
			b.Fatal(err)
		}
	}
}

// The request loop's promise: a put on the lean path allocates nothing
// (etcd runs in another process, so only the client is counted).
func TestH2PutDoesNotAllocate(t *testing.T) {
	ctx := context.Background()
	for _, oneClient := range []bool{true, false} {
		c, err := dialH2(ctx, conns[0].Addr, nil, oneClient)
		if err != nil {
			t.Fatal(err)
		}
		block := headerBlock("http", conns[0].Addr, pb.KV_Put_FullMethodName)
		cl := newH2Call()
		req := &pb.PutRequest{Key: []byte(prefix(t) + "k"), Value: make([]byte, 256)}
		put := func() {
			if err := c.unary(ctx, cl, block, req); err != nil {
				t.Fatal(err)
			}
		}
		put() // the first request grows the buffers
		if n := testing.AllocsPerRun(100, put); n >= 1 {
			t.Errorf("one client %v: %.1f allocations per put, want none", oneClient, n)
		}
		c.close()
	}
}
