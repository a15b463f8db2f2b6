package e2e

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/etcdperf/etcdperf/internal/result"
	"github.com/etcdperf/etcdperf/internal/testutil"
)

// Words of the project's own history that mean nothing to an operator.
var internalWords = regexp.MustCompile(`(?i)\bseeds?\b|field report|the field's|this VM|project's VM|engineers|CI team`)

// The help of every command, the README and the docs speak of facts and
// public sources, not of the project's own history.
func TestNoInternalVocabulary(t *testing.T) {
	cmds := [][]string{{}}
	root := testutil.RunBinary(t, 30*time.Second, "--help")
	for _, m := range regexp.MustCompile(`(?m)^  (\w[\w-]*)\s{2,}`).FindAllStringSubmatch(root.Stdout, -1) {
		cmds = append(cmds, []string{m[1]})
	}
	cmds = append(cmds, []string{"bench", "put"}, []string{"bench", "range"}, []string{"check", "datascale"},
		[]string{"prom", "export"}, []string{"k8s", "disk"})
	if len(cmds) < 15 {
		t.Fatalf("found %d commands in the help: %q", len(cmds), root.Stdout)
	}
	for _, c := range cmds {
		r := testutil.RunBinary(t, 30*time.Second, append(c, "--help")...)
		if m := internalWords.FindString(r.Stdout); m != "" {
			t.Errorf("etcdperf %s --help says %q", strings.Join(c, " "), m)
		}
	}
	docs, err := filepath.Glob(filepath.Join("..", "docs", "*.md"))
	if err != nil || len(docs) < 10 {
		t.Fatalf("docs pages %v: %v", docs, err)
	}
	for _, f := range append(docs, filepath.Join("..", "README.md")) {
		text, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(text), "\n") {
			if m := internalWords.FindString(line); m != "" {
				t.Errorf("%s:%d says %q: %s", f, i+1, m, line)
			}
		}
	}
}

// doctor's flags are --data-dir and --disk-size: its errors name them, and
// its help prints sizes as people write them.
func TestDoctorSpeaksItsFlags(t *testing.T) {
	ro := testutil.MountTmpfs(t, "64m", true)
	r := testutil.RunBinary(t, 60*time.Second, "doctor", "--data-dir", ro, "--duration", "2s", "--disk-runtime", "1s", "--no-report")
	line := strings.TrimSpace(r.Stderr)
	if r.Code != 2 || !strings.Contains(line, "choose a writable --data-dir") || strings.Contains(line, "\n") {
		t.Errorf("read-only --data-dir: exit %d, stderr %q; want exit 2 and one line naming --data-dir", r.Code, r.Stderr)
	}
	small := testutil.MountTmpfs(t, "1m", false)
	r = testutil.RunBinary(t, 60*time.Second, "doctor", "--data-dir", small, "--duration", "2s", "--disk-runtime", "1s", "--no-report")
	if r.Code != 2 || !strings.Contains(r.Stderr, "needs 22 MiB for 1 probe file") || !strings.Contains(r.Stderr, "lower --disk-size") {
		t.Errorf("small --data-dir: exit %d, stderr %q", r.Code, r.Stderr)
	}

	help := testutil.RunBinary(t, 30*time.Second, "doctor", "--help")
	if !strings.Contains(help.Stdout, "(default 22 MiB)") || strings.Contains(help.Stdout, "23068672") {
		t.Errorf("doctor --help prints the probe's size as %q", regexp.MustCompile(`.*disk-size.*`).FindString(help.Stdout))
	}
	logs := testutil.RunBinary(t, 30*time.Second, "logs", "--help")
	if strings.Contains(logs.Stdout, "(default -1)") || !strings.Contains(logs.Stdout, "default 1000, or 200000 with a CSV output") {
		t.Errorf("logs --help: %s", regexp.MustCompile(`.*max-events.*`).FindString(logs.Stdout))
	}
}

func TestCompareAsksForTwo(t *testing.T) {
	r := testutil.RunBinary(t, 30*time.Second, "compare")
	if r.Code != 2 || !strings.Contains(r.Stderr, "needs two Results or more") || strings.Contains(r.Stderr, "at least 1") {
		t.Errorf("compare without argument: exit %d, stderr %q", r.Code, r.Stderr)
	}
}

// `etcdperf version` says the commit the binary was built from, as the Go
// toolchain recorded it, or that none was recorded.
func TestVersionSaysItsCommit(t *testing.T) {
	bin := testutil.Binary(t)
	out, err := exec.Command("go", "version", "-m", bin).Output()
	if err != nil {
		t.Fatalf("go version -m: %v", err)
	}
	r := testutil.RunBinary(t, 30*time.Second, "version")
	if m := regexp.MustCompile(`vcs\.revision=([0-9a-f]{12})`).FindSubmatch(out); m != nil {
		if !strings.Contains(r.Stdout, "commit "+string(m[1])) {
			t.Errorf("built from %s, version says %q", m[1], r.Stdout)
		}
	} else if !strings.HasPrefix(r.Stdout, "etcdperf devel, commit unknown: built without git information (") {
		t.Errorf("no commit recorded, version says %q", r.Stdout)
	}
}

