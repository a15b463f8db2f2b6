package e2e

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/etcdperf/etcdperf/internal/result"
	"github.com/etcdperf/etcdperf/internal/testutil"
)

func TestMetricsUsageErrors(t *testing.T) {
	closed := fmt.Sprintf("127.0.0.1:%d", testutil.FreePort(t))
	for _, c := range []struct {
		args []string
		want string
	}{
		// No embedded etcd: it would have nothing to tell.
		{nil, "metrics watches a running cluster: give its client endpoints with --endpoints"},
		{[]string{"--interval", "1s"}, "give its client endpoints with --endpoints"},
		{[]string{"--endpoints", closed, "--interval", "10ms"}, "--interval 10ms is too short"},
		{[]string{"--endpoints", closed, "--interval", "2s", "--duration", "1s"}, "shorter than --interval"},
		{[]string{"--endpoints", closed, "--duration", "-1s"}, "--duration cannot be negative"},
		{[]string{"--endpoints", closed, "--limit", "fsync=1ms"}, `unknown criterion "fsync"`},
		{[]string{"--endpoints", closed, "-o", "run.xlsx"}, `-o "run.xlsx": not a format`},
		{[]string{"--endpoints", closed, "extra"}, "takes no arguments"},
		// Nothing listens there: the run cannot start.
		{[]string{"--endpoints", closed, "--dial-timeout", "1s"}, "etcd at " + closed + ": unreachable"},
	} {
		r := testutil.RunBinary(t, 30*time.Second, append([]string{"metrics"}, c.args...)...)
		if r.Code != 2 || !strings.Contains(r.Stderr, c.want) || r.Stdout != "" || strings.Count(strings.TrimSpace(r.Stderr), "\n") > 0 {
			t.Errorf("metrics %v: exit %d, stdout %q, stderr %q; want exit 2 and %q", c.args, r.Code, r.Stdout, r.Stderr, c.want)
		}
	}
	r := testutil.RunBinary(t, 30*time.Second, "metrics", "--help")
	for _, want := range []string{"--endpoints", "--interval", "--duration", "--limit", "--cacert", "<= 1ms", "Examples:"} {
		if r.Code != 0 || !strings.Contains(r.Stdout, want) {
			t.Errorf("help lacks %q (exit %d)", want, r.Code)
		}
	}
}

// TestMetricsAgainstLoadedEtcd watches an etcd (etcdperf server) while the
// test loads it: as JSON and CSV with relaxed limits (exit 0), then as
// streamed text with a limit no fsync can meet (exit 1).
func TestMetricsAgainstLoadedEtcd(t *testing.T) {
	// etcd in a process of its own: an embedded one would add the test's
	// puts to this process's metrics, which other tests read.
	ep, _ := startServer(t)
	dir := t.TempDir()
	csvPath := filepath.Join(dir, "series.csv")
	var r testutil.Run
	loaded(t, ep, func() {
		r = testutil.RunBinary(t, time.Minute, "metrics", "--endpoints", ep, "--interval", "300ms", "--duration", "2400ms",
			"--limit", "wal_fsync_p99=1h", "--limit", "backend_commit_p99=1h", "-o", "json", "-o", csvPath)
	})
	if r.Code != 0 {
		t.Fatalf("exit %d, stderr %q", r.Code, r.Stderr)
	}
	res := decodeResult(t, r.Stdout)
	m := res.Metrics
	if res.Kind != "metrics" || m == nil || m.Intervals != 8 || len(m.Members) != 1 || res.Verdict != result.Pass {
		t.Fatalf("result %s %+v verdict %s", res.Kind, m, res.Verdict)
	}
	var fsyncs int64
	for _, s := range m.Members[0].Series {
		if !s.Up() || s.HasLeader != 1 || s.IsLeader != 1 || s.DBSize <= 0 {
			t.Errorf("sample %+v", s)
		} else if s.WALFsync != nil {
			fsyncs += s.WALFsync.Count
		}
	}
	if fsyncs == 0 || m.Members[0].Overall.WALFsync.Count != fsyncs {
		t.Errorf("%d fsyncs over the intervals, overall %+v", fsyncs, m.Members[0].Overall.WALFsync)
	}
	// The cluster as its member tells it, read beside the intervals.
	if c := res.Cluster; c == nil || len(c.Members) != 1 || c.Rounds != 3 || !c.Members[0].Hashed || c.Members[0].Leader != c.Members[0].ID ||
		c.Members[0].Linearizable == nil || c.Members[0].Linearizable.Count != 5 || c.Members[0].Requests > 20 || c.AlarmsError != "" {
		t.Errorf("cluster section %+v", c)
	}
	header, rows := readCSV(t, readFile(t, csvPath))
	if len(rows) != 8 || rows[7][column(t, header, "t")] != "2.4" || rows[0][column(t, header, "member")] != "etcdperf-1" || rows[0][column(t, header, "is_leader")] != "1" {
		t.Errorf("CSV %v %v", header, rows)
	}

	// Text: the head and each interval's line as it ends, then the
	// judgement; a limit of 1ns fails the verdict.
	loaded(t, ep, func() {
		r = testutil.RunBinary(t, time.Minute, "metrics", "--endpoints", ep, "--interval", "300ms", "--duration", "2400ms", "--limit", "wal_fsync_p99=1ns")
	})
	if r.Code != 1 || !strings.Contains(r.Stdout, "FAIL wal_fsync_p99") || !strings.Contains(r.Stdout, "Verdict: FAIL") ||
		!strings.Contains(r.Stdout, "as its members tell it (3 status rounds 1s apart)") || !strings.Contains(r.Stdout, "alarms: none") {
		t.Errorf("exit %d, stdout:\n%s\nstderr %q", r.Code, r.Stdout, r.Stderr)
	}
	n := 0
	for _, l := range strings.Split(r.Stdout, "\n") {
		if intervalLine(l, "etcdperf-1", "leader") {
			n++
		}
	}
	if n != 8 {
		t.Errorf("%d interval lines of etcdperf-1 in:\n%s", n, r.Stdout)
	}
}

