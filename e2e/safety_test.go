package e2e

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/etcdperf/etcdperf/internal/testutil"
)

// Safety proofs: etcdperf must never be the thing that hurts the etcd it
// measures, nor leak the credentials it is given.

// fillUnrelated writes n keys that belong to others: Kubernetes-like keys,
// keys of another etcdperf run and of a sibling prefix, keys written
// several times, binary values, and one key on a lease. It returns the
// lease.
func fillUnrelated(t *testing.T, cli *clientv3.Client, n int) clientv3.LeaseID {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	lease, err := cli.Grant(ctx, 3600)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cli.Put(ctx, "/registry/leases/kube-node-lease/node-0", "held", clientv3.WithLease(lease.ID)); err != nil {
		t.Fatal(err)
	}
	const batch = 100 // below etcd's --max-txn-ops (128)
	for i := 1; i < n; i += batch {
		var ops []clientv3.Op
		for j := i; j < min(i+batch, n); j++ {
			var k string
			switch j % 4 {
			case 0:
				k = fmt.Sprintf("/registry/pods/ns-%d/pod-%d", j%37, j)
			case 1:
				k = fmt.Sprintf("/etcdperf/other-run/%08x", j) // another run's keys, under /etcdperf/
			case 2:
				k = fmt.Sprintf("/etcdperf-sibling/%d", j) // shares the characters of the prefix
			default:
				k = fmt.Sprintf("\x00binary/%d\xff", j)
			}
			ops = append(ops, clientv3.OpPut(k, fmt.Sprintf("value %d \x00\xfe", j)))
		}
		if _, err := cli.Txn(ctx).Then(ops...).Commit(); err != nil {
			t.Fatal(err)
		}
	}
	// Some keys with several versions.
	for j := 4; j <= 200; j += 4 {
		if _, err := cli.Put(ctx, fmt.Sprintf("/registry/pods/ns-%d/pod-%d", j%37, j), "v2"); err != nil {
			t.Fatal(err)
		}
	}
	return lease.ID
}

// keyspaceHash hashes every key outside prefix with its value, revisions,
// version and lease, and counts them.
func keyspaceHash(t *testing.T, cli *clientv3.Client, prefix string) (string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	r, err := cli.Get(ctx, "\x00", clientv3.WithFromKey())
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.New()
	n := 0
	for _, kv := range r.Kvs {
		if strings.HasPrefix(string(kv.Key), prefix) {
			continue
		}
		fmt.Fprintf(h, "%q=%q c%d m%d v%d l%d\n", kv.Key, kv.Value, kv.CreateRevision, kv.ModRevision, kv.Version, kv.Lease)
		n++
	}
	return hex.EncodeToString(h.Sum(nil)), n
}

