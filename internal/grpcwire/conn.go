package grpcwire

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/net/http2/hpack"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

// call is one worker's request in flight; it is reused.
type call struct {
	done    chan struct{}
	buf     []byte // the encoded request frames
	dataAt  int    // where in buf the DATA frame starts
	data    []byte // the response's gRPC-framed message
	http    string // :status
	code    int    // grpc-status, -1 until received
	message string // grpc-message
	err     error  // a connection failure
}

func newCall() *call { return &call{done: make(chan struct{}, 1)} }

// conn is one HTTP/2 connection carrying unary gRPC requests.
//
// A connection shared by several clients has a reader goroutine that hands
// each response to its client. A connection with one client (etcd's
// performance guide's workload: --conns equal to --clients) has none: the client reads
// its response itself, which saves a goroutine hand-off per request.
type conn struct {
	conn net.Conn
	sync bool // no reader goroutine: the one client reads

	wmu      sync.Mutex // writes, stream IDs, send window
	wcond    *sync.Cond
	nextID   uint32
	sendWin  int64
	peerWin  int64 // peer's initial stream window
	maxFrame int
	werr     error
	out      []byte // control frames and a request, written together

	// Control frames the reader owes the server (PING and SETTINGS
	// acknowledgements, window updates) wait here for the next request's
	// write, or for flushT: etcd's gRPC server pings after nearly every
	// request to estimate the bandwidth, and a write of its own for each
	// acknowledgement would double the system calls.
	pmu     sync.Mutex
	pending []byte
	armed   bool
	flushT  *time.Timer

	smu     sync.Mutex // streams, the limit on them, and the connection's fate
	scond   *sync.Cond
	streams map[uint32]*call
	// starting counts the requests that hold a place among the open
	// streams and are not in streams yet; together at most maxStreams
	// (the server's SETTINGS_MAX_CONCURRENT_STREAMS, unlimited at first).
	starting   int
	maxStreams uint32
	// goaway is set once the server said GOAWAY: streams up to lastID
	// finish, later ones were refused, no new one starts, and the
	// connection closes when the last stream ends.
	goaway bool
	lastID uint32
	err    error
	dead   atomic.Bool

	// Owned by the reader goroutine.
	br       *bufio.Reader
	dec      *hpack.Decoder
	hdr      []byte // a header block being assembled from CONTINUATION frames
	hdrID    uint32
	hdrEnd   bool
	fields   headerFields
	consumed int64
	frame    []byte
	hbuf     [frameHeaderLen]byte
}

// headerFields collects the header fields the client needs.
type headerFields struct {
	status, grpcStatus, grpcMessage string
}

// dial connects to addr (host:port), over TLS when tc is set. With
// oneClient, the connection has one client, which reads its own responses.
func dial(ctx context.Context, addr string, tc *tls.Config, oneClient bool) (*conn, error) {
	var d net.Dialer
	nc, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	if tcp, ok := nc.(*net.TCPConn); ok {
		_ = tcp.SetNoDelay(true)
	}
	if tc != nil {
		cfg := tc.Clone()
		cfg.NextProtos = []string{"h2"}
		if cfg.ServerName == "" {
			host, _, _ := net.SplitHostPort(addr)
			cfg.ServerName = host
		}
		tconn := tls.Client(nc, cfg)
		if err := tconn.HandshakeContext(ctx); err != nil {
			nc.Close()
			return nil, err
		}
		if p := tconn.ConnectionState().NegotiatedProtocol; p != "h2" {
			nc.Close()
			return nil, fmt.Errorf("%s did not agree to HTTP/2 (ALPN %q)", addr, p)
		}
		nc = tconn
	}
	c := newConn(nc, oneClient)
	// Preface, our settings, and the connection window at its largest.
	var b []byte
	b = append(b, clientPreface...)
	b = appendFrameHeader(b, 2*settingLen, frameSettings, 0, 0)
	b = binary.BigEndian.AppendUint16(b, settingInitialWindowSize)
	b = binary.BigEndian.AppendUint32(b, maxWindow)
	b = binary.BigEndian.AppendUint16(b, settingEnablePush)
	b = binary.BigEndian.AppendUint32(b, 0)
	b = appendFrameHeader(b, windowUpdateLen, frameWindowUpdate, 0, 0)
	b = binary.BigEndian.AppendUint32(b, maxWindow-defaultWindow)
	if dl, ok := ctx.Deadline(); ok {
		_ = nc.SetWriteDeadline(dl)
	}
	if _, err := nc.Write(b); err != nil {
		nc.Close()
		return nil, err
	}
	_ = nc.SetWriteDeadline(time.Time{})
	if !oneClient {
		go c.readLoop()
	}
	return c, nil
}

