package pipeline

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"

	"github.com/etcdperf/etcdperf/internal/etcdlog"
	"github.com/etcdperf/etcdperf/internal/judge"
	"github.com/etcdperf/etcdperf/internal/result"
)

func freeURL(t *testing.T) url.URL {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return url.URL{Scheme: "http", Host: l.Addr().String()}
}

// member is one embedded etcd writing its zap log to a file.
type member struct {
	name, log string
	cfg       *embed.Config
	etcd      *embed.Etcd
}

// newMembers configures n members on loopback. Every apply and every
// request counts as slow (1µs thresholds): ordinary work produces the
// warnings a slow disk would.
func newMembers(t *testing.T, n int, format string) []*member {
	t.Helper()
	dir := t.TempDir()
	var ms []*member
	var cluster []string
	for i := 1; i <= n; i++ {
		name := fmt.Sprintf("m%d", i)
		cfg := embed.NewConfig()
		cfg.Name = name
		cfg.Dir = filepath.Join(dir, name+".etcd")
		peer, client := freeURL(t), freeURL(t)
		cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{peer}, []url.URL{peer}
		cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{client}, []url.URL{client}
		cfg.Logger, cfg.LogLevel, cfg.LogFormat = "zap", "info", format
		log := filepath.Join(dir, name+".log")
		cfg.LogOutputs = []string{log}
		cfg.WarningApplyDuration = time.Microsecond
		cfg.WarningUnaryRequestDuration = time.Microsecond
		cfg.TickMs, cfg.ElectionMs = 50, 500
		cluster = append(cluster, name+"="+peer.String())
		ms = append(ms, &member{name: name, log: log, cfg: cfg})
	}
	for _, m := range ms {
		m.cfg.InitialCluster = strings.Join(cluster, ",")
		m.cfg.InitialClusterToken = "etcdperf-logs-test"
	}
	return ms
}

func startMembers(t *testing.T, ms []*member) {
	t.Helper()
	errc := make(chan error, len(ms))
	for _, m := range ms {
		go func() {
			e, err := embed.StartEtcd(m.cfg)
			if err == nil {
				m.etcd = e
			}
			errc <- err
		}()
	}
	for range ms {
		if err := <-errc; err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		for _, m := range ms {
			if m.etcd != nil {
				m.etcd.Close()
			}
		}
	})
	for _, m := range ms {
		select {
		case <-m.etcd.Server.ReadyNotify():
		case <-time.After(30 * time.Second):
			t.Fatalf("%s not ready in 30s", m.name)
		}
	}
}

// client connects to the running members.
func client(t *testing.T, ms []*member) *clientv3.Client {
	t.Helper()
	var eps []string
	for _, m := range ms {
		eps = append(eps, m.cfg.AdvertiseClientUrls[0].String())
	}
	cli, err := clientv3.New(clientv3.Config{Endpoints: eps, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cli.Close() })
	return cli
}

// countLines counts a log's non-empty lines, and among them those that
// do not start with a timestamp: the stack traces zap's console encoder
// writes on the lines after a warning.
func countLines(t *testing.T, path string) (lines, stack int64) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 4<<20)
	for sc.Scan() {
		if s := sc.Text(); strings.TrimSpace(s) != "" {
			lines++
			if s[0] < '0' || s[0] > '9' {
				stack++
			}
		}
	}
	return lines, stack
}

