package lab

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
	if d, err := ParseDelay("1.1s,100ms@15s"); err != nil || d != (netfault.Delay{Latency: 1100 * time.Millisecond, Jitter: 100 * time.Millisecond, After: 15 * time.Second}) ||
		DelayArg(d) != "1.1s,100ms@15s" {
		t.Errorf("a link slow after 15s: %+v, %v, %q", d, err, DelayArg(d))
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
		"2:peer-latency=1s@soon":   "is not a duration",
		"2:peer-latency=1s@-5s":    "cannot be negative",
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

// The volume caps: parsed, carried to the member's command line, and
// refused where they cannot go.
func TestParseVolumeFaults(t *testing.T) {
	for spec, want := range map[string]string{
		"2:volume-iops=0":         "at least 1",
		"2:volume-iops=-1":        "at least 1",
		"2:volume-iops=many":      "whole number",
		"2:volume-write-bps=0":    "must be positive",
		"2:volume-write-bps=100":  "smallest",
		"2:volume-write-bps=fast": "size per second",
		"2:volume-latency=1ms":    "volume-iops, volume-write-bps",
	} {
		if _, err := ParseFaults([]string{spec}, 3); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", spec, err, want)
		}
	}
	f := Fault{VolumeIOPS: 1500, VolumeWriteBPS: 10 << 20}
	if s := f.String(); s != "volume-iops=1500 volume-write-bps=10MiB" {
		t.Errorf("String %q", s)
	}
	args := strings.Join(MemberConfig{Name: "m", DataDir: "/d", Fault: f}.Args(), " ")
	if !strings.Contains(args, "--volume-iops-limit 1500 --volume-write-bps-limit 10485760") {
		t.Errorf("args %q lack the volume's caps", args)
	}
	for _, c := range []Fault{{VolumeIOPS: 100, IOPSLimit: 100}, {VolumeWriteBPS: 1 << 20, WriteBPSLimit: 1 << 20}} {
		if err := c.conflict(); err == nil || !strings.Contains(err.Error(), "cannot go on the same member") {
			t.Errorf("%s: %v", c, err)
		}
	}
	if err := (Fault{VolumeIOPS: 100, SlowFsync: time.Millisecond}).conflict(); err == nil || !strings.Contains(err.Error(), "slow-fsync") {
		t.Errorf("volume and slow view: %v", err)
	}
	if err := (Fault{VolumeIOPS: 100, CPULimit: 0.5}).conflict(); err != nil {
		t.Errorf("volume and CPU limit: %v", err)
	}
	if err := (Fault{VolumeIOPS: 100}).ValidateDir("/dev/shm/etcdperf-none"); err == nil || !strings.Contains(err.Error(), "volume-iops") || !strings.Contains(err.Error(), "no block device") {
		t.Errorf("a volume on tmpfs: %v", err)
	}
	// An empty or missing folder takes a volume; one with files does not.
	dir := t.TempDir()
	if err := CheckVolumeDir(dir); err != nil {
		t.Error(err)
	}
	if err := CheckVolumeDir(dir + "/none"); err != nil {
		t.Error(err)
	}
	os.WriteFile(dir+"/f", nil, 0o600)
	if err := CheckVolumeDir(dir); err == nil || !strings.Contains(err.Error(), "not empty") {
		t.Errorf("a folder with a file: %v", err)
	}
	if VolumeSupported() != nil || cgroup.Host.CanLimitIO() != nil {
		t.Skipf("skipped the rest: a capped volume needs root, loop devices, mkfs.ext4 and a blkio or io cgroup (%v, %v)", VolumeSupported(), cgroup.Host.CanLimitIO())
	}
	got, err := ParseFaults([]string{"all:volume-iops=400", "2:volume-write-bps=1m", "3:cpu-limit=0.5"}, 3)
	if err != nil {
		t.Fatal(err)
	}
	want := []Fault{{VolumeIOPS: 400}, {VolumeIOPS: 400, VolumeWriteBPS: 1 << 20}, {VolumeIOPS: 400, CPULimit: 0.5}}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("member %d: %+v, want %+v", i+1, got[i], want[i])
		}
	}
	for _, specs := range [][]string{{"1:volume-iops=100", "1:iops-limit=100"}, {"all:write-bps-limit=1m", "2:volume-iops=100"}} {
		if _, err := ParseFaults(specs, 2); err == nil || !strings.Contains(err.Error(), "cannot go on the same member") {
			t.Errorf("%q: %v", specs, err)
		}
	}
	if _, err := ParseFaults([]string{"1:volume-iops=100", "all:volume-iops=50"}, 2); err == nil || !strings.Contains(err.Error(), "already has") {
		t.Errorf("two volume caps on one member: %v", err)
	}
}

// etcd's timers reach a member process's command line, and its embedded
// etcd's configuration; unset, etcd's defaults stay.
func TestMemberTimers(t *testing.T) {
	c := MemberConfig{Name: "m", DataDir: "/d", ClientURL: "http://127.0.0.1:1", PeerURL: "http://127.0.0.1:2", HeartbeatMs: 950, ElectionMs: 9500}
	if args := strings.Join(c.Args(), " "); !strings.Contains(args, "--heartbeat-interval 950 --election-timeout 9500") {
		t.Errorf("args %q lack the timers", args)
	}
	ec, err := embedConfig(c)
	if err != nil || ec.TickMs != 950 || ec.ElectionMs != 9500 {
		t.Errorf("embedded config: %v, tick %d election %d; want 950 and 9500", err, ec.TickMs, ec.ElectionMs)
	}
	c.HeartbeatMs, c.ElectionMs = 0, 0
	if args := strings.Join(c.Args(), " "); strings.Contains(args, "heartbeat") || strings.Contains(args, "election") {
		t.Errorf("args %q name timers that were not set", args)
	}
	if ec, _ := embedConfig(c); ec.TickMs != 100 || ec.ElectionMs != 1000 {
		t.Errorf("unset timers: tick %d election %d, want etcd's 100 and 1000", ec.TickMs, ec.ElectionMs)
	}
}