// newConn is a connection over nc, with HTTP/2's initial limits, before
// the preface and settings that dial writes.
func newConn(nc net.Conn, oneClient bool) *conn {
	c := &conn{conn: nc, sync: oneClient, nextID: 1, sendWin: defaultWindow, peerWin: defaultWindow, maxFrame: defaultMaxFrame,
		streams: map[uint32]*call{}}
	c.br = bufio.NewReaderSize(nc, 32<<10)
	c.wcond = sync.NewCond(&c.wmu)
	c.scond = sync.NewCond(&c.smu)
	c.maxStreams = unlimitedStreams
	c.dec = hpack.NewDecoder(defaultHeaderTable, c.emit)
	c.flushT = time.AfterFunc(time.Hour, c.flushPending)
	c.flushT.Stop()
	return c
}

func (c *conn) interrupt() { _ = c.conn.SetReadDeadline(time.Unix(1, 0)) }

// close ends the connection; calls in flight fail.
func (c *conn) close() {
	c.flushT.Stop()
	c.conn.Close()
}

// broken reports whether the connection can no longer take requests.
func (c *conn) broken() bool { return c.dead.Load() }

// retire is close for a connection that a new one replaces: one that the
// server is closing (GOAWAY) finishes its streams first and then closes
// itself.
func (c *conn) retire() {
	c.smu.Lock()
	draining := c.goaway && len(c.streams) > 0 && c.err == nil
	c.smu.Unlock()
	if !draining {
		c.close()
	}
}

// acquire takes a place among the streams the server allows open at
// once, waiting for one to end while all are taken (or until ctx ends).
func (c *conn) acquire(ctx context.Context) error {
	c.smu.Lock()
	defer c.smu.Unlock()
	if c.sync && c.maxStreams == 0 {
		return status.Error(codes.Unavailable, "the server allows no stream on this connection (SETTINGS_MAX_CONCURRENT_STREAMS 0)")
	}
	if c.err == nil && !c.goaway && uint32(len(c.streams)+c.starting) >= c.maxStreams {
		stop := context.AfterFunc(ctx, func() {
			c.smu.Lock()
			c.scond.Broadcast()
			c.smu.Unlock()
		})
		for c.err == nil && !c.goaway && uint32(len(c.streams)+c.starting) >= c.maxStreams && ctx.Err() == nil {
			c.scond.Wait()
		}
		stop()
	}
	switch {
	case c.err != nil:
		return c.err
	case c.goaway:
		return errRefused
	case ctx.Err() != nil:
		return status.FromContextError(ctx.Err()).Err()
	}
	c.starting++
	return nil
}

// release gives back a place that acquire took and no stream used.
func (c *conn) release() {
	c.smu.Lock()
	c.starting--
	c.ended()
	c.smu.Unlock()
}

// ended is called, with smu held, when a stream has left streams or a
// place was given back: a waiting request may start, and a connection the server is closing
// closes after its last stream.
func (c *conn) ended() {
	c.scond.Signal()
	if c.goaway && len(c.streams) == 0 && c.starting == 0 {
		c.conn.Close()
	}
}

// unary sends one gRPC request and waits for its response: the request's
// frames, a place among the streams the server allows, the stream sent,
// and its response, read here on a connection with one client or handed
// over by the reader.
func (c *conn) unary(ctx context.Context, cl *call, headers []byte, req proto.Message) error {
	dataLen, err := cl.encode(headers, req)
	if err != nil {
		return err
	}
	if err := c.acquire(ctx); err != nil {
		return err
	}
	id, err := c.send(ctx, cl, dataLen)
	if err != nil {
		return err
	}
	if c.sync {
		return c.readUntilDone(ctx, cl)
	}
	return c.await(ctx, cl, id)
}

