package e2e

import (
	"bufio"
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

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/etcdperf/etcdperf/internal/result"
	"github.com/etcdperf/etcdperf/internal/testutil"
)

// startServer runs `etcdperf server` as a user's external etcd and
// returns its endpoint and a client of the test's own.
func startServer(t *testing.T) (string, *clientv3.Client) {
	t.Helper()
	ep, cli, _ := startServerLogged(t)
	return ep, cli
}

// startServerLogged is startServer that also returns the path of the
// member's log.
func startServerLogged(t *testing.T) (string, *clientv3.Client, string) {
	t.Helper()
	dir := t.TempDir()
	logPath := filepath.Join(dir, "etcd.log")
	ep, cli, _ := startServerAt(t, filepath.Join(dir, "data"), logPath)
	return ep, cli, logPath
}

// startServerAt runs `etcdperf server` with its data in dataDir and its log
// in logPath; stop ends it (it also ends with the test).
func startServerAt(t *testing.T, dataDir, logPath string) (ep string, cli *clientv3.Client, stop func()) {
	t.Helper()
	ep = fmt.Sprintf("127.0.0.1:%d", testutil.FreePort(t))
	peer := fmt.Sprintf("http://127.0.0.1:%d", testutil.FreePort(t))
	cli, stop = startServerWith(t, dataDir, logPath, ep, peer)
	return ep, cli, stop
}

// startServerWith runs `etcdperf server` with its data in dataDir, its log
// in logPath, on the client endpoint ep and the peer URL peer, with extra
// flags; stop ends it (it also ends with the test).
func startServerWith(t *testing.T, dataDir, logPath, ep, peer string, extra ...string) (cli *clientv3.Client, stop func()) {
	t.Helper()
	cmd := exec.Command(testutil.Binary(t), append([]string{"server", "--data-dir", dataDir,
		"--listen-client-url", "http://" + ep, "--listen-peer-url", peer, "--log-file", logPath}, extra...)...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cmd.Process.Signal(syscall.SIGTERM)
			cmd.Wait()
		})
	}
	t.Cleanup(stop)
	ready := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			ready <- sc.Text()
		}
		close(ready)
	}()
	select {
	case line := <-ready:
		if !strings.HasPrefix(line, "etcdperf-server ready http://"+ep) {
			t.Fatalf("server said %q, stderr %s", line, stderr.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("etcdperf server not ready in 30s")
	}
	if stderr.Len() > 0 {
		t.Errorf("etcdperf server wrote to stderr: %s", stderr.String())
	}
	cli, err = clientv3.New(clientv3.Config{Endpoints: []string{ep}, DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cli.Close() })
	return cli, stop
}

func keysUnder(t *testing.T, cli *clientv3.Client, p string) int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	r, err := cli.Get(ctx, p, clientv3.WithPrefix(), clientv3.WithCountOnly())
	if err != nil {
		t.Fatal(err)
	}
	return r.Count
}

// benchResult checks a bench run's exit code against its verdict: 0 or 1
// (the slow disk of a shared CI machine may fail etcd's checks), never 2.
func benchResult(t *testing.T, r testutil.Run) *result.Result {
	t.Helper()
	if r.Code != 0 && r.Code != 1 {
		t.Fatalf("exit %d\nstderr: %s", r.Code, r.Stderr)
	}
	res := decodeResult(t, r.Stdout)
	if (res.Verdict == result.Fail) != (r.Code == 1) {
		t.Errorf("exit %d with verdict %s", r.Code, res.Verdict)
	}
	if r.Stderr != "" {
		t.Errorf("noise on stderr: %q", r.Stderr)
	}
	return res
}

// The first promise: no etcd installed, one command, a Result.
func TestBenchPutEmbedded(t *testing.T) {
	dir := t.TempDir()
	r := testutil.RunBinary(t, 3*time.Minute, "bench", "put", "--total", "20000", "--clients", "50", "--conns", "10", "-o", "json", "--data-dir", dir)
	res := benchResult(t, r)
	if res.Kind != "bench" || res.Bench.Ops != 20000 || len(res.Bench.Errors) != 0 {
		t.Errorf("ops %d errors %v", res.Bench.Ops, res.Bench.Errors)
	}
	if res.Target == nil || res.Target.Kind != "embedded" || res.Server == nil || res.Server.WALFsync == nil {
		t.Errorf("target %+v server %+v", res.Target, res.Server)
	}
	assertEmptyDir(t, dir)
}

