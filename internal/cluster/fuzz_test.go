package cluster

import (
	"net"
	"strconv"
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

// FuzzParseFaults feeds --fault values: never a panic, a one-line error,
// and an accepted fault says itself in words that read back the same.
func FuzzParseFaults(f *testing.F) {
	for _, s := range []string{"3:cpu-limit=0.1", "all:slow-fsync=15ms", "2:peer-latency=200ms,20ms", "1:iops-limit=200",
		"all:write-bps-limit=10m", "2:write-bps-limit=10MiB/s", "1:iops-limit=0", "1:write-bps-limit=1.5", "x:y=z", "1:iops-limit=1e3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		faults, err := ParseFaults([]string{spec}, 3)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error %q is not one line", err)
			}
			return
		}
		for i, ft := range faults {
			if !ft.Any() {
				continue
			}
			var specs []string
			for _, part := range strings.Fields(ft.String()) {
				specs = append(specs, strconv.Itoa(i+1)+":"+part)
			}
			again, err := ParseFaults(specs, 3)
			if err != nil || again[i] != ft {
				t.Errorf("%q: member %d %+v says %q, which reads back as %+v %v", spec, i+1, ft, ft.String(), again, err)
			}
		}
	})
}
