package e2e

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/etcdperf/etcdperf/internal/pipeline"
	"github.com/etcdperf/etcdperf/internal/result"
	"github.com/etcdperf/etcdperf/internal/testutil"
)

// interruptCase is one command interrupted with SIGINT (Ctrl-C) once it
// is measuring. Each command that writes files, data dirs or keys is one
// row of interruptCases.
type interruptCase struct {
	name string
	// args runs the command on the storage dir, or against the external
	// etcd at ep.
	args func(dir, ep string) []string
	// started reports that the command is measuring.
	started func(t *testing.T, dir string, cli *clientv3.Client) bool
	// measured reports that the partial Result holds the measurements.
	measured func(*result.Result) bool
	// stopWithin bounds the time from SIGINT to the exit.
	stopWithin time.Duration
}

var interruptCases = []interruptCase{
	{
		name: "disk",
		args: func(dir, _ string) []string { return []string{"disk", "--dir", dir, "--runtime", "20s"} },
		started: func(_ *testing.T, dir string, _ *clientv3.Client) bool {
			m, _ := filepath.Glob(filepath.Join(dir, ".etcdperf-probe-*"))
			return len(m) > 0
		},
		measured:   func(r *result.Result) bool { return r.Disk != nil && r.Disk.Ops > 0 },
		stopWithin: 5 * time.Second,
	},
	{
		name: "bench external",
		args: func(_, ep string) []string {
			return []string{"bench", "put", "--endpoints", ep, "--duration", "30s", "--clients", "4", "--key-space-size", "100"}
		},
		started: func(t *testing.T, _ string, cli *clientv3.Client) bool {
			return keysUnder(t, cli, "/etcdperf/") > 0
		},
		measured:   func(r *result.Result) bool { return r.Bench != nil && r.Bench.Ops > 0 },
		stopWithin: 10 * time.Second,
	},
	{
		name: "bench 3 embedded members",
		args: func(dir, _ string) []string {
			return []string{"bench", "put", "--members", "3", "--data-dir", dir, "--duration", "30s", "--clients", "4", "--key-space-size", "100"}
		},
		started: func(_ *testing.T, dir string, _ *clientv3.Client) bool {
			if !membersReady(dir, 3) {
				return false
			}
			time.Sleep(time.Second) // the load starts once all serve
			return true
		},
		measured:   func(r *result.Result) bool { return r.Bench != nil && r.Bench.Ops > 0 },
		stopWithin: 20 * time.Second,
	},
	{
		name: "check external",
		args: func(_, ep string) []string { return []string{"check", "--endpoints", ep, "--duration", "30s"} },
		started: func(t *testing.T, _ string, cli *clientv3.Client) bool {
			return keysUnder(t, cli, "/etcdperf/") > 0
		},
		measured:   func(r *result.Result) bool { return r.Bench != nil && r.Bench.Ops > 0 && r.Perf != nil },
		stopWithin: 10 * time.Second,
	},
	{
		// Loaded etcd on a slow view of dir (its own slowdisk mount, when
		// FUSE is here): the probe, the member, the view all go.
		name: "doctor",
		args: func(dir, _ string) []string {
			args := []string{"doctor", "--data-dir", dir, "--duration", "1m", "--disk-runtime", "1s", "--no-report"}
			if pipeline.CanMountFUSE() == nil {
				args = append(args, "--simulate-fsync-delay", "2ms")
			}
			return args
		},
		started: func(_ *testing.T, dir string, _ *clientv3.Client) bool {
			if !etcdServing(dir) {
				return false
			}
			time.Sleep(time.Second) // the load starts once it serves
			return true
		},
		measured: func(r *result.Result) bool {
			return len(r.Runs) == 1 && r.Runs[0].Disk != nil && r.Runs[0].Bench != nil && r.Runs[0].Bench.Ops > 0
		},
		stopWithin: 10 * time.Second,
	},
	{
		name: "scale embedded",
		args: func(dir, _ string) []string {
			return []string{"scale", "--objects", "pods=200000,events=20000", "--steps", "2", "--rate", "2000", "--data-dir", dir}
		},
		started: func(_ *testing.T, dir string, _ *clientv3.Client) bool {
			if !membersReady(dir, 1) {
				return false
			}
			time.Sleep(1500 * time.Millisecond) // objects are being written
			return true
		},
		measured:   func(r *result.Result) bool { return r.Scale != nil && r.Scale.Planned == 2 && len(r.Scale.Kinds) == 2 },
		stopWithin: 10 * time.Second,
	},
	{
		// Objects on leases (events): no lease may be left either.
		name: "scale external",
		args: func(_, ep string) []string {
			return []string{"scale", "--objects", "pods=200000,events=20000", "--steps", "2", "--rate", "2000", "--endpoints", ep}
		},
		started: func(t *testing.T, _ string, cli *clientv3.Client) bool {
			return keysUnder(t, cli, "/etcdperf/") > 500
		},
		measured:   func(r *result.Result) bool { return r.Scale != nil && r.Scale.Planned == 2 && len(r.Scale.Kinds) == 2 },
		stopWithin: 10 * time.Second,
	},
}

