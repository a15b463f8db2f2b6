package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/etcdperf/etcdperf/internal/result"
	"github.com/etcdperf/etcdperf/internal/sysinfo"
	"github.com/etcdperf/etcdperf/internal/testutil"
)

// quick are doctor's flags for a short run: the "short durations".
var quick = []string{"--duration", "3s", "--disk-runtime", "1s", "--capacity=false"}

// runIn runs etcdperf with args in dir (where doctor writes its report).
func runIn(t *testing.T, dir string, timeout time.Duration, args ...string) testutil.Run {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, testutil.Binary(t), args...)
	cmd.Dir = dir
	return testutil.Wait(t, cmd, ctx)
}

// verdictExit checks that a run's exit code is its verdict's: 0 for pass
// and warn, 1 for fail, never 2.
func verdictExit(t *testing.T, r testutil.Run, res *result.Result) {
	t.Helper()
	if r.Code != 0 && r.Code != 1 {
		t.Fatalf("exit %d\nstderr: %s", r.Code, r.Stderr)
	}
	if (res.Verdict == result.Fail) != (r.Code == 1) {
		t.Errorf("exit %d with verdict %s", r.Code, res.Verdict)
	}
}

func findingIDs(fs []result.Finding) map[string]result.Finding {
	m := map[string]result.Finding{}
	for _, f := range fs {
		m[f.ID] = f
	}
	return m
}

// tmpfsDir returns an empty directory on a tmpfs: in /dev/shm, or a tmpfs
// mounted for the test.
func tmpfsDir(t *testing.T) string {
	t.Helper()
	if m, err := sysinfo.FindMount("/dev/shm"); err == nil && m.Volatile() {
		dir, err := os.MkdirTemp("/dev/shm", "etcdperf-e2e-")
		if err == nil {
			t.Cleanup(func() { os.RemoveAll(dir) })
			return dir
		}
	}
	return testutil.MountTmpfs(t, "256m", false)
}

// The second promise: a disk and a RAM disk side by side, the RAM
// disk flagged as fast but not durable, the Result in etcdperf-report.json.
func TestDoctorDiskAndTmpfs(t *testing.T) {
	disk, shm, cwd := t.TempDir(), tmpfsDir(t), t.TempDir()
	r := runIn(t, cwd, 2*time.Minute, append([]string{"doctor", "--data-dir", disk, "--data-dir", shm}, quick...)...)
	res, err := result.ReadFile(filepath.Join(cwd, "etcdperf-report.json"))
	if err != nil {
		t.Fatalf("no report (exit %d, stderr %s): %v", r.Code, r.Stderr, err)
	}
	verdictExit(t, r, res)
	// On a pipe: the progress (testutil.Wait sets it apart) and where
	// the Result is, nothing else.
	if want := "etcdperf: the Result is in etcdperf-report.json (etcdperf report etcdperf-report.json -o report.html draws it)\n"; r.Stderr != want || len(r.Progress) == 0 {
		t.Errorf("stderr %q, %d progress lines; want %q and the progress", r.Stderr, len(r.Progress), want)
	}
	if res.Kind != "doctor" || len(res.Runs) != 2 || len(res.Doctor.Targets) != 2 {
		t.Fatalf("kind %s, %d runs", res.Kind, len(res.Runs))
	}
	d, m := res.Doctor.Targets[0], res.Doctor.Targets[1]
	if d.Dir != disk || d.Volatile || m.Dir != shm || !m.Volatile || m.FSType != "tmpfs" {
		t.Errorf("targets %+v, %+v", d, m)
	}
	for i, run := range res.Runs {
		if run.Disk == nil || run.Bench == nil || run.Server == nil || run.Perf == nil || run.Bench.Ops == 0 {
			t.Errorf("run %d lacks a section", i)
		}
	}
	if _, ok := findingIDs(res.Runs[1].Findings)["volatile_storage"]; !ok {
		t.Errorf("tmpfs not flagged: %+v", res.Runs[1].Findings)
	}
	if res.Runs[1].Verdict == result.Pass || !strings.Contains(res.Runs[1].Summary, "not durable") || !strings.Contains(res.Summary, "not durable") {
		t.Errorf("tmpfs verdict %s, summaries %q / %q", res.Runs[1].Verdict, res.Runs[1].Summary, res.Summary)
	}
	// The probe's fdatasync on tmpfs is a no-op: far faster than any disk.
	if m.DiskSyncP99 >= d.DiskSyncP99 {
		t.Errorf("tmpfs fdatasync p99 %v, disk %v", m.DiskSyncP99, d.DiskSyncP99)
	}
	for _, want := range []string{"== " + disk, "== " + shm, "Side by side", "disk fdatasync p99", "tmpfs (memory, not durable)", "Verdict: "} {
		if !strings.Contains(r.Stdout, want) {
			t.Errorf("no %q in the text:\n%s", want, r.Stdout)
		}
	}
	assertEmptyDir(t, disk)
	assertEmptyDir(t, shm)
	if left, _ := os.ReadDir(cwd); len(left) != 1 {
		t.Errorf("the current directory holds %v, want the report only", left)
	}
}