// encode sets cl's request frames, HEADERS with headers then DATA with
// the length-prefixed message, their stream ID to be set (setStream), and
// clears its response; it returns the DATA frame's length.
func (cl *call) encode(headers []byte, req proto.Message) (int, error) {
	b := appendFrameHeader(cl.buf[:0], len(headers), frameHeaders, flagEndHeaders, 0)
	b = append(b, headers...)
	dataAt := len(b)
	b = appendFrameHeader(b, 0, frameData, flagEndStream, 0)
	b = append(b, make([]byte, grpcPrefixLen)...)
	var err error
	b, err = proto.MarshalOptions{}.MarshalAppend(b, req)
	if err != nil {
		return 0, status.Error(codes.Internal, err.Error())
	}
	msgLen := len(b) - dataAt - frameHeaderLen - grpcPrefixLen
	dataLen := msgLen + grpcPrefixLen
	b[dataAt], b[dataAt+1], b[dataAt+2] = byte(dataLen>>16), byte(dataLen>>8), byte(dataLen)
	binary.BigEndian.PutUint32(b[dataAt+frameHeaderLen+grpcLengthAt:], uint32(msgLen))
	cl.buf, cl.dataAt = b, dataAt
	cl.data, cl.http, cl.code, cl.message, cl.err = cl.data[:0], "", -1, "", nil
	return dataLen, nil
}

// setStream writes the stream ID id into both of cl's request frames.
func (cl *call) setStream(id uint32) {
	binary.BigEndian.PutUint32(cl.buf[frameStreamAt:], id)
	binary.BigEndian.PutUint32(cl.buf[cl.dataAt+frameStreamAt:], id)
}

// send opens a stream for cl's request, in the place acquire took, once
// the send window has room for its DATA frame of dataLen bytes, and writes
// it. The place is given back unless the stream opened; a write that
// fails fails the connection, and with it the call (its response says
// so).
func (c *conn) send(ctx context.Context, cl *call, dataLen int) (uint32, error) {
	registered := false
	defer func() {
		if !registered {
			c.release()
		}
	}()
	c.wmu.Lock()
	if err := c.waitWindow(ctx, dataLen); err != nil {
		c.wmu.Unlock()
		return 0, err
	}
	if c.nextID > maxStreamID {
		c.wmu.Unlock()
		c.fail(errStreamIDs)
		return 0, errStreamIDs
	}
	id := c.nextID
	c.nextID += 2
	c.sendWin -= int64(dataLen)
	cl.setStream(id)
	if err := c.register(id, cl); err != nil {
		c.wmu.Unlock()
		return 0, err
	}
	registered = true
	err := c.write(cl.buf)
	c.wmu.Unlock()
	if err != nil {
		c.fail(err)
	}
	return id, nil
}

// waitWindow waits, with wmu held, until the connection's send window has
// room for a DATA frame of dataLen bytes; it says why the request cannot
// be sent: too large for the server ever to take, the connection failed,
// or ctx ended first.
func (c *conn) waitWindow(ctx context.Context, dataLen int) error {
	if c.werr == nil && (dataLen > c.maxFrame || int64(dataLen) > c.peerWin) {
		return ErrTooLarge
	}
	if c.werr == nil && c.sendWin < int64(dataLen) {
		// The server has not read what was sent: wait for its window
		// update, or for the request's end (rare: no allocation otherwise).
		stop := context.AfterFunc(ctx, func() {
			c.wmu.Lock()
			c.wcond.Broadcast()
			c.wmu.Unlock()
		})
		for c.werr == nil && c.sendWin < int64(dataLen) && ctx.Err() == nil {
			c.wcond.Wait()
		}
		stop()
	}
	if c.werr != nil {
		return c.werr
	}
	if ctx.Err() != nil {
		return status.FromContextError(ctx.Err()).Err()
	}
	return nil
}

