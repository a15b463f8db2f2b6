package etcdlog

import (
	"compress/gzip"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/etcdperf/etcdperf/internal/result"
)

const (
	zapSlowSync = `{"level":"warn","ts":"2022-08-30T09:19:17.672Z","caller":"wal/wal.go:802","msg":"slow fdatasync","took":"1.263337456s","expected-duration":"1s"}` + "\n"
	klogLine    = `I0927 21:59:52.167318       1 operator.go:12] "syncing" controller="etcd"` + "\n"
)

func write(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func writeGz(t *testing.T, path, data string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	zw := gzip.NewWriter(f)
	if _, err := zw.Write([]byte(data)); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestInputsErrors(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "klog", "kubelet.log"), klogLine)
	if err := os.Mkdir(filepath.Join(dir, "empty"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ arg, want string }{
		{filepath.Join(dir, "missing.log"), "no such file or directory"},
		{filepath.Join(dir, "*.log.gz"), "no file matches this pattern"},
		{filepath.Join(dir, "empty"), "no log files in this directory"},
		{filepath.Join(dir, "klog"), "its one log file holds no etcd log lines (" + filepath.Join(dir, "klog", "kubelet.log") + ": not an etcd log (its one line is not an etcd log line)"},
	} {
		_, err := Inputs([]string{c.arg}, nil)
		var ie *InputError
		if !errors.As(err, &ie) || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), c.arg) {
			t.Errorf("Inputs(%s): %v, want an InputError saying %q", c.arg, err, c.want)
		}
	}
}

