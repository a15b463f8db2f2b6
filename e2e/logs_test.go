package e2e

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/csv"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/etcdperf/etcdperf/internal/result"
	"github.com/etcdperf/etcdperf/internal/testutil"
)

// realLog is a file of real etcd log lines (see its SOURCES.md).
func realLog(name string) string {
	return filepath.Join("..", "internal", "etcdlog", "testdata", "real", name)
}

func runStdin(t *testing.T, stdin []byte, args ...string) testutil.Run {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, testutil.Binary(t), args...)
	cmd.Stdin = bytes.NewReader(stdin)
	return testutil.Wait(t, cmd, ctx)
}

// What `kubectl logs --timestamps | etcdperf logs -` sees: real etcd 3.4
// and 3.5 lines behind kubectl's timestamps.
func TestLogsStdinKubectl(t *testing.T) {
	data, err := os.ReadFile(realLog("zap-3.4-3.5.log"))
	if err != nil {
		t.Fatal(err)
	}
	var in bytes.Buffer
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	lines := 0
	ts := time.Date(2024, 5, 14, 20, 0, 0, 0, time.UTC)
	for sc.Scan() {
		lines++
		in.WriteString(ts.Add(time.Duration(lines)*time.Second).Format(time.RFC3339Nano) + " " + sc.Text() + "\n")
	}
	r := runStdin(t, in.Bytes(), "logs", "-", "-o", "json")
	// The lines hold a request that timed out: the verdict fails.
	if r.Code != 1 {
		t.Fatalf("exit %d, want 1\n%s", r.Code, r.Stderr)
	}
	res := decodeResult(t, r.Stdout)
	l := res.Logs
	if res.Kind != "logs" || l == nil || l.Lines != int64(lines) || l.Unparsed != 0 || res.Verdict != result.Fail {
		t.Fatalf("result %+v logs %+v", res, l)
	}
	for id, n := range map[string]int64{"slow_read_only_range": 6, "slow_trace": 4, "request_timeout": 1, "peer_unhealthy": 6, "leader_elected": 2} {
		if l.Classes[id] != n {
			t.Errorf("%s: %d, want %d (%v)", id, l.Classes[id], n, l.Classes)
		}
	}
	if len(l.Members) != 1 || l.Members[0].Name != "stdin" || len(l.Sources) != 1 || l.Sources[0].Name != "-" {
		t.Errorf("members %+v sources %+v", l.Members, l.Sources)
	}
}

// Lines with no warning give PASS and exit 0; the text says so.
func TestLogsQuietPasses(t *testing.T) {
	quiet := strings.Join([]string{
		`{"level":"info","ts":"2025-03-01T04:40:36.894+0530","caller":"etcdserver/server.go:1686","msg":"published local member to cluster through raft","local-member-id":"bf9071f4639c75cc","local-member-attributes":"{Name:node1 ClientURLs:[http://127.0.0.1:2379]}","cluster-id":"59a05384c9b79ee","publish-timeout":"7s"}`,
		`{"level":"info","ts":"2025-03-01T04:58:32.377+0530","caller":"etcdserver/server.go:2164","msg":"cluster version is updated","cluster-version":"3.6"}`,
		`2021-04-07 12:36:25.339367 I | etcdmain: etcd Version: 3.3.13`,
	}, "\n") + "\n"
	dir := t.TempDir()
	path := filepath.Join(dir, "node1.log")
	if err := os.WriteFile(path, []byte(quiet), 0o644); err != nil {
		t.Fatal(err)
	}
	r := testutil.RunBinary(t, time.Minute, "logs", path)
	if r.Code != 0 || !strings.Contains(r.Stdout, "Verdict: PASS") || !strings.Contains(r.Stdout, "no events") || !strings.Contains(r.Stdout, "node1") {
		t.Fatalf("exit %d\n%s\n%s", r.Code, r.Stdout, r.Stderr)
	}
}