// report without -o writes report.html, but never over one that exists.
func TestReportKeepsAnExistingPage(t *testing.T) {
	dir := t.TempDir()
	in, err := filepath.Abs(filepath.Join("..", "internal", "report", "testdata", "disk-ext4.json"))
	if err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) testutil.Run {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, testutil.Binary(t), append([]string{"report", in}, args...)...)
		cmd.Dir = dir
		return testutil.Wait(t, cmd, ctx)
	}
	page := filepath.Join(dir, "report.html")
	if r := run(); r.Code != 0 {
		t.Fatalf("first report: exit %d, %s", r.Code, r.Stderr)
	}
	os.WriteFile(page, []byte("mine"), 0o644)
	r := run()
	if b, _ := os.ReadFile(page); r.Code != 2 || string(b) != "mine" || !strings.Contains(r.Stderr, "report.html already exists") {
		t.Errorf("second report: exit %d, stderr %q, page %d bytes; want exit 2 and the page untouched", r.Code, r.Stderr, len(b))
	}
	if r := run("--force"); r.Code != 0 {
		t.Errorf("--force: exit %d, %s", r.Code, r.Stderr)
	}
	if b, _ := os.ReadFile(page); !strings.Contains(string(b), "<svg") {
		t.Error("--force did not replace the page")
	}
	if r := run("-o", "report.html"); r.Code != 0 {
		t.Errorf("-o report.html: exit %d, %s", r.Code, r.Stderr)
	}
}

// bench takes --limit as every other command does; --threshold still works
// and adds to it. Where etcd's benchmark has a --limit of its own (keys per
// range), a number is that and NAME=VALUE a check's limit.
func TestBenchLimitAsEverywhere(t *testing.T) {
	dir, outs := t.TempDir(), t.TempDir()
	limitOf := func(out string) map[string]float64 {
		t.Helper()
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		var r result.Result
		if err := json.Unmarshal(b, &r); err != nil {
			t.Fatal(err)
		}
		m := map[string]float64{}
		for _, c := range r.Checks {
			m[c.Name] = c.Limit
		}
		if p := r.LoadParams(); p != nil && p.Limit != nil {
			m["params.limit"] = float64(*p.Limit)
		}
		return m
	}
	out := filepath.Join(outs, "put.json")
	r := testutil.RunBinary(t, 2*time.Minute, "bench", "put", "--total", "20", "--clients", "1", "--data-dir", dir,
		"--limit", "wal_fsync_p99=40ms", "--threshold", "leader_changes=3", "-o", out, "-o", "text")
	if r.Code == 2 {
		t.Fatalf("bench put: exit 2, %s", r.Stderr)
	}
	if got := limitOf(out); got["wal_fsync_p99"] != 0.04 || got["leader_changes"] != 3 {
		t.Errorf("limits judged: %v; want wal_fsync_p99 40ms (--limit) and leader_changes 3 (--threshold)", got)
	}
	if !strings.Contains(r.Stdout, "1 client over 1 connection") {
		t.Errorf("one client is one client:\n%s", r.Stdout)
	}
	if help := testutil.RunBinary(t, 30*time.Second, "bench", "put", "--help"); strings.Contains(help.Stdout, "--threshold") || !strings.Contains(help.Stdout, "--limit stringArray") {
		t.Error("bench put --help must show --limit, not the old --threshold")
	}

	out = filepath.Join(outs, "range.json")
	r = testutil.RunBinary(t, 2*time.Minute, "bench", "range", "--total", "20", "--data-dir", dir,
		"--limit", "5", "--limit", "wal_fsync_p99=40ms", "-o", out)
	if r.Code == 2 {
		t.Fatalf("bench range: exit 2, %s", r.Stderr)
	}
	if got := limitOf(out); got["params.limit"] != 5 || got["wal_fsync_p99"] != 0.04 {
		t.Errorf("bench range --limit 5 --limit wal_fsync_p99=40ms: %v", got)
	}
	assertEmptyDir(t, dir)
}

// fio's users' names: --numjobs is --jobs, --ioengine sync or psync is the
// probe's way of writing; any other engine is refused before measuring.
func TestDiskTakesFioNames(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(t.TempDir(), "disk.json")
	r := testutil.RunBinary(t, time.Minute, "disk", "--dir", dir, "--size", "256k", "--numjobs", "2", "--ioengine", "psync", "-o", out)
	if r.Code == 2 {
		t.Fatalf("exit 2: %s", r.Stderr)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var res result.Result
	if err := json.Unmarshal(b, &res); err != nil || res.Disk == nil || len(res.Disk.Jobs) != 2 {
		t.Fatalf("--numjobs 2: %v, %+v", err, res.Disk)
	}
	for _, engine := range []string{"libaio", "io_uring", ""} {
		r := testutil.RunBinary(t, 30*time.Second, "disk", "--dir", dir, "--ioengine", engine)
		line := strings.TrimSpace(r.Stderr)
		if r.Code != 2 || strings.Contains(line, "\n") || !strings.Contains(line, "sync or psync") {
			t.Errorf("--ioengine %q: exit %d, stderr %q; want exit 2 and one line", engine, r.Code, r.Stderr)
		}
	}
	assertEmptyDir(t, dir)
}