// The seed workload against an external etcd and against three embedded
// members, with small totals.
func TestBenchSeedWorkload(t *testing.T) {
	seed := []string{"bench", "put", "--key-size=8", "--sequential-keys", "--val-size=256", "--conns=100", "--clients=100", "--target-leader", "--total=3000", "-o", "json"}
	ep, cli := startServer(t)
	res := benchResult(t, testutil.RunBinary(t, 2*time.Minute, append(seed, "--endpoints", ep)...))
	if res.Bench.Ops != 3000 || res.Target.Kind != "external" || res.Bench.Conns != 100 {
		t.Errorf("external: %+v", res.Bench)
	}
	if n := keysUnder(t, cli, "/etcdperf/"); n != 0 {
		t.Errorf("%d keys left in the external etcd", n)
	}

	dir := t.TempDir()
	res = benchResult(t, testutil.RunBinary(t, 2*time.Minute, append(seed, "--data-dir", dir)...))
	if res.Bench.Ops != 3000 || res.Target.Kind != "embedded" || len(res.Target.Members) != 1 {
		t.Errorf("embedded: bench %+v target %+v", res.Bench, res.Target)
	}
	assertEmptyDir(t, dir)

	res = benchResult(t, testutil.RunBinary(t, 2*time.Minute, append(seed, "--members", "3", "--data-dir", dir)...))
	if res.Bench.Ops != 3000 || len(res.Target.Members) != 3 || res.Server == nil || len(res.Server.Members) != 3 {
		t.Errorf("3 members: bench %+v target %+v", res.Bench, res.Target)
	}
	assertEmptyDir(t, dir)
}

func TestBenchWorkloadsText(t *testing.T) {
	ep, cli := startServer(t)
	for _, args := range [][]string{
		{"range", "--total", "200", "--clients", "4", "--key-space-size", "50", "--consistency", "s"},
		{"txn-put", "--total", "200", "--clients", "4", "--txn-ops", "2", "--key-space-size", "10"},
		{"txn-mixed", "--total", "200", "--clients", "4", "--key-space-size", "10"},
		{"watch-latency", "--put-total", "50", "--put-rate", "200", "--streams", "2", "--watchers-per-stream", "2"},
		{"lease-keepalive", "--total", "200", "--clients", "4"},
	} {
		r := testutil.RunBinary(t, time.Minute, append(append([]string{"bench"}, args...), "--endpoints", ep)...)
		if r.Code != 0 && r.Code != 1 {
			t.Fatalf("%v: exit %d: %s", args, r.Code, r.Stderr)
		}
		for _, want := range []string{"etcdperf bench " + args[0], "Summary:", "Latency distribution:", "Verdict:"} {
			if !strings.Contains(r.Stdout, want) {
				t.Errorf("%v: no %q in\n%s", args, want, r.Stdout)
			}
		}
	}
	if n := keysUnder(t, cli, "/etcdperf/"); n != 0 {
		t.Errorf("%d keys left", n)
	}
	leases, err := cli.Leases(context.Background())
	if err != nil || len(leases.Leases) != 0 {
		t.Errorf("leases left: %v %v", leases, err)
	}
}

func TestBenchSampleCSVAndPrefix(t *testing.T) {
	ep, cli := startServer(t)
	csvPath := filepath.Join(t.TempDir(), "series.csv")
	r := testutil.RunBinary(t, time.Minute, "bench", "put", "--endpoints", ep, "--duration", "1500ms", "--rate", "400", "--clients", "4",
		"--prefix", "/etcdperf/mine", "--keep-keys", "--sample-csv", csvPath, "-o", "json")
	res := benchResult(t, r)
	if p := res.LoadParams(); p == nil || p.Prefix != "/etcdperf/mine/" || res.Bench.ServiceLatency == nil || res.Bench.Rate != 400 {
		t.Errorf("params %+v service %v", res.Params, res.Bench.ServiceLatency)
	}
	raw, err := os.ReadFile(csvPath)
	if err != nil || !strings.HasPrefix(string(raw), "t,ops,p50,p99,max,errors\n") || strings.Count(string(raw), "\n") < 2 {
		t.Errorf("sample CSV: %v\n%s", err, raw)
	}
	if n := keysUnder(t, cli, "/etcdperf/mine/"); n != 1 {
		t.Errorf("--keep-keys kept %d keys, want 1", n)
	}
	// The prefix now holds a key: a second run refuses it.
	r = testutil.RunBinary(t, time.Minute, "bench", "put", "--endpoints", ep, "--total", "10", "--prefix", "/etcdperf/mine/")
	if r.Code != 2 || !strings.Contains(r.Stderr, "already holds 1 keys") {
		t.Errorf("used prefix: exit %d, stderr %q", r.Code, r.Stderr)
	}
}

