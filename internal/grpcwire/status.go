package grpcwire

import (
	"encoding/binary"
	"errors"
	"strconv"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// ErrTooLarge says a request does not fit one frame of the peer's limits;
// the caller sends it through etcd's client instead.
var ErrTooLarge = errors.New("request too large for the lean path")

// errStreamIDs says the connection has used all its stream IDs; the
// caller dials a new one.
var errStreamIDs = status.Error(codes.Unavailable, "HTTP/2 stream IDs exhausted")

// errRefused says the server will not process the request on this
// connection (it sent GOAWAY before the request's stream, or is going
// away): nothing was processed, and the caller sends it again on a new
// connection.
var errRefused = status.Error(codes.Unavailable, "the server is closing the connection (GOAWAY) before this request")

// result turns the response into nil or a gRPC status error.
func (cl *call) result() error {
	if cl.code != 0 {
		if cl.code < 0 {
			if cl.http != "" && cl.http != "200" {
				return status.Errorf(codes.Unknown, "HTTP status %s", cl.http)
			}
			return status.Error(codes.Internal, "the response has no grpc-status")
		}
		return status.Error(codes.Code(cl.code), decodeGRPCMessage(cl.message))
	}
	if len(cl.data) < 5 {
		return status.Error(codes.Internal, "the response has no message")
	}
	if cl.data[0] != 0 {
		return status.Error(codes.Internal, "the response is compressed")
	}
	n := binary.BigEndian.Uint32(cl.data[1:5])
	if int(n) != len(cl.data)-5 {
		return status.Errorf(codes.Internal, "the response message is %d bytes, its prefix says %d", len(cl.data)-5, n)
	}
	// The load needs the outcome, not the content: the message is not
	// decoded (its framing is checked above).
	return nil
}

// decodeGRPCMessage undoes grpc-message's percent-encoding.
func decodeGRPCMessage(s string) string {
	if !strings.Contains(s, "%") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+3], 16, 8); err == nil {
				b.WriteByte(byte(v))
				i += 2
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// unavailable is the error of the calls on a connection that failed.
func unavailable(err error) error {
	return status.Error(codes.Unavailable, "connection lost: "+err.Error())
}