// captureLogs copies the logs to $ETCDPERF_CAPTURE_DIR when it is set: how
// testdata/real/embed-3.7.3-*.log were taken.
func captureLogs(t *testing.T, ms []*member) {
	dir := os.Getenv("ETCDPERF_CAPTURE_DIR")
	if dir == "" {
		return
	}
	for _, m := range ms {
		b, err := os.ReadFile(m.log)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, m.cfg.LogFormat+"-"+m.name+".log"), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// Three embedded etcd v3.7.3 members take a short load with every apply
// counted as slow, compact and defragment; then the leader is stopped and
// the others elect a new one. Their own zap logs must read back as what
// happened.
func TestLogsFromEmbeddedCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("starts three etcd members")
	}
	ms := newMembers(t, 3, "json")
	startMembers(t, ms)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cli := client(t, ms)
	const puts, ranges = 60, 10
	val := strings.Repeat("v", 100)
	var rev int64
	for i := 0; i < puts; i++ {
		r, err := cli.Put(ctx, fmt.Sprintf("/etcdperf-logs/k%03d", i), val)
		if err != nil {
			t.Fatal(err)
		}
		rev = r.Header.Revision
	}
	for i := 0; i < ranges; i++ {
		if _, err := cli.Get(ctx, "/etcdperf-logs/", clientv3.WithPrefix()); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := cli.Compact(ctx, rev, clientv3.WithCompactPhysical()); err != nil {
		t.Fatal(err)
	}
	if _, err := cli.Defragment(ctx, ms[0].cfg.AdvertiseClientUrls[0].String()); err != nil {
		t.Fatal(err)
	}
	// Stop the leader; the two others elect a new one.
	var leader *member
	for _, m := range ms {
		if m.etcd.Server.Leader() == m.etcd.Server.MemberID() {
			leader = m
		}
	}
	if leader == nil {
		t.Fatal("no leader")
	}
	leaderID := leader.etcd.Server.MemberID()
	leader.etcd.Close()
	leader.etcd = nil
	deadline := time.Now().Add(20 * time.Second)
	var rest []*member
	for _, m := range ms {
		if m.etcd != nil {
			rest = append(rest, m)
		}
	}
	for {
		l := rest[0].etcd.Server.Leader()
		if l != 0 && l != leaderID && l == rest[1].etcd.Server.Leader() {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no new leader within 20s")
		}
		time.Sleep(50 * time.Millisecond)
	}
	for _, m := range rest {
		m.etcd.Close()
		m.etcd = nil
	}
	captureLogs(t, ms)

	var paths []string
	var lines int64
	for _, m := range ms {
		paths = append(paths, m.log)
		n, _ := countLines(t, m.log)
		lines += n
	}
	res, err := Logs(ctx, LogsOptions{Paths: paths, Scan: etcdlog.ScanOptions{Summary: etcdlog.SummaryOptions{Bucket: time.Minute, MaxEvents: 100}}})
	if err != nil {
		t.Fatal(err)
	}
	l := res.Logs
	if l.Lines != lines || l.Unparsed != 0 || l.Formats["zap-json"] != lines {
		t.Fatalf("read %d lines (%d unparsed, formats %v), the files hold %d", l.Lines, l.Unparsed, l.Formats, lines)
	}
	if len(l.Members) != 3 {
		t.Fatalf("members %+v", l.Members)
	}
	for i, lm := range l.Members {
		m := ms[i]
		if lm.Name != m.name || lm.Version != "3.7.3" || lm.EtcdName != m.name || lm.ID == "" {
			t.Errorf("member %d: %+v", i, lm)
		}
	}
	// Every put is applied on every member, each apply logged as slow.
	min := map[string]int64{
		"slow_apply": 3 * puts, "slow_read_only_range": ranges, "slow_request": puts + ranges,
		"compaction": 3, "defrag": 1, "leader_elected": 3 + 2, "leader_lost": 2, "election_started": 1, "peer_unhealthy": 2,
	}
	for id, n := range min {
		if l.Classes[id] < n {
			t.Errorf("%s: %d events, want at least %d (classes %v)", id, l.Classes[id], n, l.Classes)
		}
	}
	for _, id := range []string{"db_space_exceeded", "request_timeout", "clock_drift"} {
		if l.Classes[id] != 0 {
			t.Errorf("%s: %d events in a healthy test cluster", id, l.Classes[id])
		}
	}
	st := statsOf(l, "slow_apply")
	if st == nil || st.Took == nil || st.Took.Count != l.Classes["slow_apply"] || st.Took.Min < 1e-6 || st.Expected != 1e-6 {
		t.Errorf("slow_apply stats %+v", st)
	}
	if len(l.TopPrefixes) == 0 || l.TopPrefixes[0].Prefix != "/etcdperf-logs/" || l.TopPrefixes[0].MaxCount != puts {
		t.Errorf("top prefixes %+v", l.TopPrefixes)
	}
	if len(l.TopRequests) != 10 || l.TopRequests[0].Took < l.TopRequests[9].Took {
		t.Errorf("top requests %+v", l.TopRequests)
	}
	if len(l.Events) != 100 || l.EventsOmitted == 0 {
		t.Errorf("%d events listed, %d omitted", len(l.Events), l.EventsOmitted)
	}
	if l.Timeline == nil || l.Timeline.Bucket != 60 || l.Timeline.Buckets < 1 || l.Timeline.Buckets > 3 {
		t.Errorf("timeline %+v", l.Timeline)
	}
	if !hasFinding(res, "logs_leader_churn") || res.Verdict == result.Pass {
		t.Errorf("verdict %s, findings %+v", res.Verdict, res.Findings)
	}
}

