package grpcwire

import (
	"bytes"
	"context"
	"net"
	"strings"
	"testing"
	"time"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// The frame headers we write read back as x/net's HTTP/2 framer reads
// them: length, type, flags and stream ID, with the reserved bit clear.
func TestAppendFrameHeader(t *testing.T) {
	for _, c := range []struct {
		length      int
		typ, flags  byte
		stream, got uint32
	}{
		{0, frameSettings, flagAck, 0, 0},
		{16384, frameData, flagEndStream | flagPadded, 1, 1},
		{0xabcdef, frameHeaders, flagEndHeaders, maxStreamID, maxStreamID},
		{4, frameWindowUpdate, 0, 1<<31 | 7, 7}, // the reserved bit is not sent
	} {
		b := appendFrameHeader([]byte("x"), c.length, c.typ, c.flags, c.stream)
		if len(b) != 10 || b[0] != 'x' {
			t.Fatalf("%+v: %x, want 9 bytes appended", c, b)
		}
		h, err := http2.ReadFrameHeader(bytes.NewReader(b[1:]))
		if err != nil {
			t.Fatal(err)
		}
		if int(h.Length) != c.length || byte(h.Type) != c.typ || byte(h.Flags) != c.flags || h.StreamID != c.got {
			t.Errorf("%+v: read back %v", c, h)
		}
	}
}

// The request header block decodes to gRPC's request headers, each a
// literal never indexed (so that the block can be sent again and again
// without touching the server's dynamic table).
func TestHeaderBlock(t *testing.T) {
	block := headerBlock("https", "10.0.0.1:2379", put)
	var got []hpack.HeaderField
	dec := hpack.NewDecoder(4096, func(f hpack.HeaderField) { got = append(got, f) })
	for range 2 { // twice on one decoder: the same fields
		got = got[:0]
		if _, err := dec.Write(block); err != nil {
			t.Fatal(err)
		}
		want := []string{":method=POST", ":scheme=https", ":path=" + put, ":authority=10.0.0.1:2379",
			"content-type=application/grpc", "te=trailers", "user-agent=etcdperf"}
		if len(got) != len(want) {
			t.Fatalf("%d fields, want %d: %v", len(got), len(want), got)
		}
		for i, f := range got {
			if f.Name+"="+f.Value != want[i] || !f.Sensitive {
				t.Errorf("field %d: %v (never indexed %v), want %s never indexed", i, f, f.Sensitive, want[i])
			}
		}
	}
}

func TestUnpad(t *testing.T) {
	for _, c := range []struct {
		flags byte
		in    string
		want  string
		bad   bool
	}{
		{0, "\x02abc", "\x02abc", false},        // not padded: all of it
		{flagPadded, "\x02abcde", "abc", false}, // pad length, body, padding
		{flagPadded, "\x00abc", "abc", false},
		{flagPadded, "\x03abc", "", false}, // all padding
		{flagPadded, "\x04abc", "", true},  // more padding than the frame
		{flagPadded, "", "", true},
	} {
		got, err := unpad(c.flags, []byte(c.in))
		if c.bad {
			if status.Code(err) != codes.Internal {
				t.Errorf("%q: %q %v, want an Internal error", c.in, got, err)
			}
			continue
		}
		if err != nil || string(got) != c.want {
			t.Errorf("%q: %q %v, want %q", c.in, got, err, c.want)
		}
	}
}

// testServer is the server side of a connection over a pipe: it reads the
// client's frames with x/net's framer.
func testServer(t *testing.T, oneClient bool) (*conn, *http2.Framer) {
	client, server := net.Pipe()
	c := newConn(client, oneClient)
	t.Cleanup(func() { c.close(); server.Close() })
	return c, http2.NewFramer(server, server)
}

// A response's trailers in a HEADERS frame continued by CONTINUATION are
// decoded (HPACK) and end the call with their status.
func TestResponseHeadersAcrossContinuation(t *testing.T) {
	c, _ := testServer(t, false)
	cl := newCall()
	cl.code = -1
	c.streams[1] = cl
	var hb strings.Builder
	block := headerBlockFields(&hb, [][2]string{{":status", "200"}, {"grpc-status", "5"}, {"grpc-message", "no%20such%20key"}})
	if err := c.handle(frameHeaders, flagEndStream, 1, block[:3]); err != nil {
		t.Fatal(err)
	}
	select {
	case <-cl.done:
		t.Fatal("the call ended before its header block did")
	default:
	}
	if err := c.handle(frameData, 0, 1, nil); err == nil {
		t.Error("a DATA frame inside a header block was accepted")
	}
	if err := c.handle(frameContinuation, flagEndHeaders, 3, block[3:]); err == nil {
		t.Error("a CONTINUATION of another stream was accepted")
	}
	if err := c.handle(frameContinuation, flagEndHeaders, 1, block[3:]); err != nil {
		t.Fatal(err)
	}
	select {
	case <-cl.done:
	default:
		t.Fatal("the call did not end with its trailers")
	}
	if err := cl.result(); status.Code(err) != codes.NotFound || status.Convert(err).Message() != "no such key" {
		t.Errorf("%v, want NotFound: no such key", err)
	}
	if len(c.streams) != 0 {
		t.Errorf("streams %v after the call ended", c.streams)
	}
}

// The server's SETTINGS are applied and acknowledged, its PING answered
// with the same payload: both reach the server on their own when no
// request carries them.
func TestSettingsAndPingAreAcknowledged(t *testing.T) {
	c, fr := testServer(t, false)
	settings := []byte{0, settingMaxConcurrentStreams, 0, 0, 0, 7, 0, settingInitialWindowSize, 0, 1, 0, 0, 0, settingMaxFrameSize, 0, 0, 0x80, 0}
	if err := c.handle(frameSettings, 0, 0, settings); err != nil {
		t.Fatal(err)
	}
	if c.maxStreams != 7 || c.peerWin != 1<<16 || c.maxFrame != 1<<15 {
		t.Errorf("after SETTINGS: %d streams, window %d, frame %d; want 7, 65536, 32768", c.maxStreams, c.peerWin, c.maxFrame)
	}
	if err := c.handle(framePing, 0, 0, []byte("12345678")); err != nil {
		t.Fatal(err)
	}
	done := make(chan []http2.Frame, 1)
	go func() {
		var got []http2.Frame
		for len(got) < 2 {
			f, err := fr.ReadFrame()
			if err != nil {
				break
			}
			if p, ok := f.(*http2.PingFrame); ok {
				p := *p // the framer reuses its frames
				got = append(got, &p)
				continue
			}
			got = append(got, f)
		}
		done <- got
	}()
	select {
	case got := <-done:
		if len(got) != 2 {
			t.Fatalf("%d frames", len(got))
		}
		if s, ok := got[0].(*http2.SettingsFrame); !ok || !s.IsAck() {
			t.Errorf("first frame %v, want the SETTINGS acknowledgement", got[0])
		}
		if p, ok := got[1].(*http2.PingFrame); !ok || !p.IsAck() || string(p.Data[:]) != "12345678" {
			t.Errorf("second frame %v, want the PING acknowledgement with its payload", got[1])
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no acknowledgement reached the server")
	}
}

// A request larger than the server's frame size is not sent.
func TestTooLargeForOneFrame(t *testing.T) {
	c, _ := testServer(t, false)
	c.maxFrame = 100
	err := c.unary(context.Background(), newCall(), headerBlock("http", "x", put), &pb.PutRequest{Key: []byte("k"), Value: make([]byte, 100)})
	if err != ErrTooLarge || c.nextID != 1 {
		t.Errorf("%v (next stream %d), want ErrTooLarge with no stream used", err, c.nextID)
	}
}
