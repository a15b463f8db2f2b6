package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/etcdperf/etcdperf/internal/result"
	"github.com/etcdperf/etcdperf/internal/testutil"
)

func assertEmptyDir(t *testing.T, dir string) {
	t.Helper()
	left, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(left) > 0 {
		t.Errorf("files left behind in %s: %v", dir, left)
	}
}

func decodeResult(t *testing.T, s string) *result.Result {
	t.Helper()
	r, err := result.Decode(strings.NewReader(s))
	if err != nil {
		t.Fatalf("stdout is not a Result: %v\n%s", err, s)
	}
	return r
}

func TestDiskJSONOnDiskAndTmpfs(t *testing.T) {
	dirs := map[string]bool{t.TempDir(): false}
	if st, err := os.Stat("/dev/shm"); err == nil && st.IsDir() {
		shm, err := os.MkdirTemp("/dev/shm", "etcdperf-e2e-")
		if err == nil {
			defer os.RemoveAll(shm)
			dirs[shm] = true
		}
	}
	for dir, volatile := range dirs {
		// This test is about the Result's shape, not the disk's speed: a
		// loaded machine must not fail it, so the limit is out of reach.
		r := testutil.RunBinary(t, time.Minute, "disk", "--dir", dir, "--size", "512k", "--limit", "disk_sync_p99=10s", "-o", "json")
		if r.Code != 0 {
			t.Fatalf("exit %d on %s\n%s", r.Code, dir, r.Stderr)
		}
		res := decodeResult(t, r.Stdout)
		if res.Kind != "disk" || res.Disk == nil || res.Disk.SyncLatency == nil || res.Disk.SyncLatency.Count != res.Disk.Ops || res.Disk.Ops != (512<<10)/2300 {
			t.Fatalf("bad disk section on %s: %+v", dir, res.Disk)
		}
		if res.Disk.SyncLatency.P99 <= 0 || res.Disk.SyncLatency.HDR == "" {
			t.Errorf("sync latency lacks p99 or HDR: %+v", res.Disk.SyncLatency)
		}
		if res.Env == nil || res.Env.FSType == "" || res.Env.Volatile != volatile {
			t.Errorf("env on %s: %+v, want volatile=%v", dir, res.Env, volatile)
		}
		hasVolatile := false
		for _, f := range res.Findings {
			hasVolatile = hasVolatile || f.ID == "volatile_storage"
		}
		if hasVolatile != volatile {
			t.Errorf("%s: volatile_storage finding %v, want %v", dir, hasVolatile, volatile)
		}
		if !volatile && (res.Host == nil || res.Host.Device == "" || res.Host.Summary.WriteIOPS <= 0) {
			t.Errorf("no host device statistics on %s: %+v", dir, res.Host)
		}
		if volatile && res.Verdict != result.Warn {
			t.Errorf("tmpfs verdict %s, want warn", res.Verdict)
		}
		assertEmptyDir(t, dir)
	}
}

