package cluster

import (
	"net"
	"strings"
	"testing"
)

// FuzzEndpoints feeds --endpoints values: a bad one is refused before any
// dial with a one-line message, never a panic; an accepted one names a
// host and a port that can be dialled.
func FuzzEndpoints(f *testing.F) {
	for _, s := range []string{"127.0.0.1:2379", "https://10.0.0.1:2379", "http://[::1]:2379", "localhost:0", "127.0.0.1",
		"unix:///tmp/etcd.sock", "http://a:b", ":2379", "127.0.0.1:99999", "http://u:p@h:1/path?q", "  h:1  ", "[::1", "%zz://x:1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, ep string) {
		e, err := parseEndpoint(ep)
		verr := ConnOptions{Endpoints: []string{ep}}.Validate()
		if (err == nil) != (verr == nil) {
			t.Fatalf("parseEndpoint %v but Validate %v", err, verr)
		}
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error %q is not one line", err)
			}
			return
		}
		host, port, serr := net.SplitHostPort(e.addr)
		if serr != nil || port == "" || host != e.host {
			t.Errorf("%q accepted as %+v", ep, e)
		}
		if e.scheme != "" && e.scheme != "http" && e.scheme != "https" {
			t.Errorf("%q accepted with scheme %q", ep, e.scheme)
		}
	})
}