// Bad input is one line on stderr and exit 2, before anything is read.
func TestLogsBadInput(t *testing.T) {
	dir := t.TempDir()
	klog := filepath.Join(dir, "kubelet.log")
	if err := os.WriteFile(klog, []byte("I0927 21:59:52.167318    2130 kubelet.go:2618] housekeeping\nI0927 21:59:53.1 2130 x.go:1] y\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "etcd.log")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"logs", missing}, missing + ": no such file or directory"},
		{[]string{"logs", filepath.Join(dir, "*.gz")}, "no file matches this pattern"},
		{[]string{"logs", klog}, "none of the 2 lines in " + klog + " is an etcd log line"},
		{[]string{"logs"}, "give the log files"},
		{[]string{"logs", klog, "--bucket", "0s"}, "--bucket 0s is too small"},
		{[]string{"logs", klog, "--timezone", "Mars/Olympus"}, "--timezone"},
		{[]string{"logs", klog, "-o", "events.xlsx"}, "not a format"},
	} {
		r := testutil.RunBinary(t, 30*time.Second, c.args...)
		if r.Code != 2 || !strings.Contains(r.Stderr, c.want) || strings.Count(strings.TrimSpace(r.Stderr), "\n") != 0 || r.Stdout != "" {
			t.Errorf("%v: exit %d, stderr %q, stdout %q; want exit 2 saying %q", c.args, r.Code, r.Stderr, r.Stdout, c.want)
		}
	}
	assertOnly(t, dir, "kubelet.log")
}

func assertOnly(t *testing.T, dir string, names ...string) {
	t.Helper()
	got, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var have []string
	for _, e := range got {
		have = append(have, e.Name())
	}
	if strings.Join(have, " ") != strings.Join(names, " ") {
		t.Errorf("%s holds %v, want %v", dir, have, names)
	}
}

// Rotated gzipped logs through a pattern, per minute, into a CSV of events.
func TestLogsGzipPatternCSV(t *testing.T) {
	data, err := os.ReadFile(realLog("capnslog-3.1-3.3.log"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, name := range []string{"etcd.log.1.gz", "etcd.log.2.gz"} {
		var gz bytes.Buffer
		zw := gzip.NewWriter(&gz)
		zw.Write(data)
		zw.Close()
		if err := os.WriteFile(filepath.Join(dir, name), gz.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(dir, "events.csv")
	js := filepath.Join(dir, "run.json")
	r := testutil.RunBinary(t, time.Minute, "logs", filepath.Join(dir, "etcd.log.*.gz"), "--bucket", "1m", "-o", out, "-o", js)
	if r.Code != 1 || !strings.Contains(r.Stdout, "Verdict: FAIL") {
		t.Fatalf("exit %d\n%s\n%s", r.Code, r.Stdout, r.Stderr)
	}
	res, err := result.ReadFile(js)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var events int64
	for _, n := range res.Logs.Classes {
		events += n
	}
	// Every event is a row (one line can be two events), and the JSON's
	// event list is the same as the CSV's.
	if int64(len(rows)-1) != events || len(res.Logs.Events) != len(rows)-1 || res.Logs.EventsOmitted != 0 {
		t.Errorf("%d CSV rows, %d events counted, %d listed", len(rows)-1, events, len(res.Logs.Events))
	}
	if l := res.Logs; l.Lines != 64 || l.Classes["slow_apply"] != 14 || len(l.Members) != 1 || l.Members[0].Name != "etcd" {
		t.Errorf("%d lines, classes %v, members %+v", l.Lines, l.Classes, l.Members)
	}
	// These lines span five years: the 1m buckets double until at most
	// 10000 of them cover it.
	tl := res.Logs.Timeline
	if res.Params.(*result.LogsParams).Bucket != 60.0 || tl.Buckets > 10000 || tl.Bucket < 60 || tl.Bucket/60 != float64(int64(tl.Bucket/60)) || int64(tl.Bucket/60)&(int64(tl.Bucket/60)-1) != 0 {
		t.Errorf("params %+v, timeline of %d buckets of %vs", res.Params, tl.Buckets, tl.Bucket)
	}
	assertOnly(t, dir, "etcd.log.1.gz", "etcd.log.2.gz", "events.csv", "run.json")
}

func TestLogsHelp(t *testing.T) {
	r := testutil.RunBinary(t, 30*time.Second, "logs", "--help")
	for _, want := range []string{
		"kubectl logs etcd-node1 -n kube-system --timestamps | etcdperf logs -",
		"etcdperf logs /var/log/etcd/*.log.gz --bucket 1m -o events.csv",
		"--bucket", "--max-events", "--timezone",
	} {
		if r.Code != 0 || !strings.Contains(r.Stdout, want) {
			t.Errorf("help lacks %q (exit %d)", want, r.Code)
		}
	}
}

// A directory collected from a cluster: journalctl -u etcd's text of
// sixteen members under systemd (capnslog's bare messages, each line
// naming its host), a seventeenth member's zap lines in a .jsonl file and
// a host's journal of other programs. Both etcd files are read, the host
// journal is skipped, and the members are the sixteen hosts and the jsonl
// file: the journal file is not a member of its own.
func TestLogsDirJournaldJSONL(t *testing.T) {
	dir := t.TempDir()
	var journal strings.Builder
	journal.WriteString("-- Logs begin at Mon 2019-08-12 09:00:01 UTC, end at Mon 2019-08-12 10:00:00 UTC. --\n")
	for i := 0; i < 16; i++ {
		fmt.Fprintf(&journal, "Aug 12 09:27:%02d master-%d etcd[%d]: published {Name:master-%d ClientURLs:[https://10.0.0.%d:2379]} to cluster 59a05384c9b79ee\n", i, i, 800+i, i, i+1)
		fmt.Fprintf(&journal, "Aug 12 09:28:%02d master-%d etcd[%d]: failed to send out heartbeat on time (exceeded the 100ms timeout for 2%02d.80886ms, to d35e062b0036cc3a)\n", i, i, 800+i, i)
	}
	jsonl := `{"level":"warn","ts":"2019-08-12T09:29:17.672Z","caller":"wal/wal.go:802","msg":"slow fdatasync","took":"1.263337456s","expected-duration":"1s"}` + "\n" +
		`{"level":"info","ts":"2019-08-12T09:29:18.001Z","caller":"etcdserver/server.go:2037","msg":"published local member to cluster through raft","local-member-id":"bf9071f4639c75cc"}` + "\n"
	host := "Aug 12 09:27:04 master-0 systemd[1]: Started Kubernetes systemd probe.\n" +
		`Aug 12 09:27:04 master-0 kubelet[1200]: I0812 09:27:04.100001    1200 kubelet.go:2618] "SyncLoop (probe)"` + "\n"
	for name, data := range map[string]string{"journald.txt": journal.String(), "m16.jsonl": jsonl, "host-journal.log": host} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	js := filepath.Join(dir, "run.json")
	r := testutil.RunBinary(t, time.Minute, "logs", dir, "-o", js, "-o", "text")
	if r.Code != 1 || !strings.Contains(r.Stdout, "from 17 members") {
		t.Fatalf("exit %d, want 1 (the slow fdatasync) and 17 members\n%s\n%s", r.Code, r.Stdout, r.Stderr)
	}
	res, err := result.ReadFile(js)
	if err != nil {
		t.Fatal(err)
	}
	l := res.Logs
	var names []string
	for _, m := range l.Members {
		names = append(names, m.Name)
		if m.Lines == 0 {
			t.Errorf("member %s has no lines", m.Name)
		}
	}
	if len(names) != 17 || names[0] != "m16" || names[1] != "master-0" || slices.Contains(names, "journald") {
		t.Errorf("members %v", names)
	}
	read := map[string]string{}
	for _, s := range l.Sources {
		read[filepath.Base(s.Name)] = s.Skipped
	}
	if len(read) != 3 || read["journald.txt"] != "" || read["m16.jsonl"] != "" || !strings.HasPrefix(read["host-journal.log"], "not an etcd log") {
		t.Errorf("sources %+v", l.Sources)
	}
	if l.Lines != 35 || l.Unparsed != 1 || l.Classes["heartbeat_late"] != 16 || l.Classes["slow_fdatasync"] != 1 {
		t.Errorf("lines %d unparsed %d classes %v", l.Lines, l.Unparsed, l.Classes)
	}
	assertOnly(t, dir, "host-journal.log", "journald.txt", "m16.jsonl", "run.json")
}

// A gzip file cut short (the few bytes, and the first half of a
// real one) is read up to the cut: exit 2, the Result of what was read,
// and "Incomplete" instead of a verdict.
func TestLogsTruncatedGzip(t *testing.T) {
	data, err := os.ReadFile(realLog("zap-3.4-3.5.log"))
	if err != nil {
		t.Fatal(err)
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(data)
	zw.Close()
	dir := t.TempDir()
	files := map[string][]byte{
		"garbage.gz": []byte("\x1f\x8b\x08\x00garbage"),
		"half.gz":    gz.Bytes()[:gz.Len()/2],
	}
	for name, b := range files {
		t.Run(name, func(t *testing.T) {
			in := filepath.Join(dir, name)
			if err := os.WriteFile(in, b, 0o644); err != nil {
				t.Fatal(err)
			}
			js := filepath.Join(dir, name+".json")
			r := testutil.RunBinary(t, time.Minute, "logs", in, "-o", js)
			if r.Code != 2 || !strings.Contains(r.Stderr, name) {
				t.Fatalf("exit %d, stderr %q; want 2 and the file named", r.Code, r.Stderr)
			}
			assertIncompleteText(t, r.Stdout, name)
			res, err := result.ReadFile(js)
			if err != nil {
				t.Fatal(err)
			}
			if res.Verdict != result.Incomplete || res.Error == "" {
				t.Errorf("verdict %q, error %q; want incomplete", res.Verdict, res.Error)
			}
		})
	}
}
