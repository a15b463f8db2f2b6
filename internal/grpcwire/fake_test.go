package grpcwire

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// fakeH2 is a scripted HTTP/2 server of unary gRPC requests on 127.0.0.1:
// script runs once per connection (numbered from 1) with the requests'
// stream IDs as they complete, and answers them with respond.
type fakeH2 struct {
	l      net.Listener
	conns  atomic.Int32
	closed chan int // a connection the client closed
	script func(n int, s *h2session)
}

// h2session is one server connection.
type h2session struct {
	fr       *http2.Framer
	wmu      sync.Mutex
	enc      *hpack.Encoder
	buf      bytes.Buffer
	requests chan uint32 // stream IDs whose request has arrived whole
	open     atomic.Int32
	maxOpen  atomic.Int32
}

func startFakeH2(t *testing.T, settings []http2.Setting, script func(n int, s *h2session)) *fakeH2 {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeH2{l: l, closed: make(chan int, 16), script: script}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			nc, err := l.Accept()
			if err != nil {
				return
			}
			n := int(f.conns.Add(1))
			go f.serve(n, nc, settings)
		}
	}()
	return f
}

func (f *fakeH2) serve(n int, nc net.Conn, settings []http2.Setting) {
	defer nc.Close()
	preface := make([]byte, len(http2.ClientPreface))
	if _, err := io.ReadFull(nc, preface); err != nil {
		return
	}
	s := &h2session{fr: http2.NewFramer(nc, nc), requests: make(chan uint32, 64)}
	s.enc = hpack.NewEncoder(&s.buf)
	s.wmu.Lock()
	_ = s.fr.WriteSettings(settings...)
	s.wmu.Unlock()
	go f.script(n, s)
	for {
		fr, err := s.fr.ReadFrame()
		if err != nil {
			if errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed) {
				f.closed <- n
			}
			close(s.requests)
			return
		}
		switch fr := fr.(type) {
		case *http2.SettingsFrame:
			if !fr.IsAck() {
				s.wmu.Lock()
				_ = s.fr.WriteSettingsAck()
				s.wmu.Unlock()
			}
		case *http2.HeadersFrame:
			if o := s.open.Add(1); o > s.maxOpen.Load() {
				s.maxOpen.Store(o)
			}
		case *http2.DataFrame:
			if fr.StreamEnded() {
				s.requests <- fr.StreamID
			}
		}
	}
}

// respond answers a request with an empty message and grpc-status 0.
func (s *h2session) respond(id uint32) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	s.open.Add(-1)
	s.buf.Reset()
	_ = s.enc.WriteField(hpack.HeaderField{Name: ":status", Value: "200"})
	_ = s.enc.WriteField(hpack.HeaderField{Name: "content-type", Value: "application/grpc"})
	_ = s.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: s.buf.Bytes(), EndHeaders: true})
	_ = s.fr.WriteData(id, false, []byte{0, 0, 0, 0, 0})
	s.buf.Reset()
	_ = s.enc.WriteField(hpack.HeaderField{Name: "grpc-status", Value: "0"})
	_ = s.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: s.buf.Bytes(), EndHeaders: true, EndStream: true})
}

func (s *h2session) goAway(last uint32) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	_ = s.fr.WriteGoAway(last, http2.ErrCodeNo, nil)
}

// puts sends n puts through inv from each of the given goroutines, with
// one context for all, as the load's workers have.
func puts(t *testing.T, ctx context.Context, inv []*Caller, n int) {
	t.Helper()
	var wg sync.WaitGroup
	for _, in := range inv {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range n {
				if err := in.Call(ctx, pb.KV_Put_FullMethodName, &pb.PutRequest{Key: []byte("k")}); err != nil {
					t.Errorf("put: %v", err)
					return
				}
			}
		}()
	}
	wg.Wait()
}

func callers(l *Link, n int) []*Caller {
	var out []*Caller
	for range n {
		out = append(out, l.NewCaller())
	}
	return out
}

// A server's SETTINGS_MAX_CONCURRENT_STREAMS holds: five clients on one
// connection never have more than two requests open at once, and all of
// their requests complete.
func TestH2HonoursMaxConcurrentStreams(t *testing.T) {
	var sess atomic.Pointer[h2session]
	f := startFakeH2(t, []http2.Setting{{ID: http2.SettingMaxConcurrentStreams, Val: 2}}, func(n int, s *h2session) {
		sess.Store(s)
		for id := range s.requests {
			go func() {
				time.Sleep(20 * time.Millisecond)
				s.respond(id)
			}()
		}
	})
	l := NewLink(f.l.Addr().String(), nil, 5, pb.KV_Put_FullMethodName)
	defer l.Close()
	inv := callers(l, 5)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	puts(t, ctx, inv[:1], 1) // the server's SETTINGS is read before the rest
	puts(t, ctx, inv, 4)
	s := sess.Load()
	if got := s.maxOpen.Load(); got != 2 {
		t.Errorf("at most %d streams open at once, want 2 (the server's limit, reached)", got)
	}
	if f.conns.Load() != 1 {
		t.Errorf("%d connections, want 1", f.conns.Load())
	}
}

// GOAWAY: the requests up to the server's last stream ID finish on the old
// connection, the later one goes again on a new connection, and the old
// connection is closed once its streams are done; with one client per
// connection too.
func TestH2FinishesStreamsBelowGoAway(t *testing.T) {
	for _, clients := range []int{3, 1} {
		script := func(n int, s *h2session) {
			if n > 1 {
				for id := range s.requests {
					s.respond(id)
				}
				return
			}
			s.respond(<-s.requests) // the first request
			var ids []uint32
			for len(ids) < clients {
				id, ok := <-s.requests
				if !ok {
					return
				}
				ids = append(ids, id)
			}
			// Streams up to the second to last were taken; the last one
			// was not (with one client: the previous stream, none of
			// those now open).
			last := ids[0] - 2
			if clients > 1 {
				last = ids[len(ids)-2]
			}
			s.goAway(last)
			for _, id := range ids {
				if id <= last {
					s.respond(id)
				}
			}
			for range s.requests {
				t.Error("a request on the connection after GOAWAY")
			}
		}
		f := startFakeH2(t, nil, script)
		l := NewLink(f.l.Addr().String(), nil, clients, pb.KV_Put_FullMethodName)
		inv := callers(l, clients)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		puts(t, ctx, inv[:1], 1)
		puts(t, ctx, inv, 1)
		cancel()
		if f.conns.Load() != 2 {
			t.Errorf("%d clients: %d connections, want the second for the refused request", clients, f.conns.Load())
		}
		select {
		case n := <-f.closed:
			if n != 1 {
				t.Errorf("%d clients: connection %d closed, want the first", clients, n)
			}
		case <-time.After(5 * time.Second):
			t.Errorf("%d clients: the connection that got GOAWAY was not closed", clients)
		}
		l.Close()
	}
}