// register makes stream id cl's, in the place acquire took, for the
// response to find; refused once the connection failed or the server said
// GOAWAY.
func (c *conn) register(id uint32, cl *call) error {
	c.smu.Lock()
	defer c.smu.Unlock()
	if c.err != nil {
		return c.err
	}
	if c.goaway {
		return errRefused
	}
	c.streams[id] = cl
	c.starting--
	return nil
}

// write writes a request's frames b, with wmu held, and the control frames
// pending after them; a failed write is the connection's (werr).
func (c *conn) write(b []byte) error {
	out := b
	c.pmu.Lock()
	if len(c.pending) > 0 {
		// The acknowledgements go after the request: etcd's server sends
		// its next bandwidth-probe PING on the first DATA it reads while
		// no PING is unacknowledged, so acknowledging after this
		// request's DATA spares the PING of this request.
		c.out = append(append(c.out[:0], b...), c.pending...)
		out = c.out
		c.pending = c.pending[:0]
		// The timer's function would run in a goroutine of its own for
		// nothing.
		c.flushT.Stop()
		c.armed = false
	}
	c.pmu.Unlock()
	if _, err := c.conn.Write(out); err != nil {
		c.werr = unavailable(err)
		return c.werr
	}
	return nil
}

// readUntilDone reads frames, as a connection's one client, until cl is
// done; a read error (or the deadline that the end of ctx sets) fails the
// connection, and with it the call.
func (c *conn) readUntilDone(ctx context.Context, cl *call) error {
	for {
		select {
		case <-cl.done:
			if ctx.Err() != nil {
				return status.FromContextError(ctx.Err()).Err()
			}
			return cl.outcome()
		default:
		}
		if err := c.readFrame(); err != nil {
			c.fail(err)
		}
	}
}

// await waits for the reader to hand cl its response on stream id, or for
// ctx to end: then the stream is cancelled, unless the reader is already
// handing it over.
func (c *conn) await(ctx context.Context, cl *call, id uint32) error {
	select {
	case <-cl.done:
		return cl.outcome()
	case <-ctx.Done():
	}
	c.smu.Lock()
	_, pending := c.streams[id]
	delete(c.streams, id)
	if pending {
		c.ended()
	}
	c.smu.Unlock()
	if !pending {
		<-cl.done // the reader is handing it over
	} else {
		c.reset(id)
	}
	return status.FromContextError(ctx.Err()).Err()
}

// outcome is a done call's error: its connection's failure, else its
// response's status.
func (cl *call) outcome() error {
	if cl.err != nil {
		return cl.err
	}
	return cl.result()
}

// reset cancels one stream.
func (c *conn) reset(id uint32) {
	var b [frameHeaderLen + rstStreamLen]byte
	appendFrameHeader(b[:0], rstStreamLen, frameRSTStream, 0, id)
	binary.BigEndian.PutUint32(b[frameHeaderLen:], errCodeCancel)
	c.queue(b[:])
}

// flushDelay bounds how long a control frame waits for a request's write.
// etcd pings when it receives a request and answers once the request is
// committed, often several milliseconds later: the next request of the
// worker then carries the acknowledgement. A late acknowledgement only
// lengthens the round trip etcd's bandwidth estimate sees.
const flushDelay = 25 * time.Millisecond

// queue sends a control frame with the next write, at most flushDelay
// later. The reader never waits for the write lock: a worker may hold it,
// blocked writing to a server that waits for the reader.
func (c *conn) queue(b []byte) {
	c.pmu.Lock()
	c.pending = append(c.pending, b...)
	if !c.armed {
		c.armed = true
		c.flushT.Reset(flushDelay)
	}
	c.pmu.Unlock()
}

// flushPending writes the control frames no request took along.
func (c *conn) flushPending() {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	c.pmu.Lock()
	c.armed = false
	if len(c.pending) > 0 && c.werr == nil {
		if _, err := c.conn.Write(c.pending); err != nil {
			c.werr = unavailable(err)
		}
	}
	c.pending = c.pending[:0]
	c.pmu.Unlock()
}

