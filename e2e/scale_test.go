package e2e

import (
	"context"
	"encoding/csv"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/etcdperf/etcdperf/internal/testutil"
)

// The promise with small numbers: an embedded etcd grows in steps,
// each with its database size, memory and latencies, and leaves nothing.
// The put limit is loose so that a busy CI disk cannot stop the run (the
// stop itself is tested in internal/pipeline).
func TestScaleEmbedded(t *testing.T) {
	dir := t.TempDir()
	csvPath := filepath.Join(t.TempDir(), "steps.csv")
	start := time.Now()
	r := testutil.RunBinary(t, 2*time.Minute, "scale", "--objects", "pods=900,services=90,events=90", "--steps", "3",
		"--limit", "put_p99=10s", "--data-dir", dir, "-o", "json", "-o", csvPath)
	res := benchResult(t, r)
	if el := time.Since(start); el > time.Minute {
		t.Errorf("1080 objects in 3 steps took %v", el)
	}
	sc := res.Scale
	if res.Kind != "scale" || sc == nil || len(sc.Steps) != 3 || res.Target.Kind != "embedded" {
		t.Fatalf("kind %s scale %+v target %+v", res.Kind, sc, res.Target)
	}
	for i, st := range sc.Steps {
		if st.Objects != int64(360*(i+1)) || st.DBSize <= 0 || st.RSS <= 0 || st.Put == nil || st.Put.P99 <= 0 ||
			st.WALFsync == nil || st.BackendCommit == nil || st.WatchLag == nil || len(st.Lists) != 3 || st.Lists[0].Latency == nil {
			t.Errorf("step %d: %+v", st.Step, st)
		}
	}
	// The member runs in a process of its own: its memory is etcd's alone,
	// well under what etcdperf and etcd together would hold... and it grew.
	if sc.Steps[2].RSS <= sc.Steps[0].RSS || strings.Contains(strings.Join(sc.Notes, " "), "runs inside etcdperf") {
		t.Errorf("RSS %v then %v, notes %v", sc.Steps[0].RSS, sc.Steps[2].RSS, sc.Notes)
	}
	f, err := os.Open(csvPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil || len(rows) != 4 || rows[0][0] != "step" || rows[3][3] != "1080" {
		t.Errorf("CSV %v %v", rows, err)
	}
	assertEmptyDir(t, dir)
	if left := membersIn(t, dir); len(left) > 0 {
		t.Errorf("member processes left: %v", left)
	}
}

// The text view against a cluster, where every key and lease goes at the
// end.
func TestScaleExternalText(t *testing.T) {
	ep, cli := startServer(t)
	r := testutil.RunBinary(t, time.Minute, "scale", "--endpoints", ep, "--objects", "pods=200,nodes=20", "--steps", "2",
		"--value-size", "pods=uniform:1KiB:2KiB", "--limit", "put_p99=10s")
	if r.Code != 0 && r.Code != 1 {
		t.Fatalf("exit %d: %s", r.Code, r.Stderr)
	}
	for _, want := range []string{"etcdperf scale: etcd", "pods: 200 under /etcdperf/", "uniform from 1.0 KiB to 2.0 KiB", "registry/minions/",
		"step  objects", "list nodes", "Verdict:"} {
		if !strings.Contains(r.Stdout, want) {
			t.Errorf("no %q in\n%s", want, r.Stdout)
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

func TestScaleUsageErrors(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"scale", "--objects", "deployments=5"}, "unknown kind"},
		{[]string{"scale", "--objects", "pods=0"}, "at least 1"},
		{[]string{"scale", "--objects", "pods"}, "want kind=count"},
		{[]string{"scale", "--value-size", "zipf:1k"}, "unknown distribution"},
		{[]string{"scale", "--objects", "pods=10", "--value-size", "nodes=1k"}, "--objects has no nodes"},
		{[]string{"scale", "--steps", "0"}, "--steps"},
		{[]string{"scale", "--objects", "pods=3", "--steps", "5"}, "more than the 3 pods"},
		{[]string{"scale", "--event-ttl", "1s"}, "--event-ttl"},
		{[]string{"scale", "--limit", "nosuch=1"}, "unknown criterion"},
		{[]string{"scale", "--clients", "0"}, "--clients"},
		{[]string{"scale", "--page-limit", "0"}, "--page-limit"},
		{[]string{"scale", "--endpoints", "127.0.0.1:1", "--members", "3"}, "--members is for the embedded"},
		{[]string{"scale", "--data-dir", "/nonexistent/dir", "--objects", "pods=10", "--steps", "1"}, "--data-dir"},
		{[]string{"scale", "extra"}, "takes no arguments"},
	}
	for _, c := range cases {
		r := testutil.RunBinary(t, 30*time.Second, c.args...)
		if r.Code != 2 || !strings.Contains(r.Stderr, c.want) || strings.Contains(r.Stderr, "panic") || strings.Count(strings.TrimSpace(r.Stderr), "\n") > 0 {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and one line with %q", c.args, r.Code, r.Stderr, c.want)
		}
	}
	r := testutil.RunBinary(t, 30*time.Second, "scale", "--help")
	if r.Code != 0 || !strings.Contains(r.Stdout, "Examples:") || !strings.Contains(r.Stdout, "registry/pods/<namespace>/<name>") {
		t.Errorf("scale --help: exit %d\n%s", r.Code, r.Stdout)
	}
}

// Bad input through the API server: one line, exit 2, nothing written,
// before any call is made (the last case reaches for a closed port).
func TestKubeScaleUsageErrors(t *testing.T) {
	dir := t.TempDir()
	kc := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kc, []byte("apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {server: \"https://127.0.0.1:1\"}\n"+
		"users:\n- name: u\n  user: {token: t}\ncontexts:\n- name: c\n  context: {cluster: c, user: u}\ncurrent-context: c\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--server", "https://127.0.0.1:1"}, "--server needs --token"},
		{[]string{"--kubeconfig", filepath.Join(dir, "none")}, "no such file"},
		{[]string{"--qps", "5"}, "give --kubeconfig or --server"},
		{[]string{"--kubeconfig", kc, "--value-size", "4KiB"}, "--value-size does not apply"},
		{[]string{"--kubeconfig", kc, "--members", "3"}, "--members does not apply"},
		{[]string{"--kubeconfig", kc, "--objects", "nodes=5"}, `"nodes" cannot be grown through the API server`},
		{[]string{"--kubeconfig", kc, "--objects", "pods=3", "--steps", "5"}, "fewer objects than --steps"},
		{[]string{"--kubeconfig", kc, "--qps", "0"}, "--qps must be over 0"},
		{[]string{"--kubeconfig", kc, "--objects", "pods=10", "-o", filepath.Join(dir, "missing", "r.json")}, "missing"},
		{[]string{"--kubeconfig", kc, "--root", dir}, "--root is for --node"},
		{[]string{"--kubeconfig", kc, "--node", "--root", dir}, "--node: "},
		{[]string{"--node"}, "--node applies through the API server"},
		{[]string{"--kubeconfig", kc, "--objects", "pods=10"}, "reach the API server at https://127.0.0.1:1"},
	}
	for _, c := range cases {
		cmd := exec.Command(testutil.Binary(t), append([]string{"scale"}, c.args...)...)
		cmd.Dir = dir
		r := testutil.Wait(t, cmd, nil)
		if r.Code != 2 || !strings.Contains(r.Stderr, c.want) || strings.Count(strings.TrimSpace(r.Stderr), "\n") > 0 {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and one line with %q", c.args, r.Code, r.Stderr, c.want)
		}
	}
	assertEmptyDir(t, dir)
}
