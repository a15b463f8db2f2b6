package e2e

import (
	"bufio"
	"context"
	"fmt"
	"html"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/etcdperf/etcdperf/internal/cgroup"
	"github.com/etcdperf/etcdperf/internal/cluster"
	"github.com/etcdperf/etcdperf/internal/lab"
	"github.com/etcdperf/etcdperf/internal/render"
	"github.com/etcdperf/etcdperf/internal/result"
	"github.com/etcdperf/etcdperf/internal/testutil"
	"github.com/etcdperf/etcdperf/internal/units"
)

// liveKubeadmRoot builds a kubeadm control-plane node's files under a
// temporary root (on a disk with time to spare where the machine can make
// one: doctor --node judges the disk under it) and runs the member its manifest describes: TLS with
// client certificates under the root's /etc/kubernetes/pki/etcd, its data
// in the root's /var/lib/etcd. It returns the root.
func liveKubeadmRoot(t *testing.T) string {
	t.Helper()
	return liveKubeadmRootOn(t, testutil.QuietDirOr(t, "256M"), 0)
}

// liveKubeadmRootOn is liveKubeadmRoot in root, with the root's /var/lib
// on a slow view of a directory of its own (etcdperf slowdisk: every fsync
// slowFsync longer) when slowFsync is positive.
func liveKubeadmRootOn(t *testing.T, root string, slowFsync time.Duration) string {
	t.Helper()
	root, _ = liveKubeadmNode(t, root, slowFsync)
	return root
}

// liveKubeadmNode is liveKubeadmRootOn that also returns the member's
// client endpoint (host:port, TLS with the node's client certificate).
func liveKubeadmNode(t *testing.T, root string, slowFsync time.Duration) (string, string) {
	t.Helper()
	return liveKubeadmQuota(t, root, slowFsync, 0)
}