// etcdServing reports whether the embedded etcd of a doctor run on dir
// (directly, or under its slow view) says it serves clients.
func etcdServing(dir string) bool {
	for _, pattern := range []string{"etcdperf-*/etcdperf-*.log", "etcdperf-slowdisk-*/slow/etcdperf-*/etcdperf-*.log"} {
		logs, _ := filepath.Glob(filepath.Join(dir, pattern))
		for _, l := range logs {
			if b, err := os.ReadFile(l); err == nil && strings.Contains(string(b), "ready to serve client requests") {
				return true
			}
		}
	}
	return false
}

// The third promise: check --load s against an embedded etcd lists
// every criterion with observed and limit; with limits out of reach of a
// loaded machine's latencies, it passes.
func TestCheckEmbeddedJSON(t *testing.T) {
	dir := t.TempDir()
	args := []string{"check", "--load", "s", "--duration", "5s", "-o", "json", "--data-dir", dir}
	r := testutil.RunBinary(t, time.Minute, args...)
	res := decodeResult(t, r.Stdout)
	verdictExit(t, r, res)
	want := []string{"throughput", "slowest_request", "latency_stddev", "request_p99", "request_errors",
		"wal_fsync_p99", "backend_commit_p99", "leader_changes", "proposals_failed"}
	if len(res.Checks) != len(want) {
		t.Fatalf("checks %+v", res.Checks)
	}
	for i, c := range res.Checks {
		if c.Name != want[i] || c.Source == "" || c.Op == "" || (c.Unit != "count" && c.Limit == 0) {
			t.Errorf("check %d: %+v, want %s with observed, limit and source", i, c, want[i])
		}
	}
	// The pacer never sends more than the schedule (150/s for 5s); when
	// the throughput falls short, a finding says whether etcd or this
	// machine was the reason.
	if res.Perf == nil || res.Perf.Profile != "s" || res.Perf.TargetRate != 150 || res.Bench.Ops == 0 || res.Bench.Ops > 751 {
		t.Errorf("perf %+v, %d requests in 5s at 150/s", res.Perf, res.Bench.Ops)
	}
	if res.Checks[0].Status == result.StatusFail {
		fs := findingIDs(res.Findings)
		if _, client := fs["client_saturated"]; !client && fs["etcd_too_slow_for_profile"].ID == "" {
			t.Errorf("throughput failed without a finding that says why: %+v", res.Findings)
		}
	}
	assertEmptyDir(t, dir)

	// etcdctl's spelling, check perf, works too.
	r = testutil.RunBinary(t, time.Minute, "check", "perf", "--duration", "3s", "--data-dir", dir,
		"--limit", "slowest_request=10s", "--limit", "latency_stddev=10s", "--limit", "request_p99=10s",
		"--limit", "wal_fsync_p99=10s", "--limit", "backend_commit_p99=10s")
	if r.Code != 0 && (r.Code != 1 || !strings.Contains(r.Stdout, "FAIL throughput: ")) {
		t.Errorf("check with latency limits out of reach: exit %d\n%s\n%s", r.Code, r.Stdout, r.Stderr)
	}
	for _, line := range []string{"PASS request_errors: 0 (limit <= 0)", "PASS wal_fsync_p99: ", "(limit < 10s)", "PASS slowest_request: "} {
		if !strings.Contains(r.Stdout, line) {
			t.Errorf("no %q in:\n%s", line, r.Stdout)
		}
	}
	assertEmptyDir(t, dir)
}