func TestDiskTextVerdictAndExitCode(t *testing.T) {
	dir := t.TempDir()
	// A limit no disk can meet makes the verdict fail: exit 1.
	r := testutil.RunBinary(t, time.Minute, "disk", "--dir", dir, "--size", "256k", "--limit", "disk_sync_p99=1ns")
	if r.Code != 1 {
		t.Fatalf("exit %d, want 1\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	for _, want := range []string{"sync percentiles", "FAIL disk_sync_p99", "Verdict: FAIL", "too slow for etcd"} {
		if !strings.Contains(r.Stdout, want) {
			t.Errorf("text output lacks %q:\n%s", want, r.Stdout)
		}
	}
	assertEmptyDir(t, dir)
}

func TestDiskFioEngine(t *testing.T) {
	if _, err := exec.LookPath("fio"); err != nil {
		t.Skip("fio is not installed here (apt-get install fio); .ci/run installs it")
	}
	dir := t.TempDir()
	out := filepath.Join(t.TempDir(), "fio.json")
	r := testutil.RunBinary(t, time.Minute, "disk", "--dir", dir, "--size", "512k", "--engine", "fio", "--limit", "disk_sync_p99=10s", "-o", out)
	if r.Code != 0 {
		t.Fatalf("exit %d\n%s", r.Code, r.Stderr)
	}
	res, err := result.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if res.Disk.Engine != "fio" || res.Disk.Ops != (512<<10)/2300 || res.Disk.SyncLatency.P99 <= 0 {
		t.Errorf("fio result: %+v", res.Disk)
	}
	if !strings.Contains(r.Stdout, "engine fio") {
		t.Errorf("text output does not name the engine:\n%s", r.Stdout)
	}
	assertEmptyDir(t, dir)
}

func TestDiskUsageErrors(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"disk", "--bs", "2x"}, "--bs"},
		{[]string{"disk", "--sync", "sometimes"}, "--sync must be"},
		{[]string{"disk", "--direct"}, "--direct needs --bs"},
		{[]string{"disk", "--jobs", "0"}, "--jobs"},
		{[]string{"disk", "--engine", "dd"}, "--engine"},
		{[]string{"disk", "--limit", "nosuch=1"}, "unknown criterion"},
		{[]string{"disk", "-o", "yaml"}, "not a format"},
		{[]string{"disk", "extra-arg"}, "takes no arguments"},
		{[]string{"disk", "--no-such-flag"}, "unknown flag"},
		{[]string{"disk", "--dir", filepath.Join(dir, "missing")}, "no such file or directory"},
	}
	for _, c := range cases {
		args := c.args
		if !hasDir(args) {
			args = append(args, "--dir", dir)
		}
		r := testutil.RunBinary(t, 30*time.Second, args...)
		if r.Code != 2 || !strings.Contains(r.Stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and %q", c.args, r.Code, r.Stderr, c.want)
		}
		if strings.Count(strings.TrimSpace(r.Stderr), "\n") > 0 {
			t.Errorf("%v: error is more than one line: %q", c.args, r.Stderr)
		}
		if strings.Contains(r.Stderr, "panic") {
			t.Errorf("%v panicked: %s", c.args, r.Stderr)
		}
	}
	assertEmptyDir(t, dir)
}

func hasDir(args []string) bool {
	for _, a := range args {
		if a == "--dir" {
			return true
		}
	}
	return false
}

func TestDiskPermissionDenied(t *testing.T) {
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	// t.TempDir's parent is private to root; give the user a path to it.
	os.Chmod(filepath.Dir(dir), 0o755)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, testutil.Binary(t), "disk", "--dir", dir, "--size", "64k")
	testutil.RunAsNobody(t, cmd)
	r := testutil.Wait(t, cmd, ctx)
	if r.Code != 2 || !strings.Contains(r.Stderr, "permission denied") || !strings.Contains(r.Stderr, dir) {
		t.Errorf("exit %d, stderr %q; want exit 2 naming %s and the permission", r.Code, r.Stderr, dir)
	}
	assertEmptyDir(t, dir)
}

func TestDiskReadOnlyAndFull(t *testing.T) {
	ro := testutil.MountTmpfs(t, "4m", true)
	r := testutil.RunBinary(t, 30*time.Second, "disk", "--dir", ro, "--size", "64k")
	if r.Code != 2 || !strings.Contains(r.Stderr, "read-only file system") {
		t.Errorf("read-only: exit %d, stderr %q", r.Code, r.Stderr)
	}
	full := testutil.MountTmpfs(t, "256k", false)
	r = testutil.RunBinary(t, 30*time.Second, "disk", "--dir", full, "--size", "1m")
	if r.Code != 2 || !strings.Contains(r.Stderr, "no space left") || !strings.Contains(r.Stderr, full) {
		t.Errorf("full: exit %d, stderr %q", r.Code, r.Stderr)
	}
	assertEmptyDir(t, full)
}

// SIGINT during a run: TestInterruptCleansUp (interrupt_test.go).

func TestVersionAndHelp(t *testing.T) {
	r := testutil.RunBinary(t, 30*time.Second, "version")
	if r.Code != 0 || !strings.HasPrefix(r.Stdout, "etcdperf ") {
		t.Errorf("version: exit %d %q", r.Code, r.Stdout)
	}
	for _, cmd := range []string{"disk", "version"} {
		r := testutil.RunBinary(t, 30*time.Second, cmd, "--help")
		if r.Code != 0 || !strings.Contains(r.Stdout, "Examples:") {
			t.Errorf("%s --help has no examples (exit %d):\n%s", cmd, r.Code, r.Stdout)
		}
	}
}