func TestBenchUnreachableEndpoint(t *testing.T) {
	closed := fmt.Sprintf("127.0.0.1:%d", testutil.FreePort(t))
	start := time.Now()
	r := testutil.RunBinary(t, 30*time.Second, "bench", "put", "--endpoints", closed, "--dial-timeout", "2s")
	if r.Code != 2 || !strings.Contains(r.Stderr, closed) || !strings.Contains(r.Stderr, "unreachable") || time.Since(start) > 10*time.Second {
		t.Errorf("refused: exit %d in %v, stderr %q", r.Code, time.Since(start), r.Stderr)
	}
	// A port that accepts and never answers: the dial timeout ends it.
	silent := testutil.SilentListener(t)
	start = time.Now()
	r = testutil.RunBinary(t, 30*time.Second, "bench", "put", "--endpoints", silent, "--dial-timeout", "1s")
	el := time.Since(start)
	if r.Code != 2 || !strings.Contains(r.Stderr, silent) || !strings.Contains(r.Stderr, "no answer") || el > 8*time.Second {
		t.Errorf("silent: exit %d in %v, stderr %q", r.Code, el, r.Stderr)
	}
	if strings.Count(strings.TrimSpace(r.Stderr), "\n") > 0 {
		t.Errorf("more than one line: %q", r.Stderr)
	}
}

// SIGINT during a run: TestInterruptCleansUp (interrupt_test.go).

// membersReady reports whether n embedded members under dir have logged
// that they serve clients.
func membersReady(dir string, n int) bool {
	logs, _ := filepath.Glob(filepath.Join(dir, "etcdperf-*", "etcdperf-*.log"))
	ready := 0
	for _, l := range logs {
		if b, err := os.ReadFile(l); err == nil && strings.Contains(string(b), "ready to serve client requests") {
			ready++
		}
	}
	return ready >= n
}

// membersIn lists the `etcdperf server` processes with data under dir.
func membersIn(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	for _, p := range processesWith(t, "--data-dir\x00"+dir) {
		if strings.Contains(p, " server ") {
			out = append(out, p)
		}
	}
	return out
}

// processesWith lists the processes whose command line (NUL-separated
// arguments) contains s.
func processesWith(t *testing.T, s string) []string {
	t.Helper()
	procs, err := filepath.Glob("/proc/[0-9]*/cmdline")
	if err != nil || len(procs) == 0 {
		t.Fatalf("cannot list processes: %v", err)
	}
	var found []string
	for _, p := range procs {
		b, err := os.ReadFile(p)
		if err == nil && strings.Contains(string(b), s) {
			found = append(found, strings.ReplaceAll(string(b), "\x00", " "))
		}
	}
	return found
}

func TestBenchUsageErrors(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"bench"}, "needs a workload"},
		{[]string{"bench", "delete"}, "unknown workload"},
		{[]string{"bench", "put", "--clients", "0"}, "--clients"},
		{[]string{"bench", "put", "--conns", "0"}, "--conns"},
		{[]string{"bench", "put", "--key-size", "2", "--key-space-size", "1000"}, "--key-size 2 cannot hold"},
		{[]string{"bench", "put", "--endpoints", "127.0.0.1:1", "--members", "3"}, "--members is for the embedded"},
		{[]string{"bench", "put", "--cacert", "x.pem"}, "need --endpoints"},
		{[]string{"bench", "range", "--consistency", "x"}, "--consistency"},
		{[]string{"bench", "txn-put", "--txn-ops", "3"}, "--txn-ops"},
		{[]string{"bench", "put", "--threshold", "nosuch=1"}, `unknown criterion "nosuch"`},
		{[]string{"bench", "put", "--limit", "nosuch=1"}, `unknown criterion "nosuch"`},
		{[]string{"bench", "range", "--limit", "x"}, "want keys per range"},
		{[]string{"bench", "put", "--endpoints", "127.0.0.1:2379", "--user", "u"}, "ETCDPERF_PASSWORD"},
		{[]string{"bench", "put", "--data-dir", "/nonexistent/dir", "--total", "1"}, "--data-dir"},
		{[]string{"bench", "put", "--total", "-1"}, "--total"},
	}
	for _, c := range cases {
		r := testutil.RunBinary(t, 30*time.Second, c.args...)
		if r.Code != 2 || !strings.Contains(r.Stderr, c.want) || strings.Contains(r.Stderr, "panic") {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and %q", c.args, r.Code, r.Stderr, c.want)
		}
	}
	for _, cmd := range [][]string{{"bench", "--help"}, {"bench", "put", "--help"}, {"bench", "watch-latency", "--help"}, {"server", "--help"}} {
		r := testutil.RunBinary(t, 30*time.Second, cmd...)
		if r.Code != 0 || !strings.Contains(r.Stdout, "Examples:") {
			t.Errorf("%v has no examples (exit %d)", cmd, r.Code)
		}
	}
}

// Members must not outlive etcdperf, even when it is killed outright.
func TestBenchMembersDieWithEtcdperf(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, testutil.Binary(t), "bench", "put", "--members", "3", "--duration", "30s", "--data-dir", dir)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for !membersReady(dir, 3) && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if len(membersIn(t, dir)) != 3 {
		t.Fatalf("want 3 member processes, have %v", membersIn(t, dir))
	}
	cmd.Process.Kill()
	cmd.Wait()
	deadline = time.Now().Add(10 * time.Second)
	for len(membersIn(t, dir)) > 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if left := membersIn(t, dir); len(left) > 0 {
		t.Errorf("members outlived a killed etcdperf: %v", left)
	}
}