// SIGINT during a run: the command stops, removes its files, data dirs,
// mounts, keys and leases, stops the processes it started, writes its
// partial Result to the file -o names, and exits 2.
func TestInterruptCleansUp(t *testing.T) {
	ep, cli := startServer(t)
	for _, c := range interruptCases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			out := filepath.Join(t.TempDir(), "partial.json")
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, testutil.Binary(t), append(c.args(dir, ep), "-o", out)...)
			done := make(chan testutil.Run, 1)
			go func() { done <- testutil.Wait(t, cmd, ctx) }()
			deadline := time.Now().Add(30 * time.Second)
			for !c.started(t, dir, cli) {
				if time.Now().After(deadline) {
					t.Fatal("the command did not start measuring within 30s")
				}
				time.Sleep(20 * time.Millisecond)
			}
			time.Sleep(200 * time.Millisecond)
			start := time.Now()
			if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
				t.Fatal(err)
			}
			r := <-done
			if el := time.Since(start); el > c.stopWithin {
				t.Errorf("took %v to stop after SIGINT, want at most %v", el, c.stopWithin)
			}
			if r.Code != 2 || !strings.Contains(r.Stderr, "interrupted") {
				t.Errorf("exit %d, stderr %q; want 2 and 'interrupted'", r.Code, r.Stderr)
			}
			res, err := result.ReadFile(out)
			if err != nil {
				t.Fatalf("no partial Result: %v", err)
			}
			if res.Error == "" || !c.measured(res) {
				t.Errorf("the partial Result lacks the error or the measurements: error %q", res.Error)
			}
			// Part of a run is no verdict: the Result and the text view say
			// "incomplete", and why once.
			if res.Verdict != result.Incomplete {
				t.Errorf("verdict %q, want %q", res.Verdict, result.Incomplete)
			}
			assertIncompleteText(t, r.Stdout, "interrupted")
			assertEmptyDir(t, dir)
			if n := keysUnder(t, cli, "/etcdperf/"); n != 0 {
				t.Errorf("%d keys left in etcd", n)
			}
			// Members (server --data-dir) and slow views (slowdisk --src)
			// name the directory on their command line.
			if left := processesWith(t, dir); len(left) > 0 {
				t.Errorf("processes left: %v", left)
			}
			if left := slowMountsUnder(t, dir); len(left) > 0 {
				t.Errorf("mounts left: %v", left)
			}
			leases, err := cli.Leases(ctx)
			if err != nil || len(leases.Leases) != 0 {
				t.Errorf("leases left in etcd: %v %v", leases, err)
			}
		})
	}
}

// assertIncompleteText checks the text view of a run that ended early: one
// "Incomplete:" line that gives why (once), and no verdict line.
func assertIncompleteText(t *testing.T, stdout, why string) {
	t.Helper()
	if strings.Contains(stdout, "Verdict:") || strings.Count(stdout, "Incomplete:") != 1 {
		t.Errorf("want one Incomplete line and no verdict line:\n%s", stdout)
		return
	}
	line := stdout[strings.Index(stdout, "Incomplete:"):]
	line = line[:strings.IndexByte(line, '\n')]
	if n := strings.Count(line, why); n != 1 {
		t.Errorf("%q said %d times in %q", why, n, line)
	}
	if strings.Contains(stdout, "ended early") {
		t.Errorf("the end is said twice:\n%s", stdout)
	}
}