// loaded runs f while putting keys into the etcd at ep.
func loaded(t *testing.T, ep string, f func()) {
	t.Helper()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		time.Sleep(300 * time.Millisecond)
		putLoad(t, ep, 800, 8, 150*time.Millisecond)
	}()
	f()
	wg.Wait()
}

// intervalLine reports whether l is the text view's line of member in
// role at the end of an interval ("0.3s  etcdperf-1  leader ...").
func intervalLine(l, member, role string) bool {
	f := strings.Fields(l)
	return len(f) > 3 && strings.HasSuffix(f[0], "s") && f[1] == member && f[2] == role
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestMetricsInterrupt: Ctrl-C ends a run with --duration 0 as it was
// meant to end (the verdict's exit code), and cuts one with a duration
// short (exit 2); both write the Result of what was collected.
func TestMetricsInterrupt(t *testing.T) {
	ep, _ := startServer(t)
	for _, c := range []struct {
		duration string
		code     int
		errText  string
	}{{"0", 0, ""}, {"1m", 2, "interrupted after"}} {
		out := filepath.Join(t.TempDir(), "run.json")
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		cmd := exec.CommandContext(ctx, testutil.Binary(t), "metrics", "--endpoints", ep, "--interval", "200ms", "--duration", c.duration, "-o", "text", "-o", out)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// Interrupt after the second interval's line.
		sc := bufio.NewScanner(stdout)
		var text strings.Builder
		lines := 0
		for sc.Scan() {
			text.WriteString(sc.Text() + "\n")
			if intervalLine(sc.Text(), "etcdperf-1", "leader") {
				if lines++; lines == 2 {
					if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
						t.Fatal(err)
					}
				}
			}
		}
		err = cmd.Wait()
		cancel()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		}
		// A run cut short ends "Incomplete", never with a verdict.
		end := "Verdict:"
		if c.errText != "" {
			end = "Incomplete: " + c.errText
		}
		if code != c.code || !strings.Contains(text.String(), end) || (c.errText != "" && strings.Contains(text.String(), "Verdict:")) {
			t.Errorf("--duration %s: exit %d (want %d), stdout:\n%s\nstderr %q", c.duration, code, c.code, text.String(), stderr.String())
		}
		res, err := result.ReadFile(out)
		if err != nil {
			t.Fatalf("--duration %s: no Result: %v", c.duration, err)
		}
		if res.Metrics == nil || res.Metrics.Intervals < 2 || !strings.HasPrefix(res.Error, c.errText) || (c.errText == "") != (res.Error == "") {
			t.Errorf("--duration %s: %d intervals, error %q", c.duration, res.Metrics.Intervals, res.Error)
		}
	}
}
