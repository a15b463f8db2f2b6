// Package netfault puts a slow link in front of a TCP port on this host: a
// proxy that listens on a loopback address and forwards every connection
// to the real port, delivering each chunk of data in either direction a
// fixed delay (plus jitter) after it arrived, as a link with that latency
// would (tc netem's delay, where the kernel has no sch_netem).
//
// etcd's functional tests delay a member's peer port the same way with
// go.etcd.io/etcd/pkg/v3/proxy; that proxy listens on every interface
// (":port") and sleeps before each read's forwarding, so that its delay
// adds up under a steady stream. This one listens on the address it is
// given and delays each chunk from its own arrival, keeping their order.
package netfault

import (
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"sync"
	"time"
)

// Delay is what the link adds to a round trip: half of Latency each way,
// with up to Jitter/2 more or less each way, uniformly; from After on
// since the proxy started (0: from the start), as a link that degrades
// under a running cluster.
type Delay struct {
	Latency, Jitter, After time.Duration
}

// Validate checks a delay.
func (d Delay) Validate() error {
	if d.Latency <= 0 {
		return errors.New("the latency must be positive")
	}
	if d.Jitter < 0 || d.Jitter > d.Latency {
		return fmt.Errorf("the jitter must be between 0 and the latency (%s)", d.Latency)
	}
	if d.After < 0 {
		return errors.New("the time after which the link is slow cannot be negative")
	}
	if d.Latency > time.Minute {
		return fmt.Errorf("a latency of %s is more than a minute: etcd's peers time out long before", d.Latency)
	}
	return nil
}

func (d Delay) String() string {
	s := d.Latency.String()
	if d.Jitter > 0 {
		s = fmt.Sprintf("%s ± %s", d.Latency, d.Jitter/2)
	}
	if d.After > 0 {
		s += " from " + d.After.String() + " on"
	}
	return s
}

// oneWay is the delay of one chunk in one direction.
func (d Delay) oneWay() time.Duration {
	w := d.Latency / 2
	if d.Jitter > 0 {
		w += time.Duration(rand.Int64N(int64(d.Jitter)+1)) - d.Jitter/2
	}
	return max(0, w)
}

// chunkSize and queued bound what the proxy holds per direction of a
// connection: at most queued chunks of chunkSize bytes in flight.
const (
	chunkSize = 32 << 10
	queued    = 256
)

// Proxy forwards the connections to one address through a slow link.
type Proxy struct {
	ln     net.Listener
	target string
	delay  Delay
	// slowFrom is when the link turns slow (Delay.After after Listen).
	slowFrom time.Time

	mu     sync.Mutex
	conns  map[net.Conn]struct{}
	closed bool
	wg     sync.WaitGroup
}

// Listen starts a proxy on listen (host:port; a loopback address) that
// forwards to target through a link with delay d.
func Listen(listen, target string, d Delay) (*Proxy, error) {
	if err := d.Validate(); err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return nil, fmt.Errorf("the slow link on %s: %w", listen, err)
	}
	p := &Proxy{ln: ln, target: target, delay: d, slowFrom: time.Now().Add(d.After), conns: map[net.Conn]struct{}{}}
	p.wg.Add(1)
	go p.accept()
	return p, nil
}

// Addr is the address the proxy listens on.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Close stops listening, cuts every connection and waits until every
// goroutine of the proxy has ended.
func (p *Proxy) Close() error {
	p.mu.Lock()
	p.closed = true
	for c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
	err := p.ln.Close()
	p.wg.Wait()
	return err
}

// track registers a connection; false when the proxy is closing.
func (p *Proxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		c.Close()
		return false
	}
	p.conns[c] = struct{}{}
	return true
}

func (p *Proxy) untrack(c net.Conn) {
	p.mu.Lock()
	delete(p.conns, c)
	p.mu.Unlock()
	c.Close()
}

func (p *Proxy) accept() {
	defer p.wg.Done()
	for {
		in, err := p.ln.Accept()
		if err != nil {
			return // closed
		}
		if !p.track(in) {
			return
		}
		p.wg.Add(1)
		go p.serve(in)
	}
}

// serve connects in to the target and forwards both ways until either
// side closes.
func (p *Proxy) serve(in net.Conn) {
	defer p.wg.Done()
	defer p.untrack(in)
	out, err := net.DialTimeout("tcp", p.target, 5*time.Second)
	if err != nil {
		return // the client sees its connection closed, as with a refused port
	}
	if !p.track(out) {
		return
	}
	defer p.untrack(out)
	cut := func() { in.Close(); out.Close() }
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); p.pipe(out, in, cut); closeWrite(out) }()
	go func() { defer wg.Done(); p.pipe(in, out, cut); closeWrite(in) }()
	wg.Wait()
}

func closeWrite(c net.Conn) {
	if tc, ok := c.(*net.TCPConn); ok {
		tc.CloseWrite()
	}
}

type chunk struct {
	data []byte
	due  time.Time
}

// pipe copies src to dst, each chunk written its one-way delay after it
// was read, in order. A failed write cuts the whole connection.
func (p *Proxy) pipe(dst io.Writer, src io.Reader, cut func()) {
	q := make(chan chunk, queued)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for c := range q {
			if d := time.Until(c.due); d > 0 {
				time.Sleep(d)
			}
			if _, err := dst.Write(c.data); err != nil {
				cut()
				for range q { // drain until the reader sees the cut
				}
				return
			}
		}
	}()
	var last time.Time
	buf := make([]byte, chunkSize)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			now := time.Now()
			due := now
			if !now.Before(p.slowFrom) {
				due = now.Add(p.delay.oneWay())
			}
			if due.Before(last) { // jitter never reorders a stream
				due = last
			}
			last = due
			q <- chunk{data: append([]byte(nil), buf[:n]...), due: due}
		}
		if err != nil {
			break
		}
	}
	close(q)
	<-done
}