// A member writing zap's console format reads the same.
func TestLogsFromEmbeddedConsoleFormat(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an etcd member")
	}
	ms := newMembers(t, 1, "console")
	startMembers(t, ms)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cli := client(t, ms)
	const puts = 30
	for i := 0; i < puts; i++ {
		if _, err := cli.Put(ctx, fmt.Sprintf("/registry/pods/default/p%d", i), "x"); err != nil {
			t.Fatal(err)
		}
	}
	ms[0].etcd.Close()
	ms[0].etcd = nil
	captureLogs(t, ms)
	lines, stack := countLines(t, ms[0].log)
	res, err := Logs(ctx, LogsOptions{Paths: []string{ms[0].log}})
	if err != nil {
		t.Fatal(err)
	}
	sameTextReadBack(t, res)
	l := res.Logs
	if l.Lines != lines || l.Formats["zap-console"] != lines-stack || l.Unparsed != stack {
		t.Fatalf("read %d lines: formats %v, %d unparsed; the file holds %d lines, %d of them stack frames", l.Lines, l.Formats, l.Unparsed, lines, stack)
	}
	if l.Classes["slow_apply"] < puts || l.Classes["slow_request"] < puts || l.Classes["leader_elected"] != 1 {
		t.Errorf("classes %v", l.Classes)
	}
	if m := l.Members; len(m) != 1 || m[0].Version != "3.7.3" || m[0].ID == "" {
		t.Errorf("members %+v", m)
	}
	if len(l.TopPrefixes) != 1 || l.TopPrefixes[0].Prefix != "/registry/pods/" || l.TopPrefixes[0].Count != puts {
		t.Errorf("prefixes %+v", l.TopPrefixes)
	}
}

func statsOf(l *result.Logs, id string) *result.LogClassStats {
	for i := range l.Stats {
		if l.Stats[i].Class == id {
			return &l.Stats[i]
		}
	}
	return nil
}

func hasFinding(r *result.Result, id string) bool {
	for _, f := range r.Findings {
		if f.ID == id {
			return true
		}
	}
	return false
}

// Ctrl-C while reading: the Result of what was read, saying it was
// interrupted, with context.Canceled (which the CLI maps to exit 2).
func TestLogsInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	line := `{"level":"warn","ts":"2022-08-30T09:19:17.672Z","caller":"wal/wal.go:802","msg":"slow fdatasync","took":"1.2s","expected-duration":"1s"}` + "\n"
	res, err := Logs(ctx, LogsOptions{Paths: []string{"-"}, Stdin: strings.NewReader(line)})
	if !errors.Is(err, context.Canceled) || res == nil {
		t.Fatalf("result %v, error %v; want a Result and context.Canceled", res != nil, err)
	}
	if !strings.HasPrefix(res.Error, "interrupted after 0 lines") {
		t.Errorf("error in the Result %q", res.Error)
	}
}

// A gzip file cut short (a log rotated while it was copied): the lines
// before the cut are judged, but the run is incomplete, not a pass.
func TestLogsTruncatedGzip(t *testing.T) {
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	for i := range 2000 {
		fmt.Fprintf(zw, `{"level":"info","ts":"2022-08-30T09:19:%02d.%03dZ","caller":"etcdserver/server.go:1","msg":"applied index %d"}`+"\n", i/1000, i%1000, i*7919)
	}
	zw.Close()
	path := filepath.Join(t.TempDir(), "etcd.log.gz")
	if err := os.WriteFile(path, gz.Bytes()[:gz.Len()/2], 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := Logs(context.Background(), LogsOptions{Paths: []string{path}})
	if err == nil || res == nil {
		t.Fatalf("result %v, error %v; want the Result of what was read and an error", res != nil, err)
	}
	if res.Verdict != result.Incomplete || res.Error == "" || res.Logs.Lines == 0 || res.Logs.Lines >= 2000 {
		t.Errorf("verdict %q, error %q, %d lines; want incomplete, with some of the lines", res.Verdict, res.Error, res.Logs.Lines)
	}
}

// The summary of a quiet log counts its events in words that agree.
func TestLogsSummaryCountsEvents(t *testing.T) {
	for n, want := range map[int64]string{1: ": 1 event, which does not point to a problem;", 3: ": 3 events, none that points to a problem;"} {
		res := result.New(result.KindLogs)
		res.Logs = &result.Logs{Lines: 10, Classes: map[string]int64{"compaction": n}, Members: []result.LogMember{{Name: "m1"}}}
		judge.Judge(res, nil)
		if !strings.Contains(res.Summary, want) {
			t.Errorf("%d events: summary %q lacks %q", n, res.Summary, want)
		}
	}
}
