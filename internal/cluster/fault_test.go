package cluster

import (
	"strings"
	"testing"
	"time"

	"github.com/etcdperf/etcdperf/internal/netfault"
)

func TestParseFaults(t *testing.T) {
	got, err := ParseFaults([]string{"3:peer-latency=200ms,20ms", "all:slow-fsync=15ms"}, 3)
	if err != nil {
		t.Fatal(err)
	}
	want := []Fault{{SlowFsync: 15 * time.Millisecond}, {SlowFsync: 15 * time.Millisecond},
		{SlowFsync: 15 * time.Millisecond, PeerDelay: netfault.Delay{Latency: 200 * time.Millisecond, Jitter: 20 * time.Millisecond}}}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("member %d: %+v, want %+v", i+1, got[i], want[i])
		}
	}
	if s := got[2].String(); s != "slow-fsync=15ms peer-latency=200ms,20ms" {
		t.Errorf("String %q", s)
	}
	if got, err := ParseFaults(nil, 3); got != nil || err != nil {
		t.Errorf("no fault: %v %v", got, err)
	}
	for spec, want := range map[string]string{
		"0:slow-fsync=15ms":        "from 1 to 3",
		"x:slow-fsync=15ms":        "from 1 to 3",
		"2:slow-fsync":             "MEMBER:KIND=VALUE",
		"2slow-fsync=1ms":          "MEMBER:KIND=VALUE",
		"2:slow-fsync=0s":          "positive",
		"2:slow-fsync=later":       "not a duration",
		"2:cpu-limit=lots":         "not a number",
		"2:cpu-limit=0.001":        "smallest quota",
		"2:peer-latency=0s":        "latency must be positive",
		"2:peer-latency=10ms,20ms": "jitter",
		"2:noise=1":                "unknown kind",
	} {
		if _, err := ParseFaults([]string{spec}, 3); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", spec, err, want)
		}
	}
	if _, err := ParseFaults([]string{"1:peer-latency=1s"}, 1); err == nil || !strings.Contains(err.Error(), "2 or more") {
		t.Errorf("peer latency on a single member: %v", err)
	}
	if _, err := ParseFaults([]string{"1:cpu-limit=0.5", "all:cpu-limit=0.2"}, 2); err == nil || !strings.Contains(err.Error(), "already has") {
		t.Errorf("two CPU limits on one member: %v", err)
	}
}

// A member's command line carries its faults to the member process.
func TestMemberArgsCarryFaults(t *testing.T) {
	c := MemberConfig{Name: "m", DataDir: "/d", ClientURL: "http://127.0.0.1:1", PeerURL: "http://127.0.0.1:2",
		Fault: Fault{CPULimit: 0.25, PeerDelay: netfault.Delay{Latency: time.Second, Jitter: 100 * time.Millisecond}}}
	args := strings.Join(c.Args(), " ")
	for _, want := range []string{"--cpu-limit 0.25", "--peer-latency 1s,100ms"} {
		if !strings.Contains(args, want) {
			t.Errorf("args %q lack %q", args, want)
		}
	}
}
