package e2e

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/etcdperf/etcdperf/internal/cgroup"
	"github.com/etcdperf/etcdperf/internal/result"
	"github.com/etcdperf/etcdperf/internal/testutil"
)

// skipWithoutIOCap skips a test that caps a member's writes where this host
// cannot, and returns a folder on a disk for its data.
func skipWithoutIOCap(t *testing.T) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("skipped: capping a member's I/O needs root")
	}
	if err := cgroup.Host.CanLimitIO(); err != nil {
		t.Skipf("skipped: %v", err)
	}
	dir := t.TempDir()
	if _, err := cgroup.Host.DeviceOf(dir); err != nil {
		t.Skipf("skipped: %v", err)
	}
	return dir
}

// walFsyncs runs a short put load on one member and returns its Result and
// etcd's WAL fsyncs per second.
func walFsyncs(t *testing.T, dir string, fault ...string) (*result.Result, float64) {
	t.Helper()
	args := append([]string{"bench", "put", "--members", "1", "--data-dir", dir, "--duration", "4s", "--clients", "16", "-o", "json"}, fault...)
	r := testutil.RunBinary(t, time.Minute, args...)
	if r.Code == 2 {
		t.Fatalf("%s: exit 2: %s", strings.Join(args, " "), r.Stderr)
	}
	res := decodeResult(t, r.Stdout)
	if res.Bench == nil || res.Server == nil || res.Server.WALFsync == nil || res.Bench.Seconds <= 0 {
		t.Fatalf("no WAL fsync figures: %s", r.Stdout)
	}
	return res, float64(res.Server.WALFsync.Count) / res.Bench.Seconds
}

// A member whose writes are capped at 100 operations per second syncs its
// WAL no more often than that under a put load that, without the cap,
// makes it sync several times as often; its fsyncs get slower; its group
// is gone when the run ends.
func TestIOPSLimitedMember(t *testing.T) {
	dir := skipWithoutIOCap(t)
	const capIOPS = 100
	free, freeRate := walFsyncs(t, dir)
	assertEmptyDir(t, dir)
	capped, cappedRate := walFsyncs(t, dir, "--fault", "1:iops-limit=100")
	t.Logf("WAL fsyncs: %.0f/s (p99 %.1fms, %.0f puts/s) uncapped, %.0f/s (p99 %.1fms, %.0f puts/s) under a %d-IOPS cap",
		freeRate, free.Server.WALFsync.P99*1000, free.Bench.Throughput, cappedRate, capped.Server.WALFsync.P99*1000, capped.Bench.Throughput, capIOPS)
	if freeRate < 3*capIOPS {
		t.Skipf("skipped: without a cap this member syncs its WAL %.0f times a second, too few to see a %d-IOPS cap", freeRate, capIOPS)
	}
	if cappedRate > 1.3*capIOPS || cappedRate > freeRate/3 {
		t.Errorf("under a %d-IOPS cap the WAL synced %.0f times a second (%.0f without)", capIOPS, cappedRate, freeRate)
	}
	if capped.Server.WALFsync.P99 < 2*free.Server.WALFsync.P99 {
		t.Errorf("WAL fsync p99 %.1fms under the cap, %.1fms without", capped.Server.WALFsync.P99*1000, free.Server.WALFsync.P99*1000)
	}
	if g := ownGroups(t); len(g) > 0 {
		t.Errorf("cgroups left: %v", g)
	}
	assertEmptyDir(t, dir)
}

// Bad I/O caps: one line, exit 2, before anything starts.
func TestIOLimitUsageErrors(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"bench", "put", "--data-dir", dir, "--fault", "1:iops-limit=0"}, "at least 1"},
		{[]string{"bench", "put", "--data-dir", dir, "--fault", "1:iops-limit=fast"}, "whole number of write operations"},
		{[]string{"bench", "put", "--data-dir", dir, "--fault", "1:write-bps-limit=1k"}, "smallest"},
		{[]string{"bench", "put", "--data-dir", dir, "--fault", "1:write-bps-limit=ten"}, "size per second"},
		{[]string{"server", "--data-dir", dir, "--iops-limit", "-1"}, "cannot be negative"},
		{[]string{"server", "--data-dir", dir, "--write-bps-limit", "100"}, "smallest"},
	} {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			r := testutil.RunBinary(t, 30*time.Second, c.args...)
			line := strings.TrimSpace(r.Stderr)
			if r.Code != 2 || strings.Contains(line, "\n") || !strings.Contains(line, c.want) {
				t.Errorf("exit %d, stderr %q; want exit 2 and one line with %q", r.Code, r.Stderr, c.want)
			}
			assertEmptyDir(t, dir)
		})
	}
	// Where a cap can be made: a data dir in memory has no disk to cap.
	if os.Geteuid() != 0 || cgroup.Host.CanLimitIO() != nil {
		return
	}
	shm, err := os.MkdirTemp("/dev/shm", "etcdperf-e2e-")
	if err != nil {
		t.Skipf("skipped the tmpfs case: %v", err)
	}
	defer os.RemoveAll(shm)
	for _, args := range [][]string{
		{"bench", "put", "--data-dir", shm, "--fault", "1:iops-limit=100"},
		{"server", "--data-dir", shm + "/m", "--iops-limit", "100"},
	} {
		r := testutil.RunBinary(t, 30*time.Second, args...)
		line := strings.TrimSpace(r.Stderr)
		if r.Code != 2 || strings.Contains(line, "\n") || !strings.Contains(line, "no block device") {
			t.Errorf("%q: exit %d, stderr %q; want exit 2 and one line with %q", args, r.Code, r.Stderr, "no block device")
		}
		assertEmptyDir(t, shm)
	}
}
