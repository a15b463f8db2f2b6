package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/etcdperf/etcdperf/internal/result"
	"github.com/etcdperf/etcdperf/internal/testutil"
)

// startSlowdisk runs `etcdperf slowdisk` in the background and waits for
// its mount. The returned function stops it and returns its outcome.
func startSlowdisk(t *testing.T, src, mnt string, args ...string) func() testutil.Run {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("skipped: mounting FUSE needs root")
	}
	if _, err := os.Stat("/dev/fuse"); err != nil {
		t.Skipf("skipped: no /dev/fuse here: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	cmd := exec.CommandContext(ctx, testutil.Binary(t), append([]string{"slowdisk", "--src", src, "--mnt", mnt}, args...)...)
	done := make(chan testutil.Run, 1)
	go func() { done <- testutil.Wait(t, cmd, ctx) }()
	if err := testutil.WaitMounted(mnt, "fuse.etcdperf-slowdisk", 15*time.Second); err != nil {
		cmd.Process.Kill()
		cancel()
		r := <-done
		t.Fatalf("slowdisk did not mount: %v\n%s", err, r.Stderr)
	}
	stopped := false
	stop := func() testutil.Run {
		stopped = true
		cmd.Process.Signal(syscall.SIGTERM)
		r := <-done
		cancel()
		return r
	}
	t.Cleanup(func() {
		if !stopped {
			stop()
		}
	})
	return stop
}

func TestSlowdiskMakesDiskFail(t *testing.T) {
	src := t.TempDir()
	mnt := filepath.Join(t.TempDir(), "slow") // created by slowdisk
	stop := startSlowdisk(t, src, mnt, "--fsync-delay", "15ms")

	r := testutil.RunBinary(t, time.Minute, "disk", "--dir", mnt, "--size", "64k", "-o", "json")
	if r.Code != 1 {
		t.Fatalf("disk on a 15ms-fsync mount: exit %d, want 1\n%s", r.Code, r.Stderr)
	}
	res := decodeResult(t, r.Stdout)
	if res.Verdict != result.Fail || res.Disk.SyncLatency.P50 < 0.015 {
		t.Errorf("verdict %s, sync p50 %v; want fail and at least 15ms", res.Verdict, res.Disk.SyncLatency.P50)
	}
	found := false
	for _, f := range res.Findings {
		found = found || f.ID == "disk_too_slow"
	}
	if !found {
		t.Errorf("no disk_too_slow finding: %+v", res.Findings)
	}

	out := stop()
	if out.Code != 0 || !strings.Contains(out.Stderr, "unmounted") {
		t.Errorf("slowdisk exit %d:\n%s", out.Code, out.Stderr)
	}
	if testutil.IsMounted(mnt) {
		t.Errorf("%s is still mounted", mnt)
	}
	if _, err := os.Stat(mnt); !os.IsNotExist(err) {
		t.Errorf("the mount point slowdisk created was not removed: %v", err)
	}
	assertEmptyDir(t, src)
}

func TestSlowdiskUsage(t *testing.T) {
	for _, args := range [][]string{
		{"slowdisk"},
		{"slowdisk", "--src", "/nonexistent-etcdperf", "--mnt", "/tmp/x"},
		{"slowdisk", "--src", "/tmp", "--mnt", "/tmp/x", "--fsync-delay", "-1ms"},
		{"slowdisk", "--src", "/tmp", "--mnt", "/tmp/x", "--fsync-delay", "2h"},
	} {
		r := testutil.RunBinary(t, 30*time.Second, args...)
		if r.Code != 2 || r.Stderr == "" {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 with a message", args, r.Code, r.Stderr)
		}
	}
}
