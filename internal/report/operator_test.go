package report

import (
	"bytes"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/etcdperf/etcdperf/internal/result"
)

// A p99 in the lowest bucket of etcd's histogram is at most 1ms: the checks
// table says so as the text view does, and names each check by the name
// --limit takes beside its title.
func TestChecksTableBoundAndName(t *testing.T) {
	r := result.New("check")
	r.Checks = []result.Check{
		{Name: "wal_fsync_p99", Title: "server WAL fsync p99", Status: result.StatusPass, Observed: 0.001, Limit: 0.01, Op: "<", Bound: true, Unit: "s"},
		{Name: "request_p99", Title: "request p99", Status: result.StatusPass, Observed: 0.001, Limit: 0.1, Op: "<", Unit: "s"},
	}
	r.Verdict = result.Pass
	p := pageOf(t, r)
	for _, want := range []string{
		`server WAL fsync p99 <code class="id">wal_fsync_p99</code></td><td class="status">pass</td><td class="num">&lt;= 1ms</td>`,
		`request p99 <code class="id">request_p99</code></td><td class="status">pass</td><td class="num">1ms</td>`,
	} {
		if !strings.Contains(p, want) {
			t.Errorf("the checks table lacks %s", want)
		}
	}
}

// A doctor of one directory carries its directory's verdict: the page and
// compare show it once.
func TestDoctorVerdictShownOnce(t *testing.T) {
	dir := result.New("disk")
	dir.Name = "/var/lib/etcd"
	dir.Verdict, dir.Summary = result.Fail, "fdatasync p99 is 19.3ms, over the 10ms limit"
	dir.Checks = []result.Check{{Name: "disk_sync_p99", Status: result.StatusFail, Observed: 0.0193, Limit: 0.01, Op: "<", Unit: "s"}}
	dir.Disk = &result.Disk{Ops: 10, SyncLatency: &result.Latency{Count: 10, P50: 0.01, P99: 0.0193}}
	doctor := result.New("doctor")
	doctor.Verdict, doctor.Summary = dir.Verdict, dir.Summary
	doctor.Runs = []result.Result{*dir}

	if n := strings.Count(pageOf(t, doctor), dir.Summary); n != 1 {
		t.Errorf("the page shows the verdict %d times", n)
	}
	var buf bytes.Buffer
	if err := New(Compare([]Input{{Source: "a.json", Result: doctor}, {Source: "b.json", Result: doctor}})).Text(&buf); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(buf.String(), dir.Summary); n != 2 {
		t.Errorf("compare of two doctors shows the verdict %d times, want once each:\n%s", n, buf.String())
	}

	// A doctor of two directories has a verdict of its own: all three show.
	two := *doctor
	other := *dir
	other.Name, other.Verdict, other.Summary = "/mnt/ssd", result.Pass, "fast enough"
	two.Runs = []result.Result{*dir, other}
	if got := len(New(&two).Judged); got != 3 {
		t.Errorf("%d verdicts for a doctor of two directories, want 3", got)
	}
}

// An embedded member's endpoint was a port of the run, gone with it: "where"
// says it was an embedded member in the directory.
func TestWhereEmbedded(t *testing.T) {
	r := result.New("check")
	r.Env = &result.Env{Dir: "/var/lib/etcd", FSType: "ext4", Device: "vda", Endpoints: "http://127.0.0.1:44551"}
	r.Target = &result.Target{Kind: "embedded", Endpoints: []string{"http://127.0.0.1:44551"}, Members: []result.TargetMember{{Name: "m1"}}}
	if got, want := where(r), "an embedded etcd member in /var/lib/etcd (ext4 on vda)"; got != want {
		t.Errorf("where = %q, want %q", got, want)
	}
	r.Target.Members = append(r.Target.Members, result.TargetMember{Name: "m2"}, result.TargetMember{Name: "m3"})
	if got := where(r); !strings.HasPrefix(got, "3 embedded etcd members in /var/lib/etcd") {
		t.Errorf("where = %q", got)
	}
	for _, s := range settings(r) {
		if s.Key == "env.endpoints" && s.Value != "http://127.0.0.1:44551 (the run's embedded member, gone with it)" {
			t.Errorf("the embedded member's endpoint in the settings: %q", s.Value)
		}
	}
	r.Target = &result.Target{Kind: "external", Endpoints: []string{"https://10.0.0.1:2379"}}
	r.Env.Endpoints = "https://10.0.0.1:2379"
	if got := where(r); !strings.Contains(got, "https://10.0.0.1:2379") || strings.Contains(got, "embedded") {
		t.Errorf("an external cluster: where = %q", got)
	}
}

// Settings carry their units; a key space of every key is not a float.
func TestSettingsWithUnits(t *testing.T) {
	r := result.New("check")
	r.Params = result.RawParams{"duration": 2.5, "command_timeout": 5.0, "key_space_size": int64(math.MaxInt64),
		"disk_size": int64(22 << 20), "bs": 2300, "val_size": 1024, "clients": 50, "rate": 150.0}
	got := map[string]string{}
	for _, s := range settings(r) {
		got[s.Key] = s.Value
	}
	for k, want := range map[string]string{"params.duration": "2.5s", "params.command_timeout": "5s",
		"params.key_space_size": "unbounded (a new random key each time)", "params.disk_size": "22 MiB",
		"params.bs": "2300 B", "params.val_size": "1 KiB", "params.clients": "50", "params.rate": "150/s"} {
		if got[k] != want {
			t.Errorf("%s = %q, want %q", k, got[k], want)
		}
	}
}

