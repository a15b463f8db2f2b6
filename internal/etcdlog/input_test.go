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
		{filepath.Join(dir, "klog"), "none of its 1 log files holds etcd log lines"},
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
		"openshift-etcd-operator/pods/etcd-operator-7d9/etcd-operator/etcd-operator/logs/current.log": "skipped: not an etcd log (0 of its first 1 lines are etcd log lines)",
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
