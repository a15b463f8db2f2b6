package testutil

import (
	"net"
	"os"
	"testing"
)

// FreePort returns a loopback TCP port that was free a moment ago.
func FreePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// SilentListener listens on a loopback port, accepts connections and
// never answers: a server that hangs. It stops when the test ends.
func SilentListener(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan []net.Conn, 1)
	go func() {
		var held []net.Conn
		for {
			c, err := l.Accept()
			if err != nil {
				done <- held
				return
			}
			held = append(held, c)
		}
	}()
	t.Cleanup(func() {
		l.Close()
		for _, c := range <-done {
			c.Close()
		}
	})
	return l.Addr().String()
}

// AssertEmptyDir fails the test when dir holds anything.
func AssertEmptyDir(t testing.TB, dir string) {
	t.Helper()
	left, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(left) > 0 {
		t.Errorf("left behind in %s: %v", dir, left)
	}
}