// A must-gather holds the etcd pods' containers next to other components:
// the etcd logs are found and named after their pod, the operator's klog
// output is skipped, and what does not name etcd is not looked at.
func TestInputsMustGather(t *testing.T) {
	root := t.TempDir()
	ns := filepath.Join(root, "quay-io-openshift-must-gather-sha256", "namespaces")
	write(t, filepath.Join(ns, "openshift-etcd/pods/etcd-master-0/etcd/etcd/logs/current.log"), zapSlowSync)
	write(t, filepath.Join(ns, "openshift-etcd/pods/etcd-master-0/etcd/etcd/logs/previous.log"), zapSlowSync)
	write(t, filepath.Join(ns, "openshift-etcd/pods/etcd-master-1/etcd/etcd/logs/current.log"), zapSlowSync+zapSlowSync)
	write(t, filepath.Join(ns, "openshift-etcd/pods/etcd-master-1/etcd-metrics/etcd-metrics/logs/current.log"), zapSlowSync)
	write(t, filepath.Join(ns, "openshift-etcd-operator/pods/etcd-operator-7d9/etcd-operator/etcd-operator/logs/current.log"), klogLine)
	write(t, filepath.Join(ns, "openshift-apiserver/pods/apiserver-1/apiserver/apiserver/logs/current.log"), zapSlowSync)
	ins, err := Inputs([]string{root}, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, in := range ins {
		rel, _ := filepath.Rel(ns, in.Name)
		got[rel] = in.Member
		if in.Skipped != "" {
			got[rel] = "skipped: " + in.Skipped
		}
	}
	want := map[string]string{
		"openshift-etcd/pods/etcd-master-0/etcd/etcd/logs/current.log":                                "etcd-master-0",
		"openshift-etcd/pods/etcd-master-0/etcd/etcd/logs/previous.log":                               "etcd-master-0",
		"openshift-etcd/pods/etcd-master-1/etcd/etcd/logs/current.log":                                "etcd-master-1",
		"openshift-etcd/pods/etcd-master-1/etcd-metrics/etcd-metrics/logs/current.log":                "etcd-master-1/etcd-metrics",
		"openshift-etcd-operator/pods/etcd-operator-7d9/etcd-operator/etcd-operator/logs/current.log": "skipped: not an etcd log (its one line is not an etcd log line)",
	}
	if len(got) != len(want) {
		t.Errorf("inputs %v", got)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %q, want %q", k, got[k], v)
		}
	}
	s, err := Scan(context.Background(), ins, ScanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	l := s.Result()
	skipped := 0
	for _, src := range l.Sources {
		if src.Skipped != "" {
			skipped++
		}
	}
	if l.Lines != 5 || l.Classes["slow_fdatasync"] != 5 || len(l.Members) != 3 || len(l.Sources) != 5 || skipped != 1 {
		t.Errorf("lines %d classes %v members %+v sources %+v", l.Lines, l.Classes, l.Members, l.Sources)
	}
}

// Rotated and gzipped files of one member, and of members in their own
// directories, and standard input.
func TestInputsRotationAndGzip(t *testing.T) {
	dir := t.TempDir()
	host := filepath.Join(dir, "host0")
	if err := os.Mkdir(host, 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(host, "etcd.log"), zapSlowSync)
	writeGz(t, filepath.Join(host, "etcd.log.1.gz"), zapSlowSync+zapSlowSync)
	writeGz(t, filepath.Join(host, "etcd.log-20240101"), zapSlowSync) // gzip without the name saying so
	write(t, filepath.Join(dir, "node1", "etcd.log"), zapSlowSync)
	write(t, filepath.Join(dir, "node2", "etcd.log"), zapSlowSync)
	ins, err := Inputs([]string{filepath.Join(host, "etcd.log*"), filepath.Join(dir, "node*", "etcd.log"), "-"}, strings.NewReader(zapSlowSync))
	if err != nil {
		t.Fatal(err)
	}
	var members []string
	for _, in := range ins {
		members = append(members, in.Member)
	}
	if strings.Join(members, " ") != "host0/etcd host0/etcd host0/etcd node1/etcd node2/etcd stdin" {
		t.Fatalf("members %v", members)
	}
	s, err := Scan(context.Background(), ins, ScanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	l := s.Result()
	if l.Lines != 7 || l.Unparsed != 0 || l.Classes["slow_fdatasync"] != 7 {
		t.Errorf("lines %d unparsed %d classes %v", l.Lines, l.Unparsed, l.Classes)
	}
	if !l.Sources[1].Compressed || !l.Sources[2].Compressed || l.Sources[0].Compressed {
		t.Errorf("sources %+v", l.Sources)
	}
	if len(l.Members) != 4 || l.Members[0].Name != "host0/etcd" || l.Members[0].Lines != 4 {
		t.Errorf("members %+v", l.Members)
	}
}

// A line longer than the limit counts as unparsed; the next line reads.
func TestLongLine(t *testing.T) {
	long := `{"level":"warn","msg":"` + strings.Repeat("x", 300) + `"}` + "\n"
	s := NewSummary(SummaryOptions{})
	var src struct{ result.LogSource }
	if err := ScanReader(context.Background(), strings.NewReader(long+zapSlowSync), "t", "m", NewParser(ParserOptions{}), s, 200, &src.LogSource); err != nil {
		t.Fatal(err)
	}
	if src.Lines != 2 || src.Unparsed != 1 || src.Bytes != int64(len(long)+len(zapSlowSync)) || s.Result().Classes["slow_fdatasync"] != 1 {
		t.Errorf("%+v %v", src, s.Result().Classes)
	}
}

// noNewline is a stream without a newline that cancels its context once
// it has given 8 MiB.
type noNewline struct {
	n      int
	cancel func()
}

func (r *noNewline) Read(b []byte) (int, error) {
	for i := range b {
		b[i] = 'x'
	}
	if r.n += len(b); r.n > 8<<20 {
		r.cancel()
	}
	return len(b), nil
}

// Ctrl-C ends a scan inside a line that never ends, not only between
// lines.
func TestScanStopsInsideALine(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	r := &noNewline{cancel: cancel}
	var src result.LogSource
	done := make(chan error, 1)
	go func() {
		done <- ScanReader(ctx, r, "t", "m", NewParser(ParserOptions{}), NewSummary(SummaryOptions{}), DefaultMaxLine, &src)
	}()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("scan ended with %v, want context.Canceled", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the scan went on reading after its context ended")
	}
}

// journalctl -u etcd's text of a cluster under systemd (capnslog's bare
// messages, each line naming its host), as a directory collected from
// a cluster holds it.
const journaldEtcd = `-- Logs begin at Mon 2019-08-12 09:00:01 UTC, end at Mon 2019-08-12 10:00:00 UTC. --
Aug 12 09:27:04 master-0 etcd[812]: sync duration of 1.363283431s, expected less than 1s
Aug 12 09:27:04 master-0 etcd[812]: failed to send out heartbeat on time (exceeded the 100ms timeout for 1.220602923s, to d35e062b0036cc3a)
Aug 12 09:27:04 master-0 etcd[812]: server is likely overloaded
Aug 12 09:27:05 master-1 etcd[790]: published {Name:master-1 ClientURLs:[https://10.0.0.2:2379]} to cluster 59a05384c9b79ee
Aug 12 09:27:06 master-2 etcd[801]: raft.node: 8e9e05c52164694d elected leader 8e9e05c52164694d at term 5
`

// A host's journal: other programs' bare messages.
const journaldHost = `Aug 12 09:27:04 master-0 systemd[1]: Started Kubernetes systemd probe.
Aug 12 09:27:04 master-0 kubelet[1200]: I0812 09:27:04.100001    1200 kubelet.go:2618] "SyncLoop (probe)"
Aug 12 09:27:05 master-0 kernel: nvme0n1: I/O 12 QID 3 timeout, completion polled
`

// In a directory, journalctl's text of etcd (bare messages) and zap's
// lines in *.jsonl are read; a host's journal of other programs is
// skipped. The journal's members are its hosts: the file is not one more.
func TestInputsJournaldAndJSONL(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "journald.txt"), journaldEtcd)
	write(t, filepath.Join(dir, "m3.jsonl"), zapSlowSync+zapSlowSync)
	write(t, filepath.Join(dir, "host-journal.log"), journaldHost)
	ins, err := Inputs([]string{dir}, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, in := range ins {
		got[filepath.Base(in.Name)] = in.Member
		if in.Skipped != "" {
			got[filepath.Base(in.Name)] = "skipped: " + in.Skipped
		}
	}
	want := map[string]string{
		"journald.txt":     "journald",
		"m3.jsonl":         "m3",
		"host-journal.log": "skipped: not an etcd log (0 of its first 3 lines are etcd log lines)",
	}
	if len(got) != len(want) {
		t.Errorf("inputs %v", got)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %q, want %q", k, got[k], v)
		}
	}
	s, err := Scan(context.Background(), ins, ScanOptions{Parser: ParserOptions{Year: 2019}})
	if err != nil {
		t.Fatal(err)
	}
	l := s.Result()
	var names []string
	for _, m := range l.Members {
		names = append(names, m.Name)
	}
	if strings.Join(names, " ") != "m3 master-0 master-1 master-2" {
		t.Errorf("members %v, want the journal's hosts and m3", names)
	}
	if l.Lines != 8 || l.Unparsed != 1 || l.Classes["slow_fdatasync"] != 3 || l.Classes["heartbeat_late"] != 1 || l.Classes["leader_elected"] != 1 {
		t.Errorf("lines %d unparsed %d classes %v", l.Lines, l.Unparsed, l.Classes)
	}
}