// fail ends the connection and every call on it with err.
func (c *conn) fail(err error) {
	c.dead.Store(true)
	c.smu.Lock()
	if c.err == nil {
		c.err = err
	}
	calls := c.streams
	c.streams = map[uint32]*call{}
	c.scond.Broadcast()
	c.smu.Unlock()
	for _, cl := range calls {
		cl.err = err
		cl.done <- struct{}{}
	}
	c.wmu.Lock()
	if c.werr == nil {
		c.werr = err
	}
	c.wcond.Broadcast()
	c.wmu.Unlock()
	c.conn.Close()
}

// readLoop reads frames until the connection fails.
func (c *conn) readLoop() {
	for {
		if err := c.readFrame(); err != nil {
			c.fail(err)
			return
		}
	}
}

// readFrame reads and handles one frame.
func (c *conn) readFrame() error {
	hdr := c.hbuf[:]
	if _, err := io.ReadFull(c.br, hdr); err != nil {
		return unavailable(err)
	}
	n := int(hdr[0])<<16 | int(hdr[1])<<8 | int(hdr[2])
	typ, flags := hdr[3], hdr[4]
	id := binary.BigEndian.Uint32(hdr[frameStreamAt:]) & idMask
	if n > defaultMaxFrame { // we never raise SETTINGS_MAX_FRAME_SIZE
		return status.Errorf(codes.Internal, "HTTP/2: a %d-byte frame exceeds the 16384 bytes allowed", n)
	}
	if cap(c.frame) < n {
		c.frame = make([]byte, n)
	}
	p := c.frame[:n]
	if _, err := io.ReadFull(c.br, p); err != nil {
		return unavailable(err)
	}
	return c.handle(typ, flags, id, p)
}

// handle processes one frame.
func (c *conn) handle(typ, flags byte, id uint32, p []byte) error {
	if c.hdr != nil && typ != frameContinuation {
		return status.Error(codes.Internal, "HTTP/2: header block interrupted")
	}
	switch typ {
	case frameData:
		c.consumed += int64(len(p))
		body, err := unpad(flags, p)
		if err != nil {
			return err
		}
		c.smu.Lock()
		cl := c.streams[id]
		if cl != nil {
			cl.data = append(cl.data, body...)
		}
		c.smu.Unlock()
		if flags&flagEndStream != 0 {
			c.complete(id)
		}
		if c.consumed > maxWindow/2 {
			var b [frameHeaderLen + windowUpdateLen]byte
			appendFrameHeader(b[:0], windowUpdateLen, frameWindowUpdate, 0, 0)
			binary.BigEndian.PutUint32(b[frameHeaderLen:], uint32(c.consumed))
			c.consumed = 0
			c.queue(b[:])
		}
	case frameHeaders:
		body, err := unpad(flags, p)
		if err != nil {
			return err
		}
		if flags&flagPriority != 0 {
			if len(body) < priorityLen {
				return status.Error(codes.Internal, "HTTP/2: short HEADERS frame")
			}
			body = body[priorityLen:]
		}
		c.hdrID, c.hdrEnd = id, flags&flagEndStream != 0
		if flags&flagEndHeaders == 0 {
			c.hdr = append([]byte{}, body...)
			return nil
		}
		return c.headers(body)
	case frameContinuation:
		if c.hdr == nil || id != c.hdrID {
			return status.Error(codes.Internal, "HTTP/2: unexpected CONTINUATION")
		}
		c.hdr = append(c.hdr, p...)
		if flags&flagEndHeaders != 0 {
			block := c.hdr
			c.hdr = nil
			return c.headers(block)
		}
	case frameRSTStream:
		if len(p) != rstStreamLen {
			return status.Error(codes.Internal, "HTTP/2: bad RST_STREAM")
		}
		code := binary.BigEndian.Uint32(p)
		if cl := c.take(id); cl != nil {
			cl.err = status.Errorf(codes.Unavailable, "stream reset by the server (HTTP/2 error %d)", code)
			cl.done <- struct{}{}
		}
	case frameSettings:
		if flags&flagAck != 0 {
			return nil
		}
		if len(p)%settingLen != 0 {
			return status.Error(codes.Internal, "HTTP/2: bad SETTINGS")
		}
		c.wmu.Lock()
		for i := 0; i < len(p); i += settingLen {
			v := binary.BigEndian.Uint32(p[i+2:])
			switch binary.BigEndian.Uint16(p[i:]) {
			case settingInitialWindowSize:
				c.peerWin = int64(v)
			case settingMaxFrameSize:
				c.maxFrame = int(v)
			case settingMaxConcurrentStreams:
				c.smu.Lock()
				c.maxStreams = v
				c.scond.Broadcast()
				c.smu.Unlock()
			}
		}
		c.wmu.Unlock()
		var b [frameHeaderLen]byte
		c.queue(appendFrameHeader(b[:0], 0, frameSettings, flagAck, 0))
	case framePing:
		if flags&flagAck == 0 && len(p) == pingLen {
			var b [frameHeaderLen + pingLen]byte
			appendFrameHeader(b[:0], pingLen, framePing, flagAck, 0)
			copy(b[frameHeaderLen:], p)
			c.queue(b[:])
		}
	case frameGoAway:
		if len(p) < goAwayMinLen {
			return status.Error(codes.Internal, "HTTP/2: bad GOAWAY")
		}
		c.goAway(binary.BigEndian.Uint32(p) & idMask)
	case frameWindowUpdate:
		if len(p) != windowUpdateLen {
			return status.Error(codes.Internal, "HTTP/2: bad WINDOW_UPDATE")
		}
		if id == 0 {
			c.wmu.Lock()
			c.sendWin += int64(binary.BigEndian.Uint32(p) & idMask)
			c.wcond.Broadcast()
			c.wmu.Unlock()
		}
	}
	return nil
}