// liveKubeadmQuota is liveKubeadmNode whose member runs, and whose
// manifest says, --quota-backend-bytes=quota (0: etcd's default).
func liveKubeadmQuota(t *testing.T, root string, slowFsync time.Duration, quota int64) (string, string) {
	t.Helper()
	if slowFsync > 0 {
		lib := filepath.Join(root, "var/lib")
		if err := os.MkdirAll(lib, 0o755); err != nil {
			t.Fatal(err)
		}
		startSlowdisk(t, t.TempDir(), lib, "--fsync-delay", slowFsync.String())
	}
	certs := testutil.NewCerts(t)
	pki := filepath.Join(root, "etc/kubernetes/pki/etcd")
	copyInto(t, pki, map[string]string{
		certs.CA: "ca.crt", certs.ServerCert: "server.crt", certs.ServerKey: "server.key",
		certs.ClientCert: "healthcheck-client.crt", certs.ClientKey: "healthcheck-client.key",
	})
	ep := "127.0.0.1:" + itoa(testutil.FreePort(t))
	var more []string
	if quota > 0 {
		more = append(more, "--quota-backend-bytes="+strconv.FormatInt(quota, 10))
	}
	manifest := kubeadmEtcdManifest(t, "https://"+ep, "https://"+ep, more...)
	mf := filepath.Join(root, "etc/kubernetes/manifests/etcd.yaml")
	if err := os.MkdirAll(filepath.Dir(mf), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(mf, manifest, 0o644); err != nil {
		t.Fatal(err)
	}
	logDir := filepath.Join(root, "var/log")
	if err := os.MkdirAll(logDir, 0o755); err != nil {
		t.Fatal(err)
	}
	m, err := lab.StartMember(context.Background(), lab.MemberConfig{
		Name: "cp-1", DataDir: filepath.Join(root, "var/lib/etcd"), ClientURL: "https://" + ep,
		PeerURL: "http://127.0.0.1:" + itoa(testutil.FreePort(t)), LogFile: filepath.Join(logDir, "etcd.log"),
		TLS: &lab.ServerTLS{CertFile: filepath.Join(pki, "server.crt"), KeyFile: filepath.Join(pki, "server.key"),
			TrustedCAFile: filepath.Join(pki, "ca.crt"), ClientCertAuth: true},
		QuotaBackendBytes: quota,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return root, ep
}

// startNodeLoad puts rate puts/s on the kubeadm member at ep under root
// (its client certificate) for d, from an etcdperf bench process of its
// own, as the node's API server would write; it returns the process's
// exit, to wait for.
func startNodeLoad(t *testing.T, root, ep string, rate float64, d time.Duration) <-chan testutil.Run {
	t.Helper()
	pki := filepath.Join(root, "etc/kubernetes/pki/etcd")
	ctx, cancel := context.WithTimeout(context.Background(), d+time.Minute)
	cmd := exec.CommandContext(ctx, testutil.Binary(t), "bench", "put", "--endpoints", "https://"+ep,
		"--cacert", filepath.Join(pki, "ca.crt"), "--cert", filepath.Join(pki, "healthcheck-client.crt"), "--key", filepath.Join(pki, "healthcheck-client.key"),
		"--rate", strconv.FormatFloat(rate, 'f', -1, 64), "--duration", d.String(), "--clients", "4", "--conns", "1", "-q", "-o", "json")
	done := make(chan testutil.Run, 1)
	go func() {
		defer cancel()
		done <- testutil.Wait(t, cmd, ctx)
	}()
	return done
}

// waitLoad checks that the load of startNodeLoad ran.
func waitLoad(t *testing.T, done <-chan testutil.Run) {
	t.Helper()
	r := <-done
	if r.Code != 0 && r.Code != 1 {
		t.Errorf("the load on the member: exit %d, stderr %q", r.Code, r.Stderr)
	}
}

// copyInto copies each file (key) into dir under its new name (value).
func copyInto(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for src, dst := range files {
		b, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, dst), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// entries lists the names under dir (recursively), as relative paths.
func entries(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		out = append(out, rel)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// doctor --node finds the kubeadm member under --root, reaches it with
// the node's certificates, watches it without load, probes its disk beside
// the data dir and leaves nothing there.
func TestDoctorNode(t *testing.T) {
	root := liveKubeadmRoot(t)
	parent := filepath.Join(root, "var/lib")
	beside := entries(t, parent)
	var inside []string
	for _, e := range beside {
		if strings.HasPrefix(e, "etcd/member/snap") || strings.HasPrefix(e, "etcd/member/wal") {
			inside = append(inside, e)
		}
	}
	testutil.Binary(t) // built now, so that the run starts right after the log is written
	// kubelet's pod log (CRI): a slow apply long before the run, and one
	// stamped within it (the run lasts over 7s from its start).
	podLog := filepath.Join(root, "var/log/pods/kube-system_etcd-cp-1_4d2a/etcd/0.log")
	if err := os.MkdirAll(filepath.Dir(podLog), 0o755); err != nil {
		t.Fatal(err)
	}
	line := func(at time.Time, took string) string {
		ts := at.UTC().Format("2006-01-02T15:04:05.000000000Z")
		return ts + ` stderr F {"level":"warn","ts":"` + ts + `","caller":"txn/util.go:93","msg":"apply request took too long","took":"` + took +
			`","expected-duration":"100ms","prefix":"","request":"put:<key:\"/registry/leases/kube-node-lease/cp-1\" value_size:512 >","response":"size:5"}` + "\n"
	}
	if err := os.WriteFile(podLog, []byte(line(time.Now().Add(-2*time.Hour), "2.5s")+line(time.Now().Add(4*time.Second), "350ms")), 0o644); err != nil {
		t.Fatal(err)
	}
	cwd := t.TempDir()
	// The member is idle: its own fsyncs cannot judge its disk, so the
	// probe runs after the window, at its default pace (50/s, 10s).
	r := runEnv(t, time.Minute, cwd, nil, "doctor", "--node", "--root", root, "--duration", "5s", "--no-report", "-o", "json")
	if r.Code != 0 {
		t.Fatalf("exit %d, stderr %q", r.Code, r.Stderr)
	}
	res := decodeResult(t, r.Stdout)
	logText(t, res)
	if res.Verdict != result.Pass && res.Verdict != result.Warn {
		t.Errorf("verdict %s", res.Verdict)
	}
	if len(res.Runs) != 1 {
		t.Fatalf("%d runs", len(res.Runs))
	}
	run := res.Runs[0]
	wantName := "member cp-1 (kubeadm, /etc/kubernetes/manifests/etcd.yaml)"
	if run.Name != wantName || res.Doctor.Targets[0].Name != wantName {
		t.Errorf("name %q, target %q; want %q", run.Name, res.Doctor.Targets[0].Name, wantName)
	}
	if !strings.HasPrefix(res.Summary, "member cp-1: ") {
		t.Errorf("summary %q does not name the member", res.Summary)
	}
	if run.Bench != nil {
		t.Errorf("a load ran without --load: %+v", run.Bench)
	}
	if run.Disk == nil || run.Disk.SyncLatency == nil || run.Disk.SyncLatency.Count == 0 {
		t.Fatalf("no disk probe: %+v", run.Disk)
	}
	// Paced: each write starts no sooner than 1/50 s after the one before.
	if d := run.Disk; d.Rate != 50 || float64(d.Ops) > d.Rate*d.Seconds+1 || d.Stopped != "" {
		t.Errorf("probe beside an idle member: %d writes in %.2fs at a pace of %g/s, stopped %q; want at most rate*seconds+1, not stopped", d.Ops, d.Seconds, d.Rate, d.Stopped)
	}
	if p := res.Doctor.Targets[0].DiskProbe; !strings.Contains(p, "ran at most 50 fdatasyncs/s") || !strings.Contains(p, "too few to judge its disk") {
		t.Errorf("disk_probe %q: want why the probe ran", p)
	}
	if run.Server == nil || len(run.Server.Processes) != 1 || run.Server.Processes[0].PID != os.Getpid() {
		t.Errorf("the member's process was not measured: %+v", run.Server)
	}
	if run.Target == nil || len(run.Target.Members) != 1 || run.Target.Members[0].Name != "cp-1" {
		t.Errorf("target %+v", run.Target)
	}
	if l := run.Logs; l == nil || l.Lines != 2 || l.OutsideWindow != 1 || nodeLog(run).LogFile != podLog {
		t.Errorf("the member's log over the run: %+v, params %v", l, run.Params)
	} else {
		var events int64
		for _, n := range l.Classes {
			events += n
		}
		if events != 1 {
			t.Errorf("classes %v: want the one slow apply of the run", l.Classes)
		}
		found := false
		for _, f := range run.Findings {
			found = found || f.ID == "logs_slow_requests"
			if !contains(f.Members, "cp-1") {
				t.Errorf("finding %s does not name the member: %v", f.ID, f.Members)
			}
		}
		if !found {
			t.Errorf("no finding from the log's slow apply: %+v", run.Findings)
		}
	}
	if !strings.Contains(r.Stderr, "judging "+wantName+" at https://") {
		t.Errorf("stderr %q", r.Stderr)
	}
	// Nothing left beside the data dir; etcd's own files all still there.
	after := entries(t, parent)
	for _, e := range after {
		if strings.Contains(e, "etcdperf") {
			t.Errorf("left behind: %s", e)
		}
	}
	for _, e := range inside {
		if !contains(after, e) {
			t.Errorf("%s vanished from the data dir", e)
		}
	}
	var top []string
	for _, e := range after {
		if !strings.Contains(e, string(filepath.Separator)) {
			top = append(top, e)
		}
	}
	if !reflect.DeepEqual(top, []string{".", "etcd"}) {
		t.Errorf("beside the data dir: %v", top)
	}
	assertEmptyDir(t, cwd)
}

func contains(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}

// doctor --node on a node without etcd, or whose certificates are gone,
// says so in one line before measuring.
func TestDoctorNodeRefusals(t *testing.T) {
	empty := t.TempDir()
	cwd := t.TempDir()
	r := runEnv(t, 30*time.Second, cwd, nil, "doctor", "--node", "--root", empty)
	if r.Code != 2 || strings.Count(strings.TrimSpace(r.Stderr), "\n") != 0 || !strings.Contains(r.Stderr, "no etcd found on this node under "+empty) {
		t.Errorf("no etcd: exit %d, stderr %q", r.Code, r.Stderr)
	}
	root := kubeadmRoot(t)
	os.Remove(filepath.Join(root, "etc/kubernetes/pki/etcd/ca.crt"))
	r = runEnv(t, 30*time.Second, cwd, nil, "doctor", "--node", "--root", root)
	if r.Code != 2 || strings.Count(strings.TrimSpace(r.Stderr), "\n") != 0 ||
		!strings.Contains(r.Stderr, filepath.Join(root, "etc/kubernetes/pki/etcd/ca.crt")) || !strings.Contains(r.Stderr, "--cacert") {
		t.Errorf("missing CA: exit %d, stderr %q", r.Code, r.Stderr)
	}
	// Certificates back, the data dir there, but no room for the probe.
	if err := os.WriteFile(filepath.Join(root, "etc/kubernetes/pki/etcd/ca.crt"), []byte("ca"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(root, "var/lib/etcd"), 0o700); err != nil {
		t.Fatal(err)
	}
	r = runEnv(t, 30*time.Second, cwd, nil, "doctor", "--node", "--root", root, "--disk-size", "900t")
	if r.Code != 2 || strings.Count(strings.TrimSpace(r.Stderr), "\n") != 0 || !strings.Contains(r.Stderr, "the disk probe beside "+filepath.Join(root, "var/lib/etcd")) ||
		!strings.Contains(r.Stderr, "free") {
		t.Errorf("no room: exit %d, stderr %q", r.Code, r.Stderr)
	}
	if left := entries(t, filepath.Join(root, "var/lib")); len(left) != 2 {
		t.Errorf("beside the data dir: %v", left)
	}
	r = runEnv(t, 30*time.Second, cwd, nil, "doctor", "--node", "--root", root, "--data-dir", cwd)
	if r.Code != 2 || !strings.Contains(r.Stderr, "--data-dir cannot be used with --node") {
		t.Errorf("--data-dir: exit %d, stderr %q", r.Code, r.Stderr)
	}
	help := testutil.RunBinary(t, 30*time.Second, "doctor", "--help")
	// The prose is compared with its lines joined: how it wraps is not what
	// it says.
	prose := strings.Join(strings.Fields(help.Stdout), " ")
	for _, want := range []string{"sudo etcdperf doctor --node\n", "--root string", "never inside member/"} {
		if !strings.Contains(help.Stdout, want) && !strings.Contains(prose, want) {
			t.Errorf("doctor --help lacks %q", want)
		}
	}
	assertEmptyDir(t, cwd)
}

// doctor --node --load adds check perf's load to the member found on the
// node, judged as doctor --endpoints --load is, and deletes its keys. It
// states the stall of the member's next defragmentation as the watch
// without load does, from the member's database size before the load and
// the defragmentation it did, writing nothing beside it; the HTML report
// draws it.
func TestDoctorNodeLoad(t *testing.T) {
	root, ep := liveKubeadmNode(t, testutil.QuietDirOr(t, "256M"), 0)
	pki := filepath.Join(root, "etc/kubernetes/pki/etcd")
	dctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := cluster.DefragmentAll(dctx, cluster.ConnOptions{Endpoints: []string{"https://" + ep}, CACert: filepath.Join(pki, "ca.crt"),
		Cert: filepath.Join(pki, "healthcheck-client.crt"), Key: filepath.Join(pki, "healthcheck-client.key")}); err != nil {
		t.Fatal(err)
	}
	cwd := t.TempDir()
	r := runEnv(t, time.Minute, cwd, nil, "doctor", "--node", "--root", root, "--load", "s", "--duration", "3s",
		"--disk-runtime", "0", "--no-report", "-o", "json")
	if r.Code != 0 && r.Code != 1 {
		t.Fatalf("exit %d, stderr %q", r.Code, r.Stderr)
	}
	res := decodeResult(t, r.Stdout)
	run := res.Runs[0]
	if run.Name != "member cp-1 (kubeadm, /etc/kubernetes/manifests/etcd.yaml)" || run.Bench == nil || run.Bench.Ops == 0 || run.Perf == nil || run.Perf.Profile != "s" {
		t.Fatalf("name %q bench %+v perf %+v", run.Name, run.Bench, run.Perf)
	}
	if !strings.Contains(strings.Join(run.Bench.Notes, "\n"), "deleted the run's") {
		t.Errorf("the run's keys were not deleted: %v", run.Bench.Notes)
	}
	if run.Server == nil || run.Server.WALFsync == nil || run.Server.WALFsync.Count == 0 {
		t.Errorf("etcd's WAL fsyncs under the load were not read: %+v", run.Server)
	}
	if run.Disk != nil || len(entries(t, filepath.Join(root, "var/lib"))) == 0 {
		t.Errorf("--disk-runtime 0 still probed: %+v", run.Disk)
	}
	for _, e := range entries(t, filepath.Join(root, "var/lib")) {
		if strings.Contains(e, "etcdperf") {
			t.Errorf("left behind: %s", e)
		}
	}
	assertEmptyDir(t, cwd)

	e := run.ExpectedDefrag
	if e == nil {
		t.Fatal("no expected defragmentation stall under --load")
	}
	if e.Member != "cp-1" || e.DBSize <= 0 || !strings.Contains(e.DBSizeFrom, "before the load") || e.Rehearsal != nil {
		t.Errorf("expected defragmentation %+v: want cp-1's database size in use before the load, no rehearsal", e)
	}
	// The member runs in this test's process, whose metrics count every
	// in-process member's defragmentations: at least the one above.
	if e.Past == nil || e.Past.Count < 1 || e.Seconds <= 0 || e.Seconds != e.Past.Seconds/e.Past.Count || e.Missing != "" {
		t.Errorf("the stall from cp-1's own defragmentation: %+v, past %+v", e, e.Past)
	}
	var stated *result.Finding
	for i, f := range run.Findings {
		if f.ID == "defrag_stall_expected" {
			stated = &run.Findings[i]
		}
	}
	if stated == nil || !strings.Contains(stated.Title, "cp-1") || !strings.Contains(stated.Recommendation, "followers first") {
		t.Errorf("finding %+v: want the stall on cp-1 with etcd's advice", stated)
	}

	// The report draws it: the member, its size and its own
	// defragmentation, and what to do.
	out := t.TempDir()
	in := filepath.Join(out, "node.json")
	if err := os.WriteFile(in, []byte(r.Stdout), 0o600); err != nil {
		t.Fatal(err)
	}
	if rr := runEnv(t, time.Minute, out, nil, "report", in, "-o", "node.html"); rr.Code != 0 {
		t.Fatalf("report: exit %d, stderr %q", rr.Code, rr.Stderr)
	}
	page, err := os.ReadFile(filepath.Join(out, "node.html"))
	if err != nil {
		t.Fatal(err)
	}
	sec := string(page)
	if i := strings.Index(sec, `<section id="defrag">`); i >= 0 {
		sec = sec[i:]
		sec = sec[:strings.Index(sec, "</section>")]
	} else {
		t.Fatalf("no defragmentation section in the report")
	}
	for _, want := range []string{"member cp-1, its data in " + run.Env.Dir, html.EscapeString(units.Bytes(e.DBSize)), units.Seconds(e.Seconds), "etcd_disk_backend_defrag_duration_seconds",
		"followers first", "lease renew deadline"} {
		if !strings.Contains(sec, want) {
			t.Errorf("the report's defragmentation section lacks %q:\n%s", want, sec)
		}
	}
}

// Ctrl-C during doctor --node's disk probe removes the probe's folder
// beside the data dir and writes the partial Result.
func TestDoctorNodeInterrupted(t *testing.T) {
	// A probe too large for a RAM disk, interrupted: nothing is judged.
	root := liveKubeadmRootOn(t, t.TempDir(), 0)
	parent := filepath.Join(root, "var/lib")
	out := filepath.Join(t.TempDir(), "partial.json")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, testutil.Binary(t), "doctor", "--node", "--root", root, "--duration", "5s",
		"--disk-runtime", "20s", "--disk-size", "400m", "--no-report", "-o", out)
	done := make(chan testutil.Run, 1)
	go func() { done <- testutil.Wait(t, cmd, ctx) }()
	deadline := time.Now().Add(30 * time.Second)
	for {
		m, _ := filepath.Glob(filepath.Join(parent, ".etcdperf-probe-*", "*"))
		if len(m) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the disk probe did not start beside the data dir within 30s")
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(500 * time.Millisecond)
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	r := <-done
	if r.Code != 2 || !strings.Contains(r.Stderr, "interrupted") {
		t.Errorf("exit %d, stderr %q; want 2 and 'interrupted'", r.Code, r.Stderr)
	}
	res, err := result.ReadFile(out)
	if err != nil {
		t.Fatalf("no partial Result: %v", err)
	}
	if res.Verdict != result.Incomplete || len(res.Runs) != 1 || res.Runs[0].Disk == nil || res.Runs[0].Disk.Ops == 0 {
		t.Errorf("verdict %q, runs %d", res.Verdict, len(res.Runs))
	}
	for _, e := range entries(t, parent) {
		if strings.Contains(e, "etcdperf") {
			t.Errorf("left behind: %s", e)
		}
	}
}

// A node whose etcd data dir is on a slow disk (every fsync 15ms longer,
// over etcd's 10ms WAL fsync limit): doctor --node probes that disk beside
// the data dir and names the disk, with no other cause.
//
// The member writes 20 puts/s meanwhile, too few in the 3s window (60) to
// judge its disk by its own fsyncs, so the probe runs; but each of those
// fsyncs takes over 15ms, and the probe yields at once: the guard stops it
// long before its 10s.
func TestDoctorNodeSlowDisk(t *testing.T) {
	root, ep := liveKubeadmNode(t, t.TempDir(), 15*time.Millisecond)
	cwd := t.TempDir()
	load := startNodeLoad(t, root, ep, 20, 20*time.Second)
	r := runEnv(t, time.Minute, cwd, nil, "doctor", "--node", "--root", root, "--duration", "3s", "--no-report", "-o", "json")
	waitLoad(t, load)
	if r.Code != 1 {
		t.Fatalf("exit %d (want 1, a failed verdict), stderr %q", r.Code, r.Stderr)
	}
	res := decodeResult(t, r.Stdout)
	if res.Verdict != result.Fail || len(res.Runs) != 1 {
		t.Fatalf("verdict %s, %d runs", res.Verdict, len(res.Runs))
	}
	run := res.Runs[0]
	if run.Disk == nil || run.Disk.SyncLatency == nil || run.Disk.SyncLatency.P99 < 0.015 {
		t.Fatalf("the probe beside the data dir did not measure the slow disk: %+v", run.Disk)
	}
	if d := run.Disk; !strings.Contains(d.Stopped, "WAL fsync p99 over the last") || d.Seconds > 6 {
		t.Errorf("the probe ran %.1fs of its 10s, stopped %q: want it stopped by the member's slow fsyncs", d.Seconds, d.Stopped)
	}
	if f, ok := findingOf(&run, "disk_too_slow"); !ok || f.Severity != result.Critical {
		t.Errorf("no critical disk_too_slow: %+v", run.Findings)
	}
	for _, f := range run.Findings {
		if f.Cause != "" && f.Cause != result.CauseDisk {
			t.Errorf("%s blames %s on a slow disk: %s", f.ID, f.Cause, f.Title)
		}
	}
	if row := res.Doctor.Targets[0]; row.LimitedBy != "disk" {
		t.Errorf("limited by %q, want disk", row.LimitedBy)
	}
	t.Logf("verdict %s: %s", res.Verdict, res.Summary)
	if !strings.HasPrefix(res.Summary, "member cp-1: ") || !strings.Contains(res.Summary, "disk") {
		t.Errorf("summary %q", res.Summary)
	}
	for _, e := range entries(t, filepath.Join(root, "var/lib")) {
		if strings.Contains(e, "etcdperf") {
			t.Errorf("left behind: %s", e)
		}
	}
	assertEmptyDir(t, cwd)
}

// The issue: doctor --node wrote 22 MiB with an fdatasync every 2300
// bytes beside a production member, competing with its WAL for the same
// device. A member busy enough that its own WAL fsyncs judge its disk (200
// puts/s, over 300 fsyncs in the 4s window) gets no probe: no folder
// beside its data dir ever appears, and doctor's process writes nothing to
// storage (/proc/PID/io's write_bytes).
func TestDoctorNodeBusyMemberNoProbe(t *testing.T) {
	root, ep := liveKubeadmNode(t, testutil.QuietDirOr(t, "256M"), 0)
	parent := filepath.Join(root, "var/lib")
	load := startNodeLoad(t, root, ep, 200, 12*time.Second)
	time.Sleep(2 * time.Second) // the load under way before the window
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, testutil.Binary(t), "doctor", "--node", "--root", root, "--duration", "4s", "--no-report", "-o", "json")
	cmd.Dir = t.TempDir()
	done := make(chan testutil.Run, 1)
	go func() { done <- testutil.Wait(t, cmd, ctx) }()
	var (
		written   = "no reading"
		probeSeen bool
		r         testutil.Run
	)
watch:
	for {
		select {
		case r = <-done:
			break watch
		case <-time.After(50 * time.Millisecond):
		}
		if m, _ := filepath.Glob(filepath.Join(parent, ".etcdperf-probe-*")); len(m) > 0 {
			probeSeen = true
		}
		if cmd.Process != nil {
			if b, err := os.ReadFile("/proc/" + strconv.Itoa(cmd.Process.Pid) + "/io"); err == nil {
				for _, l := range strings.Split(string(b), "\n") {
					if v, ok := strings.CutPrefix(l, "write_bytes: "); ok {
						written = v
					}
				}
			}
		}
	}
	waitLoad(t, load)
	if r.Code != 0 && r.Code != 1 {
		t.Fatalf("exit %d, stderr %q", r.Code, r.Stderr)
	}
	res := decodeResult(t, r.Stdout)
	run := res.Runs[0]
	row := res.Doctor.Targets[0]
	t.Logf("disk probe: %s; etcd's WAL fsyncs in the window: %+v", row.DiskProbe, run.Server.WALFsync)
	if run.Disk != nil || probeSeen || !strings.HasPrefix(row.DiskProbe, "not run: the member's own") {
		t.Errorf("a probe beside a busy member: disk %+v, folder seen %v, disk_probe %q", run.Disk, probeSeen, row.DiskProbe)
	}
	if written != "0" {
		t.Errorf("doctor --node's process wrote %s bytes to storage; want 0", written)
	}
	if run.Server == nil || run.Server.WALFsync == nil || run.Server.WALFsync.Count < 300 {
		t.Fatalf("the member's own fsyncs were not read: %+v", run.Server)
	}
	// Its write demand over the window is the load's rate. etcd counts a
	// proposal when it commits and a put when it applies it: at each end
	// of the window, up to the load's 4 clients' puts may fall on either
	// side of a scrape (a CI run counted one put more than proposals).
	if d := run.Server.Demand; d == nil || d.Puts < 180 || d.Puts > 220 || (d.Puts-d.ProposalsCommitted)*d.Seconds > 4 {
		t.Errorf("write demand %+v: want ~200 puts/s (the load's rate, within 10%%), as many proposals, give or take the 4 clients' requests in flight", d)
	}
}

// liveConfigRoot builds a node whose etcd is configured by an etcd YAML
// config file at file (k3s' and RKE2's db/etcd/config, or a systemd
// etcd's /etc/etcd/etcd.conf.yml) under a temporary root, its server
// certificates in tlsDir, its data in dataDir, and runs that member (TLS,
// client certificates required). The client certificate is written as
// clientCert/clientKey in tlsDir when they are given. It returns the root,
// the test's certificates and the member's log file.
func liveConfigRoot(t *testing.T, file, tlsDir, dataDir, clientCert, clientKey string) (string, testutil.Certs, string) {
	t.Helper()
	root := testutil.QuietDirOr(t, "256M")
	certs := testutil.NewCerts(t)
	tls := filepath.Join(root, tlsDir)
	files := map[string]string{certs.CA: "server-ca.crt", certs.ServerCert: "server.crt", certs.ServerKey: "server.key"}
	if clientCert != "" {
		files[certs.ClientCert], files[certs.ClientKey] = clientCert, clientKey
	}
	copyInto(t, tls, files)
	ep := "127.0.0.1:" + itoa(testutil.FreePort(t))
	// Timers of its own, as its configuration and the member have them.
	conf := "name: node-a\ndata-dir: " + dataDir + "\nlisten-client-urls: https://" + ep + "\nheartbeat-interval: 200\nclient-transport-security:\n" +
		"  cert-file: " + tlsDir + "/server.crt\n  key-file: " + tlsDir + "/server.key\n  trusted-ca-file: " + tlsDir + "/server-ca.crt\n  client-cert-auth: true\n"
	if err := os.MkdirAll(filepath.Join(root, filepath.Dir(file)), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, file), []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	logFile := filepath.Join(t.TempDir(), "etcd.log")
	m, err := lab.StartMember(context.Background(), lab.MemberConfig{
		Name: "node-a", DataDir: filepath.Join(root, dataDir), ClientURL: "https://" + ep,
		PeerURL: "http://127.0.0.1:" + itoa(testutil.FreePort(t)), LogFile: logFile, HeartbeatMs: 200,
		TLS: &lab.ServerTLS{CertFile: filepath.Join(tls, "server.crt"), KeyFile: filepath.Join(tls, "server.key"),
			TrustedCAFile: filepath.Join(tls, "server-ca.crt"), ClientCertAuth: true},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return root, certs, logFile
}

// doctor --node names a member whose cgroup caps its writes, under the
// load the user asked for by name (--load): its WAL fsyncs wait for the
// cap's next slot while its device answers fast, so the cap is named, not
// its disk. The member is a process of its own (a systemd etcd, plain
// HTTP), so that the cap holds it and not the test.
func TestDoctorNodeIOPSCap(t *testing.T) {
	if err := cgroup.Host.CanLimit(); err != nil {
		t.Skipf("skipped: %v", err)
	}
	root := testutil.QuietDirOr(t, "256M")
	dataDir := "/var/lib/etcd/default"
	cfg := lab.MemberConfig{Name: "node-a", DataDir: filepath.Join(root, dataDir), ClientURL: "http://127.0.0.1:" + itoa(testutil.FreePort(t)),
		PeerURL: "http://127.0.0.1:" + itoa(testutil.FreePort(t)), LogFile: filepath.Join(t.TempDir(), "etcd.log"), Fault: lab.Fault{IOPSLimit: 150}}
	conf := "name: node-a\ndata-dir: " + dataDir + "\nlisten-client-urls: " + cfg.ClientURL + "\n"
	if err := os.MkdirAll(filepath.Join(root, "etc/etcd"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "etc/etcd/etcd.conf.yml"), []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	// The member stops on SIGTERM and leaves its cgroup; killed, it
	// could not (a later test finds no group left before it).
	member := exec.Command(testutil.Binary(t), append([]string{"server", "--exit-with-parent"}, cfg.Args()...)...)
	out, err := member.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := member.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		done := make(chan error, 1)
		go func() { done <- member.Wait() }()
		member.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
			if left := ownGroups(t); len(left) > 0 {
				cgroup.Host.RemoveStale()
				t.Errorf("the member stopped by SIGTERM left its cgroup behind: %v", left)
			}
		case <-time.After(30 * time.Second):
			member.Process.Kill()
			<-done
			cgroup.Host.RemoveStale()
			t.Error("the member did not stop within 30s of SIGTERM")
		}
	})
	if line, err := bufio.NewReader(out).ReadString('\n'); err != nil || !strings.HasPrefix(line, lab.ReadyLine) {
		t.Fatalf("the member did not start: %q, %v", line, err)
	}
	r := runEnv(t, time.Minute, t.TempDir(), nil, "doctor", "--node", "--root", root, "--load", "s", "--duration", "5s",
		"--disk-runtime", "0", "--no-report", "-o", "json")
	if r.Code != 0 && r.Code != 1 {
		t.Fatalf("exit %d, stderr %q", r.Code, r.Stderr)
	}
	run := decodeResult(t, r.Stdout).Runs[0]
	if run.Server == nil || len(run.Server.Processes) != 1 || run.Server.Processes[0].IOPSCap != 150 || run.Server.Processes[0].CappedWriteIOPS < 100 {
		t.Fatalf("the member's cap and its writes under it were not read: %+v", run.Server)
	}
	got := causesOf(&run)
	if len(got) != 1 || fmt.Sprint(got[result.CauseIOPSCap]) != "[node-a]" {
		t.Errorf("causes %v, want the IOPS cap of node-a alone; findings:\n%s", got, findingLines(&run))
	}
}

// doctor --node on a k3s node (its etcd config and the client certificate
// k3s makes) and on a systemd etcd configured by /etc/etcd/etcd.conf.yml,
// whose only certificate is the server's: there etcdctl's variables give
// the client certificate, and --log-file the member's log (its journal is
// not a file); the same certificates as flags work as the variables.
func TestDoctorNodeK3sAndSystemd(t *testing.T) {
	t.Run("k3s", func(t *testing.T) {
		root, _, _ := liveConfigRoot(t, "var/lib/rancher/k3s/server/db/etcd/config", "/var/lib/rancher/k3s/server/tls/etcd",
			"/var/lib/rancher/k3s/server/db/etcd", "client.crt", "client.key")
		res := doctorNodeOK(t, root, nil, "member node-a (k3s, /var/lib/rancher/k3s/server/db/etcd/config)")
		// The timers in force are the configuration's, else etcd's
		// defaults; a single member has no round trip to compute them from.
		const conf = "/var/lib/rancher/k3s/server/db/etcd/config"
		want := []result.FlagValue{{Name: "election-timeout", Value: 1000, From: "etcd's default (" + conf + " does not set it)"},
			{Name: "heartbeat-interval", Value: 200, From: conf}}
		tu := res.Runs[0].Tuning
		if tu == nil {
			t.Fatal("no tuning")
		}
		var timers []result.FlagValue
		for _, k := range tu.Known {
			if k.Name == "heartbeat-interval" || k.Name == "election-timeout" {
				timers = append(timers, k)
			}
		}
		computed := slices.ContainsFunc(tu.Flags, func(f result.TunedFlag) bool { return f.Name == "heartbeat-interval" || f.Name == "election-timeout" })
		if !reflect.DeepEqual(timers, want) || computed ||
			!strings.Contains(strings.Join(tu.Notes, " "), "The timers are not computed: no round trip between members was recorded") {
			t.Errorf("tuning %+v; want the timers in force %+v, none computed", tu, want)
		}
		// Its log is k3s' journal, empty on this node, read with journalctl.
		if _, err := exec.LookPath("journalctl"); err != nil {
			t.Skip("skipped: k3s' log is its journal, read with journalctl, which is missing here (apt-get install systemd)")
		}
		src := nodeLog(res.Runs[0]).LogJournal
		if l := res.Runs[0].Logs; l == nil || l.Lines != 0 || !strings.Contains(src, "-u k3s") {
			t.Errorf("k3s' journal, read with %q: %+v", src, l)
		}
	})
	t.Run("systemd", func(t *testing.T) {
		root, certs, logFile := liveConfigRoot(t, "etc/etcd/etcd.conf.yml", "/etc/etcd", "/var/lib/etcd/default", "", "")
		env := []string{"ETCDCTL_CACERT=" + certs.CA, "ETCDCTL_CERT=" + certs.ClientCert, "ETCDCTL_KEY=" + certs.ClientKey}
		res := doctorNodeOK(t, root, env, "member node-a (systemd, /etc/etcd/etcd.conf.yml)", "--log-file", logFile)
		if l := res.Runs[0].Logs; l == nil || l.Lines == 0 || nodeLog(res.Runs[0]).LogFile != logFile {
			t.Errorf("the member's log over the run was not read: %+v", l)
		}
		// The same certificates as flags.
		doctorNodeOK(t, root, nil, "member node-a (systemd, /etc/etcd/etcd.conf.yml)",
			"--cacert", certs.CA, "--cert", certs.ClientCert, "--key", certs.ClientKey)
		// Without etcdctl's variables, the server's certificate is no
		// client certificate: the run says so and exits 2.
		r := runEnv(t, time.Minute, t.TempDir(), nil, "doctor", "--node", "--root", root, "--duration", "2s", "--disk-runtime", "0", "--no-report")
		if r.Code != 2 || strings.Contains(r.Stdout, "Verdict:") {
			t.Errorf("server certificate as client: exit %d, stdout %q, stderr %q", r.Code, r.Stdout, r.Stderr)
		}
		// Where journalctl cannot run, the text says that the log was
		// not read, and the run still judges the member.
		r = runEnv(t, time.Minute, t.TempDir(), append([]string{"PATH=/nonexistent"}, env...), "doctor", "--node", "--root", root,
			"--duration", "2s", "--disk-runtime", "0", "--no-report")
		if r.Code != 0 || !strings.Contains(r.Stdout, "the member's log could not be read") || !strings.Contains(r.Stdout, "journalctl") || !strings.Contains(r.Stdout, "Verdict: ") {
			t.Errorf("without journalctl: exit %d, stdout %q, stderr %q", r.Code, r.Stdout, r.Stderr)
		}
		// Without --log-file, the log is the unit's journal on the node:
		// what etcd.service logged during the run, nothing older and
		// nothing of another unit.
		if journalRemote == "" {
			t.Skip("skipped: the journal part needs systemd-journal-remote to write a journal (apt-get install systemd-journal-remote)")
		}
		if _, err := exec.LookPath("journalctl"); err != nil {
			t.Skip("skipped: the journal part reads the journal with journalctl, which is missing here (apt-get install systemd)")
		}
		apply := func(at time.Time) string {
			return `{"level":"warn","ts":"` + at.UTC().Format(time.RFC3339Nano) + `","caller":"txn/util.go:93","msg":"apply request took too long","took":"350ms","expected-duration":"100ms"}`
		}
		// Stamped ahead of the run's start, however slow it is to begin.
		soon := time.Now().Add(10 * time.Second)
		writeJournal(t, filepath.Join(root, "var/log/journal"), []journalEntry{
			{unit: "etcd.service", at: soon.Add(-2 * time.Hour), msg: apply(soon.Add(-2 * time.Hour))},
			{unit: "ssh.service", at: soon, msg: apply(soon)},
			{unit: "etcd.service", at: soon, msg: apply(soon)},
		})
		res = doctorNodeOK(t, root, env, "member node-a (systemd, /etc/etcd/etcd.conf.yml)")
		run := res.Runs[0]
		if l := run.Logs; l == nil || l.Lines != 1 {
			t.Errorf("the unit's journal over the run: %+v", l)
		} else {
			var events int64
			for _, n := range l.Classes {
				events += n
			}
			if events != 1 {
				t.Errorf("classes %v: want the one slow apply of the run", l.Classes)
			}
		}
		if lp := nodeLog(run); !strings.Contains(lp.LogJournal, "--root "+root) || !strings.Contains(lp.LogJournal, "-u etcd") || lp.LogError != "" {
			t.Errorf("journal read with %q, error %q", lp.LogJournal, lp.LogError)
		}
	})
}

// doctorNodeOK runs doctor --node on root and checks that it judged the
// member named want, probed the disk beside its data dir and left nothing.
func doctorNodeOK(t *testing.T, root string, env []string, want string, args ...string) *result.Result {
	t.Helper()
	cwd := t.TempDir()
	r := runEnv(t, time.Minute, cwd, env, append([]string{"doctor", "--node", "--root", root, "--duration", "3s",
		"--disk-runtime", "2s", "--disk-size", "4m", "--no-report", "-o", "json"}, args...)...)
	if r.Code != 0 {
		t.Fatalf("exit %d, stderr %q", r.Code, r.Stderr)
	}
	res := decodeResult(t, r.Stdout)
	logText(t, res)
	if len(res.Runs) != 1 || res.Runs[0].Name != want {
		t.Fatalf("runs %d, name %q; want %q", len(res.Runs), res.Runs[0].Name, want)
	}
	run := res.Runs[0]
	if res.Verdict != result.Pass && res.Verdict != result.Warn {
		t.Errorf("verdict %s: %s", res.Verdict, res.Summary)
	}
	if run.Disk == nil || run.Disk.SyncLatency == nil || run.Disk.SyncLatency.Count == 0 {
		t.Errorf("no disk probe: %+v", run.Disk)
	}
	if run.Target == nil || len(run.Target.Members) != 1 || run.Target.Members[0].Name != "node-a" ||
		run.Server == nil || len(run.Server.Processes) != 1 {
		t.Errorf("target %+v, server %+v", run.Target, run.Server)
	}
	for _, e := range entries(t, root) {
		if strings.Contains(e, "etcdperf") {
			t.Errorf("left behind: %s", e)
		}
	}
	assertEmptyDir(t, cwd)
	return res
}

// journalRemote writes journal files from journald's export format.
var journalRemote = func() string {
	for _, p := range []string{"/lib/systemd/systemd-journal-remote", "/usr/lib/systemd/systemd-journal-remote"} {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return ""
}()

// journalEntry is one entry of a unit's journal.
type journalEntry struct {
	unit string
	at   time.Time
	msg  string
}

// writeJournal writes entries as a journal file in dir, as journald
// keeps them under /var/log/journal.
func writeJournal(t *testing.T, dir string, entries []journalEntry) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var export strings.Builder
	for i, e := range entries {
		export.WriteString("__REALTIME_TIMESTAMP=" + itoa(int(e.at.UnixMicro())) + "\n__MONOTONIC_TIMESTAMP=" + itoa(i+1) +
			"\n_BOOT_ID=0123456789abcdef0123456789abcdef\n_HOSTNAME=node-a\n_SYSTEMD_UNIT=" + e.unit +
			"\nSYSLOG_IDENTIFIER=" + strings.TrimSuffix(e.unit, ".service") + "\nMESSAGE=" + e.msg + "\n\n")
	}
	cmd := exec.Command(journalRemote, "-o", filepath.Join(dir, "system.journal"), "-")
	cmd.Stdin = strings.NewReader(export.String())
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("systemd-journal-remote: %v\n%s", err, out)
	}
}

// logText logs the text view of a Result (shown with go test -v).
func logText(t *testing.T, res *result.Result) {
	t.Helper()
	var b strings.Builder
	if err := render.Text(&b, res); err != nil {
		t.Fatal(err)
	}
	t.Logf("the text view:\n%s", b.String())
}

// nodeLog is where a doctor --node target's params say its log came from.
func nodeLog(run result.Result) result.NodeLogParams {
	if p, ok := run.Params.(*result.CheckParams); ok {
		return p.NodeLogParams
	}
	return result.NodeLogParams{}
}
