package report

import (
	"bytes"
	"errors"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/etcdperf/etcdperf/internal/render"
	"github.com/etcdperf/etcdperf/internal/result"
	"github.com/etcdperf/etcdperf/internal/testutil"
)

func pageOf(t *testing.T, r *result.Result) string {
	t.Helper()
	var buf bytes.Buffer
	if err := New(r).HTML(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

// The disk pair is two real `etcdperf disk` runs on a 2-vCPU VM (ext4
// on a busy shared disk, and tmpfs); the bench pair follows the documented
// shapes (fixtures_test.go). The pages must not change from run to run:
// no time of now, deterministic SVG.
func TestPageGolden(t *testing.T) {
	for golden, files := range map[string][]string{
		"disk-compare.html":  {"disk-ext4.json", "disk-tmpfs.json"},
		"bench-compare.html": {"bench-nvme.json", "bench-gp2.json"},
	} {
		t.Run(golden, func(t *testing.T) {
			res := Combine(load(t, files...))
			out := pageOf(t, res)
			if again := pageOf(t, res); again != out {
				t.Fatal("two renderings of the same Results differ")
			}
			for _, want := range []string{"<svg", "Verdict and findings", "Summary", "Parameters and environment", "Ratios between runs"} {
				if !strings.Contains(out, want) {
					t.Errorf("page lacks %q", want)
				}
			}
			testutil.Golden(t, golden, []byte(out))
		})
	}
}

// resourceRef finds anything that would make a browser fetch from the
// network: an absolute or protocol-relative URL in an attribute that loads
// something, in CSS url() or @import, and elements that load by nature.
var resourceRef = regexp.MustCompile(`(?i)(\b(src|href|xlink:href|srcset|action|poster|data|background)\s*=\s*["']?\s*(https?:)?//)|(url\(\s*["']?\s*(https?:)?//)|@import|<link\b|<script\b|<iframe\b|<object\b|<embed\b|<base\b`)

func TestPageLoadsNothingFromTheNetwork(t *testing.T) {
	for _, bad := range []string{`<img src="https://cdn.example/x.png">`, `<a href='//cdn.example/x'>`, `style="background:url( http://x/y.png)"`,
		`@import "x.css";`, `<script>`, `<link rel=stylesheet href=x.css>`, `<image xlink:href="http://x/y.png"/>`} {
		if !resourceRef.MatchString(bad) {
			t.Fatalf("the checker misses %s", bad)
		}
	}
	pages := map[string]string{}
	for _, files := range [][]string{{"disk-ext4.json", "disk-tmpfs.json"}, {"bench-nvme.json", "bench-gp2.json"}, {"disk-ext4.json"}} {
		pages[strings.Join(files, "+")] = pageOf(t, Combine(load(t, files...)))
	}
	for name, p := range pages {
		if m := resourceRef.FindString(p); m != "" {
			t.Errorf("%s: the page refers to a resource: %q", name, m)
		}
	}
	// With no URL in the data there is none in the page at all (the SVG
	// namespaces are left out too).
	if p := pages["disk-ext4.json"]; strings.Contains(p, "http://") || strings.Contains(p, "https://") {
		t.Error("the disk page holds a URL")
	}
}

func TestSecretsNeverShown(t *testing.T) {
	res := Combine(load(t, "bench-nvme.json", "bench-gp2.json"))
	var text bytes.Buffer
	if err := New(res).Text(&text); err != nil {
		t.Fatal(err)
	}
	for name, out := range map[string]string{"page": pageOf(t, res), "compare": text.String()} {
		for _, secret := range []string{"hunter2", "s3cr3t"} {
			if strings.Contains(out, secret) {
				t.Errorf("%s shows the secret %q", name, secret)
			}
		}
	}
	if p := pageOf(t, res); !strings.Contains(p, "root:[redacted]") || !strings.Contains(p, "/etc/etcd/client.crt") || !strings.Contains(p, "params.key_size") {
		t.Error("redaction hid too much or too little: the user name, the cert path and key_size must stay")
	}
	for _, c := range []struct{ key, in, want string }{
		{"params.password", "x", redacted},
		{"params.etcd-password", "x", redacted},
		{"params.ETCDPERF_PASSWORD", "x", redacted},
		{"params.auth_token", "x", redacted},
		{"params.clientSecret", "x", redacted},
		{"params.bearer", "x", redacted},
		{"params.user", "root:pw", "root:" + redacted},
		{"params.user", "root", "root"},
		{"params.endpoints", "https://u:pw@h:2379,https://h2:2379", "https://u:" + redacted + "@h:2379,https://h2:2379"},
		{"params.dsn", "host=db password=pw user=x", "host=db password=" + redacted + " user=x"},
		{"params.key_size", "256", "256"},
		{"params.key", "/etc/etcd/client.key", "/etc/etcd/client.key"},
	} {
		if got := scrubValue(c.key, c.in); got != c.want {
			t.Errorf("scrubValue(%q, %q) = %q, want %q", c.key, c.in, got, c.want)
		}
	}
	// Free text that sections print (notes, tables) is scrubbed too.
	d := result.New("disk")
	d.Disk = &result.Disk{Ops: 2, Notes: []string{"mounted from https://admin:topsecret@nas/share"},
		Jobs:        []result.DiskJob{{File: "probe?token=abcd1234", Ops: 1}, {File: "b", Ops: 1}},
		SyncLatency: &result.Latency{Count: 2, P50: 0.001, P99: 0.002}}
	if p := pageOf(t, d); strings.Contains(p, "topsecret") || strings.Contains(p, "abcd1234") || !strings.Contains(p, "nas/share") {
		t.Error("a secret in a note or a table reached the page")
	}
	// Nested and non-string values are seen too.
	r := &result.Result{Params: result.RawParams{"tls": map[string]any{"token": 1234}, "list": []any{map[string]any{"secret": true}}}}
	for _, s := range settings(r) {
		if s.Value != redacted {
			t.Errorf("%s = %q is not redacted", s.Key, s.Value)
		}
	}
}

func TestMarkupInDataIsEscaped(t *testing.T) {
	r := result.New("disk")
	r.Name = `<script>alert(1)</script>`
	r.Summary = `<img src=x onerror=alert(1)>`
	r.Disk = &result.Disk{Ops: 1, SyncLatency: &result.Latency{Count: 1, P50: 0.001, P99: 0.002}}
	p := pageOf(t, r)
	if strings.Contains(p, "<script") || strings.Contains(p, "<img") {
		t.Error("markup from the Result reached the page unescaped")
	}
}

// The report shows whatever sections a Result has and skips the rest; odd
// or broken data degrades a chart, never the page.
func TestSectionsFollowTheData(t *testing.T) {
	checkOnly := result.New("check")
	checkOnly.Checks = []result.Check{{Name: "throughput", Status: result.StatusFail, Observed: 0.5, Limit: 0.9, Op: ">=", Unit: "ratio"}}
	checkOnly.Verdict = result.Fail
	p := pageOf(t, checkOnly)
	if !strings.Contains(p, "throughput") || strings.Contains(p, `id="disk"`) || strings.Contains(p, `id="bench"`) || strings.Contains(p, "<svg") {
		t.Error("a Result with only checks: verdict expected, no section")
	}

	disks := load(t, "disk-ext4.json", "disk-tmpfs.json")
	doctor := result.New("doctor")
	doctor.Runs = []result.Result{*disks[0].Result, *disks[1].Result}
	doctor.Runs[1].Name = "shm"
	rep := New(doctor)
	if len(rep.Runs) != 2 || rep.Runs[0].Label != "doctor/1" || rep.Runs[1].Label != "shm" {
		t.Errorf("runs of a doctor Result: %+v", rep.Runs)
	}

	broken := result.New("bench")
	broken.Bench = &result.Bench{Ops: 10, Throughput: 5,
		Latency:        &result.Latency{Count: 10, P50: 0, P99: 0.01, HDR: "not base64"},
		ServiceLatency: &result.Latency{},
		Series:         []result.Sample{{T: 1, Ops: 5}}}
	broken.Server = &result.Server{WALFsync: &result.Latency{Count: 3, Bucketed: true, Resolution: 0.001}}
	p = pageOf(t, broken)
	if !strings.Contains(p, `id="bench"`) || !strings.Contains(p, "request latency by percentile") || !strings.Contains(p, "10ms") {
		t.Error("a bench section with a broken HDR must fall back to its summary quantiles")
	}
	if strings.Contains(p, "p99 latency over time") {
		t.Error("a series without latencies drew an empty log chart")
	}
}

func TestRowsRatiosAndBest(t *testing.T) {
	runs := New(Combine(load(t, "disk-ext4.json", "disk-tmpfs.json"))).Runs
	rows := Rows(runs)
	find := func(label string) Row {
		for _, r := range rows {
			if r.Metric.Label == label {
				return r
			}
		}
		t.Fatalf("no row %q", label)
		return Row{}
	}
	p99 := find("disk sync p99")
	want := runs[1].Result.Disk.SyncLatency.P99 / runs[0].Result.Disk.SyncLatency.P99
	if p99.Ratios[1] != want || p99.Best != 1 || math.Abs(p99.Factor-1/want) > 1e-9 {
		t.Errorf("sync p99: ratio %g (want %g), best %d, factor %g", p99.Ratios[1], want, p99.Best, p99.Factor)
	}
	if iops := find("disk IOPS"); iops.Best != 1 {
		t.Error("higher IOPS must be better")
	}
	if ops := find("disk ops"); ops.Best != NoBest {
		t.Error("a count of operations is neither better nor worse")
	}
	// etcd's 1ms resolution: two values at it tie, and no ratio is claimed.
	atMost := []*Value{{V: 0.001, AtMost: true}, {V: 0.001, AtMost: true}}
	if b, _ := best(Lower, "s", atMost); b != Tie || !math.IsNaN(ratio(Metric{Unit: "s"}, atMost[1], atMost[0])) {
		t.Error("values at the resolution must tie without a ratio")
	}
	if b, f := best(Lower, "s", []*Value{{V: 0.005}, {V: 0.001, AtMost: true}}); b != 1 || !math.IsNaN(f) {
		t.Errorf("at most 1ms beats 5ms, by an unknown factor: %d %g", b, f)
	}
	if b, _ := best(Higher, "ops/s", []*Value{{V: 1000}, {V: 1004}}); b != Tie {
		t.Error("values within 1% tie")
	}
}

func TestCompareTextGolden(t *testing.T) {
	var buf bytes.Buffer
	if err := New(Compare(load(t, "disk-ext4.json", "disk-tmpfs.json"))).Text(&buf); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	if !strings.Contains(out, "disk-tmpfs (") || !strings.Contains(out, "better") {
		t.Errorf("no best run named:\n%s", out)
	}
	testutil.Golden(t, "disk-compare.txt", buf.Bytes())
}

func TestPNGCharts(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "charts")
	rep := New(Combine(load(t, "bench-nvme.json", "bench-gp2.json")))
	paths, err := rep.WritePNGs(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) != len(rep.Charts()) || len(paths) < 6 {
		t.Fatalf("wrote %d PNGs for %d charts", len(paths), len(rep.Charts()))
	}
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(f)
		f.Close()
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if n := testutil.NonWhite(img); n < 2000 {
			t.Errorf("%s: only %d pixels drawn", p, n)
		}
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != len(paths) {
		t.Errorf("temporary files left in %s: %v", dir, entries)
	}
}

func TestLoadNames(t *testing.T) {
	dir := t.TempDir()
	disk, err := os.ReadFile(filepath.Join("testdata", "disk-ext4.json"))
	if err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(dir, "pod.log")
	os.WriteFile(log, []byte("starting etcdperf\n"+string(disk)+"exiting 0\n"), 0o644)
	in, err := Load([]string{log, filepath.Join("testdata", "disk-tmpfs.json")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if rep := New(Combine(in)); rep.Runs[0].Label != "pod" || rep.Runs[1].Label != "disk-tmpfs" {
		t.Errorf("labels %q %q", rep.Runs[0].Label, rep.Runs[1].Label)
	}
	if _, err := Load([]string{filepath.Join(dir, "missing.json")}, nil); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}

// Whatever a Result holds, the page and the comparison are written without
// a panic (the plotting library panics on values it cannot place).
func FuzzReport(f *testing.F) {
	f.Add([]byte(`{"schema":"etcdperf/v1","kind":"disk","disk":{"ops":3,"iops":-1,"sync_latency":{"count":3,"min":-1,"p50":1e308,"p99":0,"max":1e-300}}}`))
	f.Add([]byte(`{"schema":"etcdperf/v1","kind":"bench","bench":{"ops":1,"latency":{"count":1,"p99":0.01,"hdr":"HISTFAAAAB"},"series":[{"t":-5,"ops":-3,"p99":1e-12},{"t":-5,"ops":1,"p99":3}]},"server":{"wal_fsync":{"count":1,"p50":0.001,"resolution":0.001,"bucketed":true},"members":[{"name":"m"}]}}`))
	f.Add([]byte(`{"schema":"etcdperf/v1","kind":"doctor","runs":[{"schema":"etcdperf/v1","kind":"disk","disk":{}},{"schema":"etcdperf/v1","name":"<b>","checks":[{"name":"x","status":"fail"}]}]}` + "\n" +
		`{"schema":"etcdperf/v1","kind":"disk","params":{"password":"p","x":[1,{"token":"t"}]},"disk":{"ops":1,"iops":1e-320}}`))
	f.Add([]byte(`{"schema":"etcdperf/v1","kind":"prom","prom":{"url":"u","step":1,"table":{"columns":[{"name":"a","query":"a"}],"time":[1,2],"rows":[[1],[null]]}}}`))
	f.Add([]byte(`{"schema":"etcdperf/v1","kind":"metrics","metrics":{"interval":1,"intervals":3,"members":[{"name":"m","series":[{"t":1,"error":"x"}]}]}}`))
	f.Add([]byte(`{"schema":"etcdperf/v1","kind":"doctor","runs":[{"schema":"etcdperf/v1","name":"a","capacity":{"puts_per_s":0,"steps":[{"offered":150,"achieved":0,"wal_fsync_p99":0,"wal_fsync_bound":true,"broke":["x"]},{"offered":-1,"achieved":1e308,"backend_commit_p99":-2}]}},{"schema":"etcdperf/v1","capacity":{"steps":[{"offered":1e-300,"achieved":1e-300,"wal_fsync_p99":1e300}]}}]}`))
	f.Add([]byte(`{"schema":"etcdperf/v1","kind":"logs","logs":{"lines":1,"timeline":{"bucket":-1,"buckets":2,"series":[{"class":"x","counts":[1]}]}}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		rs, err := result.Extract(b)
		if err != nil {
			return
		}
		var in []Input
		for i, r := range rs {
			in = append(in, Input{Source: filepath.Join("d", string(rune('a'+i%26))+".json"), Result: r})
		}
		rep := New(Combine(in))
		var buf bytes.Buffer
		if err := rep.HTML(&buf); err != nil {
			t.Fatal(err)
		}
		if err := rep.Text(&buf); err != nil {
			t.Fatal(err)
		}
		// What report -o text and -o csv write of each Result: errors
		// are fine, panics are not.
		for _, r := range rs {
			_ = render.Text(&buf, r)
			_ = render.CSV(&buf, r)
		}
	})
}
