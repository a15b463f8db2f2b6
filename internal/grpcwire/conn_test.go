package grpcwire

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

const put = pb.KV_Put_FullMethodName

// A connection that has used its last stream ID is replaced: the request
// goes on a new connection, and the old one is not used again.
func TestH2NewConnectionWhenStreamIDsRunOut(t *testing.T) {
	f := startFakeH2(t, nil, func(n int, s *h2session) {
		for id := range s.requests {
			s.respond(id)
		}
	})
	l := NewLink(f.l.Addr().String(), nil, 1, put)
	defer l.Close()
	inv := l.NewCaller()
	defer inv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req := &pb.PutRequest{Key: []byte("k")}
	if err := inv.Call(ctx, put, req); err != nil {
		t.Fatal(err)
	}
	first := l.cur.Load()
	first.wmu.Lock()
	first.nextID = maxStreamID + 2
	first.wmu.Unlock()
	if err := inv.Call(ctx, put, req); err != nil {
		t.Fatalf("the put after the last stream ID: %v", err)
	}
	if l.cur.Load() == first || !first.broken() {
		t.Error("the exhausted connection was not replaced")
	}
	if f.conns.Load() != 2 {
		t.Errorf("%d connections, want 2", f.conns.Load())
	}
}

// A method the link was not made for is refused, not sent with another
// method's headers.
func TestCallUnknownMethod(t *testing.T) {
	l := NewLink("127.0.0.1:1", nil, 1, put)
	defer l.Close()
	err := l.NewCaller().Call(context.Background(), pb.KV_Range_FullMethodName, &pb.RangeRequest{})
	if status.Code(err) != codes.Unimplemented || l.cur.Load() != nil {
		t.Errorf("%v (connection %v), want Unimplemented without dialling", err, l.cur.Load())
	}
}

func TestH2WaitsForAMemberThatIsDown(t *testing.T) {
	// Nothing listens: requests wait (redialling with a backoff) until
	// their context ends, as etcd's client waits for a ready connection,
	// instead of failing thousands of times a second.
	l := NewLink(fmt.Sprintf("127.0.0.1:%d", testutil.FreePort(t)), nil, 2, put)
	defer l.Close()
	inv := l.NewCaller()
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	err := inv.Call(ctx, put, &pb.PutRequest{Key: []byte("k")})
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
		link := NewLink(l.Addr().String(), nil, map[bool]int{false: 2, true: 1}[oneClient], put)
		inv := link.NewCaller()
		for range 2 {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			err := inv.Call(ctx, put, &pb.PutRequest{Key: []byte("k")})
			cancel()
			if status.Code(err) != codes.Unavailable {
				t.Errorf("one client %v: %v, want Unavailable", oneClient, err)
			}
		}
		inv.Close()
		link.Close()
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
		c := newConn(client, false)
		go c.readLoop()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		err := c.unary(ctx, newCall(), headerBlock("http", "x", put), &pb.PutRequest{Key: []byte("k")})
		if errors.Is(err, context.DeadlineExceeded) || status.Code(err) == codes.DeadlineExceeded {
			t.Fatalf("the call hung on input %x", in)
		}
		c.close()
	})
}
