package grpcwire

import (
	"strings"

	"golang.org/x/net/http2/hpack"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// HTTP/2 frame types and flags (RFC 9113).
const (
	frameData         = 0x0
	frameHeaders      = 0x1
	frameRSTStream    = 0x3
	frameSettings     = 0x4
	framePing         = 0x6
	frameGoAway       = 0x7
	frameWindowUpdate = 0x8
	frameContinuation = 0x9

	flagEndStream  = 0x1
	flagAck        = 0x1
	flagEndHeaders = 0x4
	flagPadded     = 0x8
	flagPriority   = 0x20

	// SETTINGS identifiers (RFC 9113, 6.5.2).
	settingEnablePush           = 0x2
	settingMaxConcurrentStreams = 0x3
	settingInitialWindowSize    = 0x4
	settingMaxFrameSize         = 0x5

	// errCodeCancel is RST_STREAM's CANCEL (RFC 9113, 7).
	errCodeCancel = 0x8

	defaultWindow   = 65535
	defaultMaxFrame = 16384
	// defaultHeaderTable is SETTINGS_HEADER_TABLE_SIZE's initial value.
	defaultHeaderTable = 4096
	// Our receive windows: the largest allowed, so that streams never need
	// window updates and the connection rarely does.
	maxWindow = 1<<31 - 1
)

// The sizes of frames and of their parts (RFC 9113, 4.1 and 6), and of
// gRPC's prefix of a message (gRPC over HTTP/2: a compressed flag and a
// 4-byte length).
const (
	frameHeaderLen  = 9 // length (3), type, flags, stream ID (4)
	frameStreamAt   = 5 // the stream ID's offset in a frame header
	settingLen      = 6 // a SETTINGS parameter: identifier (2), value (4)
	windowUpdateLen = 4
	rstStreamLen    = 4
	pingLen         = 8
	goAwayMinLen    = 8 // last stream ID (4), error code (4)
	priorityLen     = 5 // a HEADERS frame's priority: stream dependency (4), weight
	grpcPrefixLen   = 5
	grpcLengthAt    = 1 // the message length's offset in gRPC's prefix
	// idMask keeps the 31 bits of a stream ID or a window increment (the
	// top bit is reserved).
	idMask = 1<<31 - 1
)

const clientPreface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"

// maxStreamID is the last client stream ID HTTP/2 allows.
const maxStreamID = 1<<31 - 1

// unlimitedStreams is HTTP/2's initial SETTINGS_MAX_CONCURRENT_STREAMS.
const unlimitedStreams = 1<<32 - 1

// appendFrameHeader appends the header of a frame (frameHeaderLen bytes;
// RFC 9113, 4.1).
func appendFrameHeader(b []byte, length int, typ, flags byte, stream uint32) []byte {
	return append(b, byte(length>>16), byte(length>>8), byte(length), typ, flags,
		byte(stream>>24)&0x7f, byte(stream>>16), byte(stream>>8), byte(stream))
}

// headerBlock encodes the request headers of one method once. Every field
// is a literal that is never indexed, so the block leaves the server's
// dynamic table alone and can be sent again and again.
func headerBlock(scheme, authority, path string) []byte {
	var b strings.Builder
	return headerBlockFields(&b, [][2]string{
		{":method", "POST"}, {":scheme", scheme}, {":path", path}, {":authority", authority},
		{"content-type", "application/grpc"}, {"te", "trailers"}, {"user-agent", "etcdperf"},
	})
}

func headerBlockFields(b *strings.Builder, fields [][2]string) []byte {
	enc := hpack.NewEncoder(b)
	for _, f := range fields {
		_ = enc.WriteField(hpack.HeaderField{Name: f[0], Value: f[1], Sensitive: true})
	}
	return []byte(b.String())
}

// unpad strips the padding of a DATA or HEADERS frame (RFC 9113, 6.1).
func unpad(flags byte, p []byte) ([]byte, error) {
	if flags&flagPadded == 0 {
		return p, nil
	}
	if len(p) < 1 || int(p[0]) >= len(p) {
		return nil, status.Error(codes.Internal, "HTTP/2: bad padding")
	}
	return p[1 : len(p)-int(p[0])], nil
}
