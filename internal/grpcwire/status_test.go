package grpcwire

import (
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

func TestDecodeGRPCMessage(t *testing.T) {
	for in, want := range map[string]string{"plain": "plain", "a%20b%25": "a b%", "bad%zz": "bad%zz", "end%2": "end%2"} {
		if got := decodeGRPCMessage(in); got != want {
			t.Errorf("%q: %q, want %q", in, got, want)
		}
	}
}

// A response's outcome as gRPC's client reports it: the trailers' status,
// or what is wrong with the response.
func TestResult(t *testing.T) {
	msg := func(b ...byte) []byte { return append([]byte{0, 0, 0, 0, byte(len(b))}, b...) }
	for _, c := range []struct {
		name string
		call call
		code codes.Code
		text string
	}{
		{"ok", call{code: 0, data: msg(1, 2, 3)}, codes.OK, ""},
		{"ok, empty message", call{code: 0, data: msg()}, codes.OK, ""},
		{"etcd's error", call{code: 3, message: "etcdserver: key is not provided"}, codes.InvalidArgument, "etcdserver: key is not provided"},
		{"encoded message", call{code: 14, message: "leader%20changed"}, codes.Unavailable, "leader changed"},
		{"not gRPC", call{code: -1, http: "503"}, codes.Unknown, "HTTP status 503"},
		{"no status", call{code: -1, http: "200"}, codes.Internal, "the response has no grpc-status"},
		{"no message", call{code: 0, data: []byte{0, 0}}, codes.Internal, "the response has no message"},
		{"compressed", call{code: 0, data: []byte{1, 0, 0, 0, 0}}, codes.Internal, "the response is compressed"},
		{"short message", call{code: 0, data: []byte{0, 0, 0, 0, 9, 1}}, codes.Internal, "the response message is 1 bytes, its prefix says 9"},
	} {
		err := c.call.result()
		if s := status.Convert(err); s.Code() != c.code || s.Message() != c.text {
			t.Errorf("%s: %v, want %v %q", c.name, err, c.code, c.text)
		}
	}
}
