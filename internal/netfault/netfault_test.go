package netfault

import (
	"bytes"
	"crypto/rand"
	"io"
	"net"
	"runtime"
	"strings"
	"testing"
	"time"
)

// echo serves an echo server on loopback until the test ends.
func echo(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { io.Copy(c, c); c.Close() }()
		}
	}()
	return ln.Addr().String()
}

func roundTrip(t *testing.T, c net.Conn) time.Duration {
	t.Helper()
	start := time.Now()
	if _, err := c.Write([]byte("ping")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 4)
	if _, err := io.ReadFull(c, buf); err != nil || string(buf) != "ping" {
		t.Fatalf("%q %v", buf, err)
	}
	return time.Since(start)
}

// A round trip through the link takes at least its latency; data of any
// size arrives whole and in order, also with jitter; Close ends every
// connection and goroutine.
func TestDelay(t *testing.T) {
	target := echo(t)
	before := runtime.NumGoroutine()
	p, err := Listen("127.0.0.1:0", target, Delay{Latency: 80 * time.Millisecond, Jitter: 40 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(p.Addr(), "127.0.0.1:") {
		t.Errorf("listens on %s, not on loopback only", p.Addr())
	}
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	direct, err := net.Dial("tcp", target)
	if err != nil {
		t.Fatal(err)
	}
	defer direct.Close()
	for i := 0; i < 5; i++ {
		// Each way takes 40ms ± 20ms: a round trip at least 40ms.
		if rt := roundTrip(t, c); rt < 40*time.Millisecond {
			t.Errorf("round trip %v through an 80ms link", rt)
		}
	}
	// The link's delay and the direct one's, side by side: the link adds
	// about its latency (at least half of it, the least jitter allows).
	var slow, fast time.Duration
	for i := 0; i < 5; i++ {
		slow += roundTrip(t, c)
		fast += roundTrip(t, direct)
	}
	if slow-fast < 5*40*time.Millisecond {
		t.Errorf("5 round trips: %v through the link, %v direct", slow, fast)
	}

	data := make([]byte, 3<<20)
	rand.Read(data)
	go func() { c.Write(data) }()
	got := make([]byte, len(data))
	if _, err := io.ReadFull(c, got); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("3 MiB through the link: err %v, equal %v", err, bytes.Equal(got, data))
	}

	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Read(make([]byte, 1)); err == nil {
		t.Error("a connection survived Close")
	}
	c.Close()
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before+1 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before+1 {
		t.Errorf("%d goroutines after Close, %d before", n, before)
	}
	if _, err := net.DialTimeout("tcp", p.Addr(), time.Second); err == nil {
		t.Error("the link still accepts after Close")
	}
}

// A target that refuses: the client's connection is closed, nothing hangs.
func TestTargetDown(t *testing.T) {
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	dead := ln.Addr().String()
	ln.Close()
	p, err := Listen("127.0.0.1:0", dead, Delay{Latency: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.Read(make([]byte, 1)); err != io.EOF {
		t.Errorf("read %v, want EOF", err)
	}
}

func TestValidate(t *testing.T) {
	for _, d := range []Delay{{}, {Latency: -1}, {Latency: time.Second, Jitter: 2 * time.Second}, {Latency: time.Second, Jitter: -1}, {Latency: 2 * time.Minute}} {
		if d.Validate() == nil {
			t.Errorf("%+v accepted", d)
		}
		if _, err := Listen("127.0.0.1:0", "127.0.0.1:1", d); err == nil {
			t.Errorf("%+v: a proxy started", d)
		}
	}
	if s := (Delay{Latency: 200 * time.Millisecond, Jitter: 20 * time.Millisecond}).String(); s != "200ms ± 10ms" {
		t.Errorf("%q", s)
	}
}

// A link with After is fast until then, and slow from then on, on the
// connection already open.
func TestDelayAfter(t *testing.T) {
	p, err := Listen("127.0.0.1:0", echo(t), Delay{Latency: 300 * time.Millisecond, After: 400 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if rt := roundTrip(t, c); rt >= 300*time.Millisecond {
		t.Errorf("before After: a round trip of %s, want the link fast", rt)
	}
	time.Sleep(time.Until(p.slowFrom))
	if rt := roundTrip(t, c); rt < 300*time.Millisecond {
		t.Errorf("after After: a round trip of %s, want at least the latency", rt)
	}
	if got := (Delay{Latency: time.Second, After: 15 * time.Second}).String(); got != "1s from 15s on" {
		t.Errorf("String %q", got)
	}
	if err := (Delay{Latency: time.Second, After: -time.Second}).Validate(); err == nil {
		t.Error("a negative After")
	}
}