// seriesRun is a bench run of n one-second samples at a rate of 150/s.
func seriesRun(name string, n int) *result.Result {
	r := result.New("bench")
	r.Name = name
	r.Bench = &result.Bench{Ops: int64(150 * n), Throughput: 150, Latency: &result.Latency{Count: int64(150 * n), P50: 0.002, P99: 0.005}}
	r.Bench.Rate = 150
	for i := range n {
		r.Bench.Series = append(r.Bench.Series, result.Sample{T: float64(i + 1), Ops: 150 - int64(i%3), P99: 0.005})
	}
	r.Host = &result.Host{Device: "vda"}
	for i := range n {
		r.Host.Series = append(r.Host.Series, result.HostSample{T: float64(i + 1), Util: 0.1, CPUBusy: 0.3})
	}
	return r
}

// A run of 2.5s has two samples: no chart over time, and a note that says
// why. A longer run has the chart, with the rate the load asked for.
func TestOverTimeChartsNeedPoints(t *testing.T) {
	short := New(seriesRun("short", 2))
	for _, c := range short.Charts() {
		if strings.HasSuffix(c.Title, "over time") {
			t.Errorf("a 2-point chart %q", c.Title)
		}
	}
	p := pageOf(t, short.Root)
	for _, want := range []string{"No chart over time of throughput; p99 latency: the run has 2 points, 1s apart",
		"No chart over time of device utilisation and CPU iowait; CPU busy and steal: the run has 2 points"} {
		if !strings.Contains(p, want) {
			t.Errorf("the page lacks %q", want)
		}
	}

	long := New(seriesRun("long", minTimePoints))
	var titles []string
	for _, c := range long.Charts() {
		titles = append(titles, c.Title)
		if c.Name == "bench-throughput" {
			svg, err := c.SVG()
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(svg), "target 150/s") {
				t.Error("the throughput chart has no line at the target rate")
			}
		}
	}
	if got := strings.Join(titles, ","); !strings.Contains(got, "throughput over time") || !strings.Contains(got, "CPU busy and steal over time") {
		t.Errorf("charts of a %d-second run: %s", minTimePoints, got)
	}
	if strings.Contains(pageOf(t, long.Root), "No chart over time") {
		t.Error("a note about missing charts on a run that has them")
	}
}

// compare names a better run only beyond the noise floor.
func TestNoiseFloor(t *testing.T) {
	v := func(xs ...float64) []*Value {
		var out []*Value
		for _, x := range xs {
			out = append(out, &Value{V: x})
		}
		return out
	}
	for _, c := range []struct {
		name string
		unit string
		dir  Better
		vs   []*Value
		tie  bool
	}{
		{"120µs against 115µs", "s", Lower, v(120e-6, 115e-6), true},
		{"CPU steal 0.01% against 0.02%", "ratio", Lower, v(0.0001, 0.000197), true},
		{"10ms against 10.5ms", "s", Lower, v(0.010, 0.0105), true},
		{"10ms against 12ms", "s", Lower, v(0.010, 0.012), false},
		{"1ms against 300µs", "s", Lower, v(0.001, 0.0003), false},
		{"iowait 5% against 5.8%", "ratio", Lower, v(0.05, 0.058), true},
		{"iowait 5% against 20%", "ratio", Lower, v(0.05, 0.20), false},
		{"no error against 1", "count", Lower, v(0, 1), false},
		{"1000/s against 1080/s", "ops/s", Higher, v(1000, 1080), true},
		{"1000/s against 1500/s", "ops/s", Higher, v(1000, 1500), false},
	} {
		b, _ := best(c.dir, c.unit, c.vs)
		if (b == Tie) != c.tie {
			t.Errorf("%s: best %d, tie expected %v", c.name, b, c.tie)
		}
	}
	steal := Metric{Label: "CPU steal", Unit: "ratio", Better: Lower}
	if r := ratio(steal, &Value{V: 0.000197}, &Value{V: 0.0001}); !math.IsNaN(r) {
		t.Errorf("a ratio of %g between two values shown as 0.0%%", r)
	}

	// In compare: two runs 4% apart tie, and the footnote says where the
	// floor is.
	a, b := seriesRun("a", 3), seriesRun("b", 3)
	b.Bench.Latency.P99 = 0.0052
	b.Started = a.Started.Add(time.Minute)
	var buf bytes.Buffer
	if err := New(Compare([]Input{{Result: a}, {Result: b}})).Text(&buf); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	line := ""
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "request latency p99 ") {
			line = l
		}
	}
	if !strings.HasSuffix(line, "tie") {
		t.Errorf("5ms against 5.2ms: %q", line)
	}
	if !strings.Contains(out, "a tie is a difference of at most 10%, or at most 50µs for a latency") {
		t.Errorf("compare does not say what a tie is:\n%s", out)
	}
}
