package lab

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/etcdperf/etcdperf/internal/testutil"
)

func TestEmbeddedSingleMember(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	tg, err := Open(ctx, TargetOptions{DataDir: dir, RunID: "single"})
	if err != nil {
		t.Fatal(err)
	}
	ms := tg.Members()
	if len(ms) != 1 || !ms[0].Leader || !strings.HasPrefix(ms[0].ClientURL, "http://127.0.0.1:") || ms[0].DataDir != filepath.Join(dir, "etcdperf-single", "etcdperf-1") {
		t.Errorf("members %+v", ms)
	}
	if tg.Kind() != Embedded || tg.Client().Version() == "" {
		t.Errorf("kind %s version %q", tg.Kind(), tg.Client().Version())
	}
	if _, err := tg.Client().Put(ctx, "/etcdperf/test/k", "v"); err != nil {
		t.Fatal(err)
	}
	// The member's metrics are served on its client URL.
	resp, err := tg.Client().HTTPClient().Get(ms[0].MetricsURL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("metrics: %s", resp.Status)
	}
	if st, err := os.Stat(ms[0].LogFile); err != nil || st.Size() == 0 {
		t.Errorf("etcd's log file %s: %v", ms[0].LogFile, err)
	}
	if err := tg.Close(); err != nil {
		t.Fatal(err)
	}
	testutil.AssertEmptyDir(t, dir)
}

func TestEmbeddedThreeMemberProcesses(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	tg, err := Open(ctx, TargetOptions{DataDir: dir, RunID: "three", Members: 3, ServerCommand: testServerCommand(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	ms := tg.Members()
	leaders, pids := 0, map[int]bool{}
	for _, m := range ms {
		if m.Leader {
			leaders++
		}
		pids[m.PID] = true
		if m.PID == os.Getpid() || m.PID == 0 {
			t.Errorf("member %s runs in pid %d, want its own process", m.Name, m.PID)
		}
	}
	if len(ms) != 3 || leaders != 1 || len(pids) != 3 {
		t.Fatalf("members %+v", ms)
	}
	if _, err := tg.Client().Put(ctx, "/etcdperf/test/k", "v"); err != nil {
		t.Fatal(err)
	}
	// Each member is its own process: stopping one leaves the others with
	// a quorum.
	victim := ms[0]
	for _, p := range tg.procs {
		if p.cfg.Name == victim.Name {
			p.stop(5 * time.Second)
		}
	}
	if !tg.MemberExited(victim.Name) {
		t.Errorf("member %s still running", victim.Name)
	}
	pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if _, err := tg.Client().Put(pctx, "/etcdperf/test/k2", "v"); err != nil {
		t.Errorf("put with 2 of 3 members: %v", err)
	}
	if err := tg.Close(); err != nil {
		t.Fatal(err)
	}
	testutil.AssertEmptyDir(t, dir)
}

func TestEmbeddedStartFailsCleanly(t *testing.T) {
	dir := t.TempDir()
	// A member command that exits at once: the start fails with the reason,
	// within the timeout, and leaves nothing behind.
	start := time.Now()
	_, err := Open(context.Background(), TargetOptions{DataDir: dir, RunID: "bad", Members: 3,
		ServerCommand: []string{"/bin/false"}, StartTimeout: 10 * time.Second})
	if err == nil || !strings.Contains(err.Error(), "before it was ready") {
		t.Errorf("start with a failing member: %v", err)
	}
	if time.Since(start) > 10*time.Second {
		t.Errorf("failure took %v", time.Since(start))
	}
	testutil.AssertEmptyDir(t, dir)

	// A start cancelled midway removes what it made.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Open(ctx, TargetOptions{DataDir: dir, RunID: "cancelled"}); err == nil {
		t.Error("a cancelled start succeeded")
	}
	testutil.AssertEmptyDir(t, dir)

	if _, err := Open(context.Background(), TargetOptions{DataDir: filepath.Join(dir, "missing"), RunID: "x"}); err == nil || !strings.Contains(err.Error(), "--data-dir") {
		t.Errorf("missing data dir: %v", err)
	}
}
