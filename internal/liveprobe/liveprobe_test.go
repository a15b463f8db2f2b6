package liveprobe

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/etcdperf/etcdperf/internal/cluster"
	"github.com/etcdperf/etcdperf/internal/diskprobe"
	"github.com/etcdperf/etcdperf/internal/hoststats"
	"github.com/etcdperf/etcdperf/internal/limits"
	"github.com/etcdperf/etcdperf/internal/result"
)

// The probe's own decision: the fewest WAL fsyncs of a watched member
// judge whether it runs; with enough of them nothing is written beside
// the member unless the user asked for the probe by name.
func TestBesideSkipsWhenTheMemberJudgesItsDisk(t *testing.T) {
	srv := &result.Server{WALFsync: &result.Latency{Count: 900}, Members: []result.MemberServer{
		{Name: "a", WALFsync: &result.Latency{Count: 600}}, {Name: "b", WALFsync: &result.Latency{Count: 450}}, {Name: "c"}}}
	if n, ok := memberFsyncs(srv); !ok || n != 450 {
		t.Errorf("memberFsyncs = %d, %v; want the fewest, 450", n, ok)
	}
	if n, ok := memberFsyncs(&result.Server{WALFsync: &result.Latency{Count: 12}}); !ok || n != 12 {
		t.Errorf("one member: %d, %v; want 12", n, ok)
	}
	if _, ok := memberFsyncs(&result.Server{}); ok {
		t.Error("no histogram read, yet known")
	}

	o := Options{Window: 30 * time.Second, Probe: func(context.Context, diskprobe.Options) (*result.Result, error) {
		t.Fatal("the probe ran beside a member whose fsyncs judge its disk")
		return nil, nil
	}}
	out, err := Beside(context.Background(), o, srv, t.TempDir(), "")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out.Row, "not run: the member's own 450 WAL fsyncs in 30s judge its disk") || out.Disk != nil {
		t.Errorf("row %q, disk %+v", out.Row, out.Disk)
	}
}

// member_fsyncs_enough, as set with --limit, decides whether the member's
// own fsyncs judge its disk: 450 are enough by default, not when 500 are
// asked for (the probe then goes on to reach the member).
func TestBesideMemberFsyncsLevel(t *testing.T) {
	srv := &result.Server{Members: []result.MemberServer{{Name: "a", WALFsync: &result.Latency{Count: 450}}}}
	more, err := limits.Override(limits.Table, []string{limits.MemberFsyncsEnough + "=500"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // reaching the member fails at once
	for _, c := range []struct {
		criteria []limits.Criterion
		skipped  bool
	}{{nil, true}, {limits.Table, true}, {more, false}} {
		o := Options{Window: 30 * time.Second, Criteria: c.criteria, Conn: cluster.ConnOptions{Endpoints: []string{"127.0.0.1:1"}},
			Probe: func(context.Context, diskprobe.Options) (*result.Result, error) {
				t.Fatal("the probe ran without reaching the member")
				return nil, nil
			}}
		out, err := Beside(ctx, o, srv, t.TempDir(), anyDevice(t))
		skipped := strings.HasPrefix(out.Row, "not run: the member's own 450 WAL fsyncs in 30s judge its disk")
		if skipped != c.skipped || (err == nil) != c.skipped {
			t.Errorf("%v: row %q, err %v; want skipped %v", limits.Changed(c.criteria), out.Row, err, c.skipped)
		}
	}
}

// The guard stops the probe when the device is busier than
// probe_device_busy as set with --limit: 95% busy stops it by default,
// not when the level is 98%; a member's WAL fsync p99 is not read here.
func TestGuardDeviceBusyLevel(t *testing.T) {
	at := time.Unix(1000, 0)
	first := mark{at: at, hasHost: true, host: hoststats.Snapshot{At: at, HasDev: true}}
	m := mark{at: at.Add(3 * time.Second), hasHost: true, host: hoststats.Snapshot{At: at.Add(3 * time.Second), HasDev: true}}
	m.host.Disk.IOMs = 2850 // 95% of 3s
	higher, err := limits.Override(limits.Table, []string{limits.ProbeDeviceBusy + "=98%"})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		criteria []limits.Criterion
		stops    bool
	}{{limits.Table, true}, {higher, false}} {
		gs := guardCheck(first, m, "vdb", limits.LimitOf(c.criteria, limits.WALFsyncP99), limits.LimitOf(c.criteria, limits.ProbeDeviceBusy))
		if (gs != nil) != c.stops || gs != nil && gs.why != "the device vdb was 95% busy over the last 3s (over 90%)" {
			t.Errorf("%v: stop %+v, want %v", limits.Changed(c.criteria), gs, c.stops)
		}
	}
}

// anyDevice is a block device this host's /proc/diskstats lists, for a
// guard that must see one.
func anyDevice(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("/proc/diskstats")
	if err != nil {
		t.Skipf("skipped: no /proc/diskstats: %v", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) > 2 {
			return f[2]
		}
	}
	t.Skip("skipped: /proc/diskstats lists no device")
	return ""
}

// A guard that cannot see what it guards on does not start the probe
// beside a live member, and says why in the row; asked for by name, the
// probe goes on (here to reach the member) with the guard's blind side
// said.
func TestBesideBlindGuard(t *testing.T) {
	few := &result.Server{Members: []result.MemberServer{{Name: "a", WALFsync: &result.Latency{Count: 5}}}}
	dev := anyDevice(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // reaching the member fails at once
	for _, c := range []struct {
		name     string
		srv      *result.Server
		device   string
		explicit bool
		row      string
	}{
		{"a device that cannot be read", few, "nosuchdevice", false, "not run: the device nosuchdevice could not be read"},
		{"no fsync histogram", &result.Server{}, dev, false, "not run: the member's WAL fsync histogram could not be read, so nothing"},
		{"no block device: the fsyncs guard it", few, "", false, ""},
		{"asked for by name", &result.Server{}, "nosuchdevice", true, ""},
	} {
		dir := t.TempDir()
		o := Options{Window: 30 * time.Second, Explicit: c.explicit, Conn: cluster.ConnOptions{Endpoints: []string{"127.0.0.1:1"}},
			Probe: func(context.Context, diskprobe.Options) (*result.Result, error) {
				t.Fatalf("%s: the probe ran", c.name)
				return nil, nil
			}}
		out, err := Beside(ctx, o, c.srv, dir, c.device)
		if c.row == "" {
			if err == nil {
				t.Errorf("%s: the probe did not go on to reach the member (row %q)", c.name, out.Row)
			}
			continue
		}
		if err != nil || !strings.HasPrefix(out.Row, c.row) {
			t.Errorf("%s: row %q, err %v; want %q", c.name, out.Row, err, c.row)
		}
		if ents, _ := os.ReadDir(dir); len(ents) > 0 {
			t.Errorf("%s: %d files written beside the member", c.name, len(ents))
		}
	}
}
