package e2e

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/etcdperf/etcdperf/internal/cluster"
	"github.com/etcdperf/etcdperf/internal/judge"
	"github.com/etcdperf/etcdperf/internal/lab"
	"github.com/etcdperf/etcdperf/internal/result"
	"github.com/etcdperf/etcdperf/internal/testutil"
)

// A kubeadm member whose database is near the quota its manifest sets:
// doctor --node warns that it is near its quota, suggests a quota that
// holds it, and --tuning-out writes the change as a kubeadm
// ClusterConfiguration's etcd.local.extraArgs.
// --tuning-out without --node is refused before anything runs.
func TestDoctorNodeTuningOut(t *testing.T) {
	const quota = 18 << 20
	root, ep := liveKubeadmQuota(t, testutil.QuietDirOr(t, "256M"), 0, quota)
	pki := filepath.Join(root, "etc/kubernetes/pki/etcd")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	tg, err := lab.Open(ctx, lab.TargetOptions{Conn: cluster.ConnOptions{Endpoints: []string{"https://" + ep},
		CACert: filepath.Join(pki, "ca.crt"), Cert: filepath.Join(pki, "healthcheck-client.crt"), Key: filepath.Join(pki, "healthcheck-client.key")}})
	if err != nil {
		t.Fatal(err)
	}
	// Values of 256 KiB until the member's file passes 85% of the quota:
	// over db_quota_used's 80% and under etcd's alert at 95%. How much
	// more than its values the file takes depends on which freed pages
	// bbolt could reuse while etcd read (56 values, 14 MiB, made a file
	// on either side of 80%), and etcd reports its size at its backend's
	// commits: 48 values (70% of the quota) at once, then one at a time,
	// each committed by reading a snapshot (etcd commits before it).
	value := strings.Repeat("v", 256<<10)
	for i := 0; ; i++ {
		if i >= 48 {
			rc, err := tg.Client().Snapshot(ctx)
			if err != nil {
				t.Fatal(err)
			}
			_, err = io.Copy(io.Discard, rc)
			rc.Close()
			if err != nil {
				t.Fatal(err)
			}
			st, err := tg.Client().Status(ctx, "https://"+ep)
			if err != nil {
				t.Fatal(err)
			}
			if float64(st.DbSize) >= 0.85*quota {
				t.Logf("%d values of 256 KiB: a file of %d bytes (%.1f%% of the quota)", i, st.DbSize, 100*float64(st.DbSize)/quota)
				break
			}
			if i == 70 {
				t.Fatalf("the member's file is %d bytes after %d values of 256 KiB", st.DbSize, i)
			}
		}
		if _, err := tg.Client().Put(ctx, "/registry/configmaps/fill/"+itoa(i), value); err != nil {
			t.Fatal(err)
		}
	}
	tg.Close()
	cwd := t.TempDir()
	out := filepath.Join(cwd, "etcd-flags.yaml")
	r := runEnv(t, time.Minute, cwd, nil, "doctor", "--node", "--root", root, "--duration", "3s", "--disk-runtime", "0", "--no-report", "-o", "json", "--tuning-out", out)
	res := decodeResult(t, r.Stdout)
	if r.Code != 0 || res.Verdict != result.Warn {
		t.Fatalf("exit %d, verdict %s, want 0 and a warning (near its quota, under etcd's alert at 95%%); stderr %q", r.Code, res.Verdict, r.Stderr)
	}
	run := res.Runs[0]
	near := false
	for _, f := range run.Findings {
		near = near || f.ID == "db_near_quota"
	}
	if !near {
		t.Errorf("no db_near_quota finding: %+v", run.Findings)
	}
	var q *result.TunedFlag
	for i, f := range run.Tuning.Flags {
		if f.Name == judge.FlagQuota {
			q = &run.Tuning.Flags[i]
		}
	}
	// The bound from above depends on the member's past
	// defragmentations, whose histogram it shares with every etcd of this
	// test process: the suggestion holds the file under 80% of it, and
	// is at most etcd's suggested 8 GiB.
	var file float64
	for _, d := range run.Server.Databases {
		file = d.Size
	}
	if q == nil || q.Action != result.TuneChange || q.Current != quota || q.CurrentFrom != "/etc/kubernetes/manifests/etcd.yaml" ||
		file <= 0.8*quota || q.Suggested < file/0.8 || q.Suggested > 8<<30 || !strings.Contains(q.Why, "so at least ") || !strings.Contains(q.Why, "; at most ") {
		t.Fatalf("quota: %+v, the member's file %g", q, file)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Etcd       struct {
			Local struct {
				ExtraArgs []struct{ Name, Value string } `json:"extraArgs"`
			} `json:"local"`
		} `json:"etcd"`
	}
	if err := yaml.UnmarshalStrict(b, &cfg); err != nil {
		t.Fatalf("%s: %v\n%s", out, err, b)
	}
	args := cfg.Etcd.Local.ExtraArgs
	if cfg.APIVersion != "kubeadm.k8s.io/v1beta4" || cfg.Kind != "ClusterConfiguration" || len(args) != 1 || args[0].Name != "quota-backend-bytes" || args[0].Value != strconv.FormatFloat(q.Suggested, 'f', 0, 64) {
		t.Errorf("%s:\n%s", out, b)
	}
	t.Logf("%s:\n%s", out, b)

	refused := runEnv(t, time.Minute, cwd, nil, "doctor", "--tuning-out", filepath.Join(cwd, "other.yaml"))
	if refused.Code != 2 || strings.Count(strings.TrimSpace(refused.Stderr), "\n") != 0 || !strings.Contains(refused.Stderr, "--tuning-out is for --node") {
		t.Errorf("--tuning-out without --node: exit %d, stderr %q", refused.Code, refused.Stderr)
	}
	if _, err := os.Stat(filepath.Join(cwd, "other.yaml")); err == nil {
		t.Error("a refused run wrote its --tuning-out")
	}
	// A file that cannot be written is refused before anything runs.
	unwritable := runEnv(t, time.Minute, cwd, nil, "doctor", "--node", "--root", root, "--tuning-out", filepath.Join(cwd, "missing", "f.yaml"))
	if unwritable.Code != 2 || strings.Count(strings.TrimSpace(unwritable.Stderr), "\n") != 0 || !strings.Contains(unwritable.Stderr, "--tuning-out") ||
		!strings.Contains(unwritable.Stderr, "mkdir -p") || strings.Contains(unwritable.Stderr, "judging") {
		t.Errorf("--tuning-out in a missing directory: exit %d, stderr %q", unwritable.Code, unwritable.Stderr)
	}
}
