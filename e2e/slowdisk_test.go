package e2e

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

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
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
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

// The slow disk's effect on disk and bench, and its unmount, are in the
// verdict suite (verdict_test.go).

func TestSlowdiskUsage(t *testing.T) {
	for _, args := range [][]string{
		{"slowdisk"},
		{"slowdisk", "--src", "/nonexistent-etcdperf", "--mnt", "/tmp/x"},
		{"slowdisk", "--src", "/tmp", "--mnt", "/tmp/x", "--fsync-delay", "-1ms"},
		{"slowdisk", "--src", "/tmp", "--mnt", "/tmp/x", "--fsync-delay", "2h"},
		// server --slow-fsync takes the same bounds, before any member starts
		{"server", "--data-dir", "/nonexistent-etcdperf/d", "--slow-fsync", "-1ms"},
		{"server", "--data-dir", "/nonexistent-etcdperf/d", "--slow-fsync", "2h"},
		{"server", "--slow-fsync", "15ms"},
	} {
		r := testutil.RunBinary(t, 30*time.Second, args...)
		if r.Code != 2 || r.Stderr == "" {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 with a message", args, r.Code, r.Stderr)
		}
		if args[0] == "server" && strings.Contains(r.Stdout+r.Stderr, "ready") {
			t.Errorf("%v: a member started: %q", args, r.Stdout)
		}
	}
	if _, err := os.Stat("/nonexistent-etcdperf"); err == nil {
		t.Error("a refused server created its data dir")
	}
}
