package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/etcdperf/etcdperf/internal/diagnose"
	"github.com/etcdperf/etcdperf/internal/lab"
	"github.com/etcdperf/etcdperf/internal/result"
	"github.com/etcdperf/etcdperf/internal/testutil"
)

// Faults against real members: each member is an `etcdperf server`
// process of its own on 127.0.0.1, started by the test; etcdperf reaches
// them as an external cluster through --endpoints.

// startCluster starts n member processes in a folder of the test.
func startCluster(t *testing.T, n int) *lab.Target {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	tg, err := lab.Open(ctx, lab.TargetOptions{DataDir: t.TempDir(), RunID: "faults", Members: n,
		ServerCommand: []string{testutil.Binary(t), "server"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tg.Close() })
	return tg
}

func endpointsOf(tg *lab.Target) string {
	var eps []string
	for _, m := range tg.Members() {
		eps = append(eps, m.ClientURL)
	}
	return strings.Join(eps, ",")
}

// benchInBackground runs etcdperf bench with args and returns the channel
// of its outcome; the test fails when it has not ended within timeout.
func benchInBackground(t *testing.T, timeout time.Duration, args ...string) <-chan testutil.Run {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	cmd := exec.CommandContext(ctx, testutil.Binary(t), append([]string{"bench"}, args...)...)
	done := make(chan testutil.Run, 1)
	go func() {
		defer cancel()
		done <- testutil.Wait(t, cmd, ctx)
	}()
	return done
}

// waitForKeys waits until the run's keys appear: the load is on.
func waitForKeys(t *testing.T, tg *lab.Target) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if keysUnder(t, tg.Client().Client, "/etcdperf/") > 0 {
			time.Sleep(300 * time.Millisecond) // a little load before the fault
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("the load did not start within 30s")
}

// A member killed with SIGKILL mid-run: the run goes on against the other
// two, counts the errors by gRPC code, reports the leader change, writes
// its Result and exits 1 (the leader-change check fails), without hanging.
func TestBenchMemberKilledMidRun(t *testing.T) {
	tg := startCluster(t, 3)
	leader, ok := tg.Leader()
	if !ok || leader.PID == 0 {
		t.Fatalf("no leader process: %+v", tg.Members())
	}
	out := filepath.Join(t.TempDir(), "run.json")
	// The requests the followers forwarded to the dead leader before they
	// noticed its death (etcd elects a new one within about 1s here) are
	// lost and wait for etcd's request timeout, 5s + 2 x the 1s election
	// timeout = 7s, and every client ends up holding one. Only after it do
	// requests succeed again, on the new leader: the run lasts beyond it,
	// and the command timeout is above it, or no request would succeed for
	// the whole command timeout and the stall rule would rightly end the
	// run (a CI run with etcdctl's 5s for both did).
	const duration, commandTimeout = 12 * time.Second, 10 * time.Second
	start := time.Now()
	done := benchInBackground(t, time.Minute, "put", "--endpoints", endpointsOf(tg), "--duration", duration.String(), "--rate", "200",
		"--clients", "6", "--conns", "3", "--command-timeout", commandTimeout.String(), "-o", out)
	waitForKeys(t, tg)
	if err := syscall.Kill(leader.PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	r := <-done
	el := time.Since(start)
	if r.Code != 1 {
		t.Errorf("exit %d, want 1 (the leader-change check fails): %s", r.Code, r.Stderr)
	}
	if el > duration+2*commandTimeout+10*time.Second {
		t.Errorf("a %v run took %v", duration, el)
	}
	res, err := result.ReadFile(out)
	if err != nil {
		t.Fatalf("no Result: %v", err)
	}
	if res.Error != "" || res.Bench == nil || res.Bench.Ops == 0 || res.Bench.Seconds < duration.Seconds()*0.9 {
		t.Fatalf("the run did not go on: error %q bench %+v", res.Error, res.Bench)
	}
	if len(res.Bench.Errors) == 0 {
		t.Error("no error counted for the requests to the killed member")
	}
	for k := range res.Bench.Errors {
		code, _, ok := strings.Cut(k, ":")
		if !ok || !grpcCodes[code] {
			t.Errorf("error %q is not counted under a gRPC code", k)
		}
	}
	if res.Server == nil || res.Server.LeaderChanges < 1 {
		t.Errorf("leader change not reported: %+v", res.Server)
	}
	if c, ok := diagnose.FindCheck(res, "leader_changes"); !ok || c.Status != result.StatusFail {
		t.Errorf("leader_changes check %+v", c)
	}
	if n := keysUnder(t, tg.Client().Client, "/etcdperf/"); n != 0 {
		t.Errorf("%d keys left by a run that lost a member", n)
	}
}

var grpcCodes = map[string]bool{"Canceled": true, "Unknown": true, "InvalidArgument": true, "DeadlineExceeded": true, "NotFound": true,
	"AlreadyExists": true, "PermissionDenied": true, "ResourceExhausted": true, "FailedPrecondition": true, "Aborted": true,
	"OutOfRange": true, "Unimplemented": true, "Internal": true, "Unavailable": true, "DataLoss": true, "Unauthenticated": true}

// The whole cluster stops mid-run (killed, or frozen so that connections
// hang): the run ends within --command-timeout of the last answer with one
// clear line, exit 2, and the partial Result.
func TestBenchClusterStoppedMidRun(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGKILL, syscall.SIGSTOP} {
		t.Run(sig.String(), func(t *testing.T) {
			tg := startCluster(t, 3)
			out := filepath.Join(t.TempDir(), "partial.json")
			const commandTimeout = 2 * time.Second
			done := benchInBackground(t, time.Minute, "put", "--endpoints", endpointsOf(tg), "--duration", "60s", "--rate", "200",
				"--clients", "6", "--conns", "3", "--command-timeout", commandTimeout.String(), "-o", out)
			waitForKeys(t, tg)
			stopped := time.Now()
			for _, m := range tg.Members() {
				if err := syscall.Kill(m.PID, sig); err != nil {
					t.Fatal(err)
				}
			}
			if sig == syscall.SIGSTOP {
				t.Cleanup(func() {
					for _, m := range tg.Members() {
						syscall.Kill(m.PID, syscall.SIGCONT)
					}
				})
			}
			r := <-done
			el := time.Since(stopped)
			// The stall is seen one command timeout after the last answer;
			// a frozen cluster adds one more for the last scrape and the
			// attempt to delete the keys.
			if el > 2*commandTimeout+3*time.Second {
				t.Errorf("the run ended %v after the cluster stopped, want within about --command-timeout %v", el, commandTimeout)
			}
			line := strings.TrimSpace(r.Stderr)
			if r.Code != 2 || strings.Contains(line, "\n") || !strings.Contains(line, "stopped answering") || !strings.Contains(line, tg.Members()[0].ClientURL) {
				t.Errorf("exit %d, stderr %q; want exit 2 and one line naming the endpoints", r.Code, r.Stderr)
			}
			res, err := result.ReadFile(out)
			if err != nil {
				t.Fatalf("no partial Result: %v", err)
			}
			if !strings.Contains(res.Error, "stopped answering") || res.Bench == nil || res.Bench.Ops == 0 || res.Bench.Stalled == nil || res.Verdict != result.Incomplete {
				t.Errorf("partial Result: error %q verdict %s bench %+v", res.Error, res.Verdict, res.Bench)
			}
			if _, ok := findingOf(res, "etcd_stopped_answering"); !ok {
				t.Errorf("no etcd_stopped_answering finding: %+v", res.Findings)
			}
		})
	}
}

// Every way of failing to reach etcd: one line, exit 2, within the dial
// timeout. Unreachable and silent endpoints are in
// TestBenchUnreachableEndpoint.
func TestBenchConnectionFaults(t *testing.T) {
	certs := testutil.NewCerts(t)
	stranger := testutil.NewCerts(t) // a client certificate of another CA
	dir := t.TempDir()
	tlsEP := "127.0.0.1:" + itoa(testutil.FreePort(t))
	m, err := lab.StartMember(context.Background(), lab.MemberConfig{
		Name: "tls", DataDir: filepath.Join(dir, "tls"), ClientURL: "https://" + tlsEP,
		PeerURL: "http://127.0.0.1:" + itoa(testutil.FreePort(t)), LogFile: filepath.Join(dir, "tls.log"),
		TLS: &lab.ServerTLS{CertFile: certs.ServerCert, KeyFile: certs.ServerKey, TrustedCAFile: certs.CA, ClientCertAuth: true},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()

	authEP, cli := startServer(t)
	testutil.EnableAuth(t, cli, "bench", "right-pw", "/allowed/")

	tlsArgs := func(ca, cert, key string) []string {
		return []string{"--endpoints", tlsEP, "--cacert", ca, "--cert", cert, "--key", key}
	}
	cases := []struct {
		name     string
		args     []string
		password string
		want     []string
	}{
		{"wrong CA", tlsArgs(certs.OtherCA, certs.ClientCert, certs.ClientKey), "", []string{tlsEP, "server certificate not trusted", "--cacert"}},
		{"wrong client cert", tlsArgs(certs.CA, stranger.ClientCert, stranger.ClientKey), "", []string{tlsEP, "client certificate rejected", stranger.ClientCert}},
		{"no client cert", []string{"--endpoints", tlsEP, "--cacert", certs.CA}, "", []string{"client certificate rejected", "--cert"}},
		{"wrong password", []string{"--endpoints", authEP, "--user", "bench"}, "wrong-pw", []string{authEP, "authentication failed", `"bench"`}},
		{"no permission on the prefix", []string{"--endpoints", authEP, "--user", "bench", "--prefix", "/etcdperf/denied/"}, "right-pw",
			[]string{"may not read and write under /etcdperf/denied/", "grant-permission"}},
	}
	const dialTimeout = 2 * time.Second
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, testutil.Binary(t), append(append([]string{"bench", "put", "--total", "10"}, c.args...), "--dial-timeout", dialTimeout.String())...)
			cmd.Env = append(os.Environ(), "ETCDPERF_PASSWORD="+c.password)
			start := time.Now()
			r := testutil.Wait(t, cmd, ctx)
			el := time.Since(start)
			line := strings.TrimSpace(r.Stderr)
			if r.Code != 2 || strings.Contains(line, "\n") || r.Stdout != "" {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit 2 and one line", r.Code, r.Stdout, r.Stderr)
			}
			for _, w := range c.want {
				if !strings.Contains(line, w) {
					t.Errorf("stderr %q lacks %q", line, w)
				}
			}
			if el > dialTimeout+3*time.Second {
				t.Errorf("took %v with --dial-timeout %v", el, dialTimeout)
			}
			if c.password != "" && strings.Contains(r.Stderr, c.password) {
				t.Errorf("the password is in the error: %q", r.Stderr)
			}
		})
	}
	if n := keysUnder(t, rootClient(t, authEP), "/"); n != 0 {
		t.Errorf("%d keys written by runs that could not start", n)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// rootClient is a client of etcd's root user (testutil.EnableAuth).
func rootClient(t *testing.T, ep string) *clientv3.Client {
	t.Helper()
	c, err := clientv3.New(clientv3.Config{Endpoints: []string{ep}, Username: "root", Password: "rootpw", DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// The embedded etcd's --data-dir on storage it cannot use: full (a small
// tmpfs), not writable (run as nobody), read-only (a read-only tmpfs).
// One line, exit 2, nothing left behind. `disk` on the same faults is in
// TestDiskPermissionDenied and TestDiskReadOnlyAndFull.
func TestBenchDataDirFaults(t *testing.T) {
	full := testutil.MountTmpfs(t, "8m", false)
	ro := testutil.MountTmpfs(t, "8m", true)
	denied := t.TempDir()
	os.Chmod(denied, 0o755)
	os.Chmod(filepath.Dir(denied), 0o755) // t.TempDir's parent is private to root
	cases := []struct {
		name, dir string
		nobody    bool
		want      string
	}{
		{"ENOSPC", full, false, "MiB free"},
		{"EROFS", ro, false, "read-only file system"},
		{"EACCES", denied, true, "permission denied"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, testutil.Binary(t), "bench", "put", "--total", "10", "--data-dir", c.dir)
			if c.nobody {
				testutil.RunAsNobody(t, cmd)
			}
			r := testutil.Wait(t, cmd, ctx)
			line := strings.TrimSpace(r.Stderr)
			if r.Code != 2 || strings.Contains(line, "\n") || !strings.Contains(line, c.want) || !strings.Contains(line, c.dir) || strings.Contains(line, "panic") {
				t.Errorf("exit %d, stderr %q; want exit 2 and one line naming %s and %q", r.Code, r.Stderr, c.dir, c.want)
			}
			assertEmptyDir(t, c.dir)
		})
	}
}

// A member on a slow disk (server --slow-fsync) that is killed outright
// still unmounts its slow view: its slowdisk process stops with it.
func TestSlowMemberKilledUnmounts(t *testing.T) {
	dir := t.TempDir()
	tg := startSlowMembers(t, dir, 1, 15*time.Millisecond)
	if n := len(slowMountsUnder(t, dir)); n != 1 {
		t.Fatalf("%d slow mounts, want 1", n)
	}
	if err := syscall.Kill(tg.Members()[0].PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for len(slowMountsUnder(t, dir)) > 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if left := slowMountsUnder(t, dir); len(left) > 0 {
		t.Errorf("the slow mount outlived its killed member: %v", left)
	}
	if err := tg.Close(); err != nil {
		t.Fatal(err)
	}
	assertEmptyDir(t, dir)
}
