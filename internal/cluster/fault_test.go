package cluster

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/etcdperf/etcdperf/internal/cgroup"
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

// The I/O caps: parsed, carried to the member's command line, and bad
// values refused with what to write instead.
func TestParseIOFaults(t *testing.T) {
	for spec, want := range map[string]string{
		"2:iops-limit=0":               "at least 1",
		"2:iops-limit=-5":              "at least 1",
		"2:iops-limit=1.5":             "whole number",
		"2:iops-limit=lots":            "whole number",
		"2:write-bps-limit=fast":       "size per second",
		"2:write-bps-limit=100":        "smallest",
		"2:write-bps-limit=10x":        "unknown unit",
		"2:write-bps-limit=0":          "must be positive",
		"all:disk-iops=100":            "unknown kind",
		"4:iops-limit=100":             "from 1 to 3",
		"1:iops-limit":                 "MEMBER:KIND=VALUE",
		"2:write-bps-limit=1.5m":       "",
		"3:write-bps-limit=10MiB/s":    "",
		"all:iops-limit=200":           "",
		"1:iops-limit=9999999999999":   "",
		"1:write-bps-limit=1.0000001m": "whole number of bytes",
	} {
		_, err := ParseFaults([]string{spec}, 3)
		if want == "" {
			if err != nil && os.Geteuid() == 0 && cgroup.Host.CanLimitIO() == nil {
				t.Errorf("%q: %v", spec, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", spec, err, want)
		}
	}
	if err := cgroup.Host.CanLimitIO(); err != nil || os.Geteuid() != 0 {
		t.Skipf("skipped the rest: an I/O cap needs root and a blkio or io cgroup (%v)", err)
	}
	got, err := ParseFaults([]string{"all:iops-limit=200", "3:write-bps-limit=10m", "2:cpu-limit=0.5"}, 3)
	if err != nil {
		t.Fatal(err)
	}
	want := []Fault{{IOPSLimit: 200}, {IOPSLimit: 200, CPULimit: 0.5}, {IOPSLimit: 200, WriteBPSLimit: 10 << 20}}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("member %d: %+v, want %+v", i+1, got[i], want[i])
		}
	}
	if s := got[2].String(); s != "iops-limit=200 write-bps-limit=10MiB" {
		t.Errorf("String %q", s)
	}
	if again, err := ParseFaults([]string{"1:write-bps-limit=10MiB"}, 1); err != nil || again[0].WriteBPSLimit != 10<<20 {
		t.Errorf("String read back: %+v %v", again, err)
	}
	if SlowDiskSupported() == nil {
		for _, specs := range [][]string{{"1:slow-fsync=5ms", "1:iops-limit=100"}, {"all:write-bps-limit=1m", "2:slow-fsync=5ms"}} {
			if _, err := ParseFaults(specs, 2); err == nil || !strings.Contains(err.Error(), "cannot go on the same member") {
				t.Errorf("%q: %v", specs, err)
			}
		}
	}
	if _, err := ParseFaults([]string{"1:iops-limit=100", "all:iops-limit=50"}, 2); err == nil || !strings.Contains(err.Error(), "already has") {
		t.Errorf("two IOPS caps on one member: %v", err)
	}
	args := strings.Join(MemberConfig{Name: "m", DataDir: "/d", Fault: got[2]}.Args(), " ")
	if !strings.Contains(args, "--iops-limit 200 --write-bps-limit 10485760") {
		t.Errorf("args %q lack the I/O caps", args)
	}
	if err := (Fault{IOPSLimit: 100}).ValidateDir("/dev/shm/etcdperf-none"); err == nil || !strings.Contains(err.Error(), "no block device") {
		t.Errorf("a cap on tmpfs: %v", err)
	}
	if err := (Fault{IOPSLimit: 100}).ValidateDir(t.TempDir()); err != nil {
		t.Errorf("a cap on the test's folder: %v", err)
	}
}