// Against an etcd holding 10,000 unrelated keys, every workload that writes
// (bench's, check's, scale's) leaves them byte for byte as they were
// (values, revisions, versions, leases), and their lease alive.
func TestBenchLeavesOtherKeysUntouched(t *testing.T) {
	ep, cli := startServer(t)
	const unrelated = 10000
	lease := fillUnrelated(t, cli, unrelated)
	for _, w := range [][]string{
		{"bench", "put", "--total", "300", "--clients", "4", "--key-space-size", "50"},
		{"bench", "put", "--total", "300", "--clients", "4", "--sequential-keys", "--key-space-size", "100000", "--key-size", "8"},
		{"bench", "txn-put", "--total", "100", "--clients", "4", "--txn-ops", "4", "--key-space-size", "20"},
		{"bench", "txn-mixed", "--total", "100", "--clients", "4", "--key-space-size", "20"},
		{"bench", "range", "--total", "50", "--clients", "2", "--key-space-size", "100"}, // fills its prefix first
		{"bench", "watch-latency", "--put-total", "50", "--put-rate", "200", "--streams", "2", "--watchers-per-stream", "2"},
		{"bench", "lease-keepalive", "--total", "100", "--clients", "4"},
		// check perf's profile s (150 puts/s) for 2s, then the deletion of
		// its keys.
		{"check", "--duration", "2s"},
		// Kubernetes-shaped objects, events on leases, lists and updates.
		{"scale", "--objects", "pods=300,events=100", "--steps", "2", "--lists", "1", "--limit", "put_p99=10s"},
	} {
		prefix := "/etcdperf/safety-" + w[0] + "/"
		if w[0] == "bench" {
			prefix = "/etcdperf/safety-" + w[1] + "/"
		}
		before, n := keyspaceHash(t, cli, prefix)
		if n != unrelated {
			t.Fatalf("%d unrelated keys, want %d", n, unrelated)
		}
		r := testutil.RunBinary(t, time.Minute, append(w, "--endpoints", ep, "--prefix", prefix, "-o", "json")...)
		if r.Code == 2 {
			t.Fatalf("%v: exit 2: %s", w, r.Stderr)
		}
		res := decodeResult(t, r.Stdout)
		if w[0] == "scale" {
			if res.Scale == nil || len(res.Scale.Steps) != 2 || res.Scale.Steps[1].Objects == 0 {
				t.Errorf("%v: nothing ran: %+v", w, res.Scale)
			}
		} else if res.Bench == nil || res.Bench.Ops == 0 {
			t.Errorf("%v: nothing ran: %+v", w, res.Bench)
		}
		after, m := keyspaceHash(t, cli, prefix)
		if after != before || m != n {
			t.Errorf("%v changed the keys outside its prefix: %d keys (hash %s) before, %d (hash %s) after", w, n, before[:12], m, after[:12])
		}
		if k := keysUnder(t, cli, prefix); k != 0 {
			t.Errorf("%v left %d keys under its prefix", w, k)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if ttl, err := cli.TimeToLive(ctx, lease); err != nil || ttl.TTL <= 0 {
		t.Errorf("the unrelated lease is gone: %+v %v", ttl, err)
	}
	leases, err := cli.Leases(ctx)
	if err != nil || len(leases.Leases) != 1 {
		t.Errorf("leases after the runs: %+v %v, want only the unrelated one", leases, err)
	}
}

// The password of --user, from ETCDPERF_PASSWORD or written as user:password,
// never shows in stdout, stderr, etcd's log, any Result (JSON, text, CSV)
// or HTML report, on success or failure, of bench, check, scale and
// metrics.
func TestPasswordNeverLeaks(t *testing.T) {
	ep, cli, etcdLog := startServerLogged(t)
	secret := make([]byte, 12)
	rand.Read(secret)
	password := "pw-" + hex.EncodeToString(secret)
	testutil.EnableAuth(t, cli, "bench", password, "/etcdperf/")
	out := t.TempDir()
	file := func(name string) string { return filepath.Join(out, name) }

	var outputs []string
	run := func(env bool, args ...string) testutil.Run {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, testutil.Binary(t), args...)
		if env {
			cmd.Env = append(os.Environ(), "ETCDPERF_PASSWORD="+password)
		}
		r := testutil.Wait(t, cmd, ctx)
		outputs = append(outputs, r.Stdout, r.Stderr)
		return r
	}
	if r := run(true, "bench", "put", "--endpoints", ep, "--user", "bench", "--total", "200", "--clients", "4",
		"-o", file("put.json"), "-o", file("put.txt"), "-o", file("put.csv"), "--html", file("put.html")); r.Code == 2 {
		t.Fatalf("bench with auth: %s", r.Stderr)
	}
	if r := run(false, "bench", "watch-latency", "--endpoints", ep, "--user", "bench:"+password, "--put-total", "20", "--put-rate", "100",
		"-o", "json", "-o", file("watch.json")); r.Code == 2 {
		t.Fatalf("watch-latency with auth: %s", r.Stderr)
	}
	if r := run(true, "bench", "lease-keepalive", "--endpoints", ep, "--user", "bench", "--total", "50", "-o", file("lease.json")); r.Code == 2 {
		t.Fatalf("lease-keepalive with auth: %s", r.Stderr)
	}
	if r := run(true, "check", "--endpoints", ep, "--user", "bench", "--duration", "2s", "-o", file("check.json"), "-o", file("check.txt")); r.Code == 2 {
		t.Fatalf("check with auth: %s", r.Stderr)
	}
	if r := run(false, "scale", "--endpoints", ep, "--user", "bench:"+password, "--objects", "pods=100,events=20", "--steps", "1",
		"--limit", "put_p99=10s", "-o", file("scale.json"), "-o", file("scale.csv")); r.Code == 2 {
		t.Fatalf("scale with auth: %s", r.Stderr)
	}
	if r := run(true, "metrics", "--endpoints", ep, "--user", "bench", "--interval", "200ms", "--duration", "600ms", "-o", "text", "-o", file("metrics.json")); r.Code == 2 {
		t.Fatalf("metrics with auth: %s", r.Stderr)
	}
	// Failures print what they know: a denied prefix, a wrong user (with
	// the password on the command line).
	for _, args := range [][]string{
		{"check", "--prefix", "/denied/", "--duration", "1s"},
		{"check", "--user", "nobody:" + password, "--duration", "1s"},
		{"scale", "--prefix", "/denied/", "--objects", "pods=10", "--steps", "1"},
		{"scale", "--user", "nobody:" + password, "--objects", "pods=10", "--steps", "1"},
		{"metrics", "--user", "nobody:" + password, "--interval", "200ms", "--duration", "200ms"},
		// No user name: the error must not quote the value back.
		{"check", "--user", ":" + password},
	} {
		if !slices.Contains(args, "--user") {
			args = append(args, "--user", "bench")
		}
		if r := run(true, append(args, "--endpoints", ep)...); r.Code != 2 {
			t.Errorf("%v: exit %d", args, r.Code)
		}
	}
	if r := run(true, "bench", "put", "--endpoints", ep, "--user", "bench", "--prefix", "/denied/", "--total", "10"); r.Code != 2 {
		t.Errorf("denied prefix: exit %d", r.Code)
	}
	if r := run(true, "bench", "put", "--endpoints", ep, "--user", "nobody", "--total", "10"); r.Code != 2 {
		t.Errorf("wrong user: exit %d", r.Code)
	}
	if r := run(false, "report", file("put.json"), file("watch.json"), file("lease.json"), file("check.json"), file("scale.json"), file("metrics.json"), "-o", file("report.html")); r.Code != 0 {
		t.Errorf("report: exit %d %s", r.Code, r.Stderr)
	}
	if r := run(false, "compare", file("put.json"), file("watch.json"), "-o", "text", "-o", file("compare.json")); r.Code != 0 {
		t.Errorf("compare: exit %d %s", r.Code, r.Stderr)
	}

	files, err := filepath.Glob(filepath.Join(out, "*"))
	if err != nil || len(files) < 13 {
		t.Fatalf("the runs wrote %v (%v)", files, err)
	}
	files = append(files, etcdLog)
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if len(b) == 0 {
			t.Errorf("%s is empty", f)
		}
		if strings.Contains(string(b), password) {
			t.Errorf("the password is in %s", f)
		}
	}
	for i, o := range outputs {
		if strings.Contains(o, password) {
			t.Errorf("the password is in output %d: %q", i, o)
		}
	}
	// The grep finds what it looks for: the user's name is in the Result.
	if b, _ := os.ReadFile(file("put.json")); !strings.Contains(string(b), `"bench"`) {
		t.Error("the Result does not name the user; the search would not see a leak either")
	}
}