func TestCheckDatascaleEmbedded(t *testing.T) {
	dir := t.TempDir()
	r := testutil.RunBinary(t, time.Minute, "check", "datascale", "--keys", "1000", "--data-dir", dir)
	if r.Code != 0 || !strings.Contains(r.Stdout, "Approximate system memory used:") || !strings.Contains(r.Stdout, "PASS request_errors: 0") {
		t.Errorf("exit %d\n%s\n%s", r.Code, r.Stdout, r.Stderr)
	}
	assertEmptyDir(t, dir)
}

func TestCheckAndDoctorUsageErrors(t *testing.T) {
	dir := t.TempDir()
	cases := [][]string{
		{"check", "--load", "xxl"},
		{"check", "--duration", "0s"},
		{"check", "perf", "now"},
		{"check", "--data-dir", "/nonexistent-etcdperf"},
		{"check", "--endpoints", "127.0.0.1:1", "--data-dir", dir},
		{"check", "--limit", "nosuch=1"},
		{"check", "datascale", "--keys", "-1"},
		{"check", "datascale", "--load", "huge"},
		{"doctor", "--load", "q"},
		{"doctor", "--data-dir", "/nonexistent-etcdperf"},
		{"doctor", "--data-dir", filepath.Join(dir, "file")},
		{"doctor", "--duration", "-1s"},
		{"doctor", "--disk-runtime", "-1s"},
		{"doctor", "--disk-size", "1k"},
		{"doctor", "--endpoints", "127.0.0.1:1", "--simulate-fsync-delay", "15ms"},
		{"doctor", "--endpoints", "127.0.0.1:1", "--data-dir", dir, "--data-dir", dir},
		{"doctor", "--endpoints", "127.0.0.1:1", "--noise"},
		{"doctor", "--simulate-fsync-delay", "3h"},
		{"doctor", "--limit", "wal_fsync_p99=soon"},
		{"doctor", "-o", "nosuch"},
		{"doctor", "extra"},
		{"doctor", "--endpoints", "127.0.0.1:1", "--capacity", "--db-size", "1g"},
		{"doctor", "--capacity=false", "--db-size", "1g"},
		{"doctor", "--value-size", "2m"},
		{"doctor", "--volume-iops", "-3"},
		{"doctor", "--capacity-confirm", "-1s"},
		{"check", "--endpoints", "127.0.0.1:1", "--capacity", "--db-size", "1g"},
		{"check", "--value-size", "2m"},
		{"metrics", "--endpoints", "127.0.0.1:1", "--volume-mbps", "-1"},
	}
	if err := os.WriteFile(filepath.Join(dir, "file"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range cases {
		r := runIn(t, dir, 30*time.Second, args...)
		if r.Code != 2 || r.Stderr == "" || strings.Count(strings.TrimSpace(r.Stderr), "\n") > 0 {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and one line", args, r.Code, r.Stderr)
		}
		if slices.Contains(args, "--disk-size") && !strings.Contains(r.Stderr, "--disk-size") {
			t.Errorf("%v: stderr %q does not name --disk-size", args, r.Stderr)
		}
		if slices.Contains(args, "/nonexistent-etcdperf") && !strings.Contains(r.Stderr, "mkdir -p /nonexistent-etcdperf") {
			t.Errorf("%v: stderr %q does not say how to create the directory", args, r.Stderr)
		}
	}
	if left, _ := os.ReadDir(dir); len(left) != 1 {
		t.Errorf("usage errors left %v", left)
	}
}