// headers decodes a complete header block of stream hdrID.
func (c *conn) headers(block []byte) error {
	c.fields = headerFields{}
	if _, err := c.dec.Write(block); err != nil {
		return status.Errorf(codes.Internal, "HTTP/2 headers: %v", err)
	}
	if err := c.dec.Close(); err != nil {
		return status.Errorf(codes.Internal, "HTTP/2 headers: %v", err)
	}
	c.smu.Lock()
	if cl := c.streams[c.hdrID]; cl != nil {
		if c.fields.status != "" {
			cl.http = c.fields.status
		}
		if c.fields.grpcStatus != "" {
			code, err := strconv.Atoi(c.fields.grpcStatus)
			if err != nil || code < 0 {
				code = int(codes.Unknown)
			}
			cl.code = code
			cl.message = c.fields.grpcMessage
		}
	}
	c.smu.Unlock()
	if c.hdrEnd {
		c.complete(c.hdrID)
	}
	return nil
}

func (c *conn) emit(f hpack.HeaderField) {
	switch f.Name {
	case ":status":
		c.fields.status = f.Value
	case "grpc-status":
		c.fields.grpcStatus = f.Value
	case "grpc-message":
		c.fields.grpcMessage = f.Value
	}
}

// goAway handles the server's GOAWAY (RFC 9113, 6.8): the streams up to
// last may have been processed and go on to their end; the later ones were
// not, and fail with errRefused so that the caller sends them again on a
// new connection; no new stream starts here, and the connection closes
// after its last stream.
func (c *conn) goAway(last uint32) {
	c.dead.Store(true)
	c.smu.Lock()
	if !c.goaway || last < c.lastID {
		c.goaway, c.lastID = true, last
	}
	var refused []*call
	for id, cl := range c.streams {
		if id > c.lastID {
			refused = append(refused, cl)
			delete(c.streams, id)
		}
	}
	c.scond.Broadcast()
	c.ended()
	c.smu.Unlock()
	for _, cl := range refused {
		cl.err = errRefused
		cl.done <- struct{}{}
	}
}

// complete hands a finished stream to its worker.
func (c *conn) complete(id uint32) {
	if cl := c.take(id); cl != nil {
		cl.done <- struct{}{}
	}
}

// take removes stream id, ended, and returns its call (nil when the
// stream is not open).
func (c *conn) take(id uint32) *call {
	c.smu.Lock()
	defer c.smu.Unlock()
	cl := c.streams[id]
	delete(c.streams, id)
	if cl != nil {
		c.ended()
	}
	return cl
}
