package e2e

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/etcdperf/etcdperf/internal/promexport"
	"github.com/etcdperf/etcdperf/internal/result"
	"github.com/etcdperf/etcdperf/internal/testutil"
	"github.com/etcdperf/etcdperf/internal/units"
)

// startEtcd starts one embedded etcd member on 127.0.0.1 with its data in
// a temporary directory, stopped at the end of the test. It returns the
// client address (host:port), which also serves /metrics.
func startEtcd(t *testing.T) string {
	t.Helper()
	return testutil.StartEmbeddedEtcd(t).Client.Endpoints()[0]
}

// putLoad writes n keys with a few concurrent clients, in batches with a
// pause between them so that the counters climb in steps, and deletes them.
func putLoad(t *testing.T, endpoint string, n, batches int, pause time.Duration) {
	t.Helper()
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{endpoint}, DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	const workers = 16
	per := n / batches
	for b := 0; b < batches; b++ {
		if b > 0 {
			time.Sleep(pause)
		}
		var wg sync.WaitGroup
		errs := make(chan error, workers)
		for w := 0; w < workers; w++ {
			wg.Add(1)
			go func(w int) {
				defer wg.Done()
				for i := b*per + w; i < (b+1)*per; i += workers {
					if _, err := cli.Put(ctx, fmt.Sprintf("/etcdperf-e2e/%06d", i), strings.Repeat("v", 256)); err != nil {
						errs <- err
						return
					}
				}
			}(w)
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatalf("put: %v", err)
		}
	}
	if _, err := cli.Delete(ctx, "/etcdperf-e2e/", clientv3.WithPrefix()); err != nil {
		t.Fatal(err)
	}
}

func readCSV(t *testing.T, s string) (header []string, rows [][]string) {
	t.Helper()
	recs, err := csv.NewReader(strings.NewReader(s)).ReadAll() // fails on rows of another width
	if err != nil {
		t.Fatalf("not an aligned CSV: %v\n%s", err, s)
	}
	if len(recs) < 2 {
		t.Fatalf("CSV without rows:\n%s", s)
	}
	return recs[0], recs[1:]
}

func column(t *testing.T, header []string, name string) int {
	t.Helper()
	for i, h := range header {
		if h == name {
			return i
		}
	}
	t.Fatalf("no column %s in %v", name, header)
	return -1
}

// TestPromAgainstEmbeddedEtcd is the Prometheus workflow of etcd health tests end to end:
// a real Prometheus scrapes an embedded etcd every second while it takes
// a few thousand puts, then `prom export` and `prom check` read the
// history back.
func TestPromAgainstEmbeddedEtcd(t *testing.T) {
	testutil.Binary(t) // build first, so that the load is not squeezed by the compiler
	member := startEtcd(t)
	prom := testutil.StartPrometheus(t, testutil.PrometheusOptions{Jobs: map[string][]string{"etcd": {member}}})
	prom.WaitFor(t, 30*time.Second, `sum(count_over_time(etcd_server_has_leader[1m]))`, func(m map[string]float64) bool { return m[""] >= 2 })
	// The period starts on the next whole second, once Prometheus has
	// samples, and before the load.
	start := time.Now().Truncate(time.Second).Add(time.Second)
	time.Sleep(time.Until(start.Add(500 * time.Millisecond)))

	// etcd's counters live as long as the process: another test of this
	// binary may have put keys into an embedded etcd already, so the load
	// is measured from the counter's value before it.
	base := prom.WaitFor(t, 30*time.Second, `etcd_mvcc_put_total`, func(m map[string]float64) bool { _, ok := m[member]; return ok })[member]
	const puts = 2000
	putLoad(t, member, puts, 2, 3*time.Second)
	// A few scrapes after the load, so that the rate windows hold it.
	seen := prom.WaitFor(t, 30*time.Second, `etcd_mvcc_put_total`, func(m map[string]float64) bool { return m[member] >= base+puts })
	time.Sleep(3 * time.Second)
	end := time.Now().Truncate(time.Second)
	rangeArgs := []string{"--url", prom.URL, "--start", start.Format(time.RFC3339), "--end", end.Format(time.RFC3339), "--step", "1s", "--window", "5s"}

	t.Run("export csv", func(t *testing.T) {
		// up is written at every scrape, failed or not: it keeps a row at
		// every step even if a scrape of a busy etcd times out.
		r := testutil.RunBinary(t, time.Minute, append([]string{"prom", "export", "--preset", "etcd",
			"--query", "puts=sum by (instance) (etcd_mvcc_put_total)", "--query", `up=up{job="etcd"}`, "-o", "csv"}, rangeArgs...)...)
		if r.Code != 0 {
			t.Fatalf("exit %d: %s", r.Code, r.Stderr)
		}
		header, rows := readCSV(t, r.Stdout)
		if header[0] != "time" || header[1] != "unix" {
			t.Errorf("header starts %v", header[:2])
		}
		if want := int(end.Sub(start)/time.Second) + 1; len(rows) != want {
			t.Errorf("%d rows, want %d (one per second)", len(rows), want)
		}
		putCol := column(t, header, "puts{instance="+member+"}")
		fsync := column(t, header, "wal_fsync_p99{instance="+member+"}")
		commit := column(t, header, "backend_commit_p99{instance="+member+"}")
		rate := column(t, header, "puts_rate{instance="+member+"}")
		db := column(t, header, "db_size{instance="+member+"}")
		first, last, prev := -1.0, -1.0, -1.0
		var fsyncs, commits, maxRate float64
		dbSizes := 0
		for i, row := range rows {
			ts, err := time.Parse(time.RFC3339Nano, row[0])
			if err != nil || ts.Unix() != start.Unix()+int64(i) || row[1] != strconv.FormatInt(ts.Unix(), 10) {
				t.Errorf("row %d time %q unix %q", i, row[0], row[1])
			}
			if row[putCol] == "" {
				continue
			}
			v, err := strconv.ParseFloat(row[putCol], 64)
			if err != nil {
				t.Fatalf("puts cell %q", row[putCol])
			}
			if v < prev {
				t.Errorf("the put counter went down at row %d: %v after %v", i, v, prev)
			}
			if first < 0 {
				first = v
			}
			prev, last = v, v
			if f, err := strconv.ParseFloat(row[fsync], 64); err == nil && f > 0 {
				fsyncs++
			}
			if f, err := strconv.ParseFloat(row[rate], 64); err == nil {
				maxRate = max(maxRate, f)
			}
			if f, err := strconv.ParseFloat(row[commit], 64); err == nil && f > 0 {
				commits++
			}
			if row[db] != "" {
				dbSizes++
			}
		}
		if last-first < puts || last != seen[member] {
			t.Errorf("the put counter went from %v to %v, want an increase of %d to %v", first, last, puts, seen[member])
		}
		if dbSizes < len(rows)/2 {
			t.Errorf("the db size is in %d of %d rows", dbSizes, len(rows))
		}
		if fsyncs < 3 || commits < 3 || maxRate <= 0 {
			t.Errorf("WAL fsync p99 has %v numeric points, backend commit p99 %v; puts rate peaks at %v", fsyncs, commits, maxRate)
		}
	})

	t.Run("export json with plot data", func(t *testing.T) {
		r := testutil.RunBinary(t, time.Minute, append([]string{"prom", "export", "--query", "puts=sum by (instance) (etcd_mvcc_put_total)",
			"--query", "fsyncs=sum by (instance) (etcd_disk_wal_fsync_duration_seconds_count)", "--matrix", "--matrix=puts", "-o", "json"}, rangeArgs...)...)
		if r.Code != 0 {
			t.Fatalf("exit %d: %s", r.Code, r.Stderr)
		}
		res := decodeResult(t, r.Stdout)
		p := res.Prom
		if res.Kind != "prom" || p == nil || p.Table == nil || len(p.Table.Columns) != 2 || len(p.Queries) != 2 || p.Step != 1 {
			t.Fatalf("prom section %+v", p)
		}
		if len(p.Plots) != 3 { // puts vs time, fsyncs vs time, fsyncs vs puts
			t.Fatalf("plots %+v", p.Plots)
		}
		vs := p.Plots[2]
		if vs.Title != "fsyncs vs puts" || len(vs.Lines) != 1 || len(vs.Lines[0].Points) < 6 {
			t.Fatalf("fsyncs vs puts %+v", vs)
		}
		// etcd fsyncs its WAL at least once per put batch: the more puts, the more fsyncs.
		pts := vs.Lines[0].Points
		if a, b := pts[0], pts[len(pts)-1]; b[0]-a[0] < puts || b[1] <= a[1] {
			t.Errorf("fsyncs vs puts from %v to %v", a, b)
		}
	})

	t.Run("check", func(t *testing.T) {
		r := testutil.RunBinary(t, time.Minute, append([]string{"prom", "check", "-o", "json"}, rangeArgs...)...)
		res := decodeResult(t, r.Stdout)
		if want := map[result.Verdict]int{result.Pass: 0, result.Warn: 0, result.Fail: 1}[res.Verdict]; r.Code != want || res.Verdict == "" {
			t.Fatalf("verdict %q with exit %d: %s", res.Verdict, r.Code, r.Stderr)
		}
		p := res.Prom
		if res.Kind != "prom-check" || p == nil || len(p.Members) != 1 || p.Members[0].Instance != member {
			t.Fatalf("members %+v", p)
		}
		obs := p.Members[0].Observed
		if obs["wal_fsync_p99"] <= 0 || obs["backend_commit_p99"] <= 0 || obs["leader_changes"] != 0 || obs["proposals_failed"] != 0 || obs["has_leader"] != 1 {
			t.Errorf("observed over the period %v", obs)
		}
		names := map[string]result.Check{}
		for _, c := range res.Checks {
			names[c.Name] = c
		}
		if c := names["wal_fsync_p99"]; c.Observed != obs["wal_fsync_p99"] || c.Limit != 0.010 {
			t.Errorf("wal_fsync_p99 check %+v", c)
		}
		if len(names) != 4 || names["leader_changes"].Status != result.StatusPass {
			t.Errorf("checks %+v", res.Checks)
		}
		// The member's database over the period, and the quota from it:
		// etcd's default, which it reports, kept.
		if len(p.Databases) != 1 || p.Databases[0].Instance != member || p.Databases[0].Size <= 0 || p.Databases[0].Quota != 2<<30 {
			t.Errorf("databases %+v", p.Databases)
		}
		var quota *result.TunedFlag
		for i, f := range res.Tuning.Flags {
			if f.Name == "quota-backend-bytes" {
				quota = &res.Tuning.Flags[i]
			}
		}
		if quota == nil || quota.Action != result.TuneKeep || quota.Current != 2<<30 || !strings.Contains(quota.Why, "a day over the last") {
			t.Errorf("quota %+v", quota)
		}
	})

	t.Run("check fails on a limit no disk meets, with windows", func(t *testing.T) {
		r := testutil.RunBinary(t, time.Minute, append([]string{"prom", "check", "--limit", "wal_fsync_p99=1ns"}, rangeArgs...)...)
		if r.Code != 1 || !strings.Contains(r.Stdout, "FAIL wal_fsync_p99") || !strings.Contains(r.Stdout, "Verdict: FAIL") {
			t.Fatalf("exit %d\n%s\n%s", r.Code, r.Stdout, r.Stderr)
		}
		if !strings.Contains(r.Stdout, "wal_fsync_p99 on "+member) || !strings.Contains(r.Stdout, "[critical] The limit on the WAL fsync p99 was passed on "+member) {
			t.Errorf("no breach windows for the member:\n%s", r.Stdout)
		}
	})

	t.Run("check passes with generous limits", func(t *testing.T) {
		r := testutil.RunBinary(t, time.Minute, append([]string{"prom", "check", "-o", "json",
			"--limit", "wal_fsync_p99=60s", "--limit", "backend_commit_p99=60s"}, rangeArgs...)...)
		res := decodeResult(t, r.Stdout)
		if r.Code != 0 || res.Verdict == result.Fail || len(res.Prom.Breaches) != 0 {
			t.Errorf("exit %d, verdict %s, breaches %+v, findings %+v", r.Code, res.Verdict, res.Prom.Breaches, res.Findings)
		}
	})

	t.Run("errors", func(t *testing.T) {
		cases := []struct {
			args []string
			want string
		}{
			{[]string{"prom", "export", "--url", "http://127.0.0.1:" + strconv.Itoa(testutil.FreePort(t)), "--query", "x=up"}, "connection refused"},
			{[]string{"prom", "export", "--url", prom.URL, "--query", "x=rate(up[5m)"}, "parse error"},
			{[]string{"prom", "export", "--url", prom.URL, "--query", "x=no_such_metric"}, "no data in Prometheus"},
			{[]string{"prom", "check", "--url", prom.URL, "--selector", `job="other"`}, "no etcd_server_has_leader series"},
			{[]string{"prom", "export", "--url", prom.URL, "--since", "yesterday"}, "--since"},
			{[]string{"prom", "export"}, "--url is required"},
			{[]string{"prom", "export", "--url", prom.URL, "--user", "me"}, "ETCDPERF_PROM_PASSWORD"},
		}
		for _, c := range cases {
			r := testutil.RunBinary(t, time.Minute, c.args...)
			if r.Code != 2 || !strings.Contains(r.Stderr, c.want) || strings.Count(strings.TrimSpace(r.Stderr), "\n") != 0 || r.Stdout != "" {
				t.Errorf("%v: exit %d, stderr %q (want one line with %q), stdout %q", c.args, r.Code, r.Stderr, c.want, r.Stdout)
			}
		}
	})

	t.Run("csv file written atomically", func(t *testing.T) {
		dir := t.TempDir()
		out := filepath.Join(dir, "etcd.csv")
		r := testutil.RunBinary(t, time.Minute, append([]string{"prom", "export", "-o", out}, rangeArgs...)...)
		if r.Code != 0 || !strings.Contains(r.Stdout, "wal_fsync_p99{instance="+member+"}") {
			t.Fatalf("exit %d\n%s\n%s", r.Code, r.Stdout, r.Stderr)
		}
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		header, _ := readCSV(t, string(b))
		column(t, header, "rss{instance="+member+"}")
		entries, _ := os.ReadDir(dir)
		if len(entries) != 1 {
			t.Errorf("files left in %s: %v", dir, entries)
		}
	})
}

// The write demand of a cluster from a real Prometheus that scrapes it:
// prom check's peak of the members' rates is the load's steady rate
// (300 puts/s, within 10%), and doctor --demand-from judges a storage's
// capacity against the p99 of the cluster's 1-minute rates.
func TestPromDemand(t *testing.T) {
	testutil.Binary(t)
	member := startEtcd(t)
	prom := testutil.StartPrometheus(t, testutil.PrometheusOptions{Jobs: map[string][]string{"etcd": {member}}})
	prom.WaitFor(t, 30*time.Second, `sum(count_over_time(etcd_server_has_leader[1m]))`, func(m map[string]float64) bool { return m[""] >= 2 })
	start := time.Now().Truncate(time.Second)
	walBytes, proposals := walCounters(t, member)
	if r := testutil.RunBinary(t, time.Minute, "bench", "put", "--endpoints", member, "--rate", "300", "--duration", "10s", "--clients", "8", "--val-size", "1000", "-q"); r.Code != 0 && r.Code != 1 {
		t.Fatalf("the load: exit %d, stderr %s", r.Code, r.Stderr)
	}
	// The mean write as the member's own counters say it over the load.
	b1, p1 := walCounters(t, member)
	meanWrite := (b1 - walBytes) / (p1 - proposals)
	time.Sleep(3 * time.Second)
	end := time.Now().Truncate(time.Second)
	r := testutil.RunBinary(t, time.Minute, "prom", "check", "--url", prom.URL, "--start", start.Format(time.RFC3339), "--end", end.Format(time.RFC3339),
		"--step", "1s", "--window", "3s", "-o", "json")
	if r.Code != 0 && r.Code != 1 {
		t.Fatalf("prom check: exit %d, stderr %s", r.Code, r.Stderr)
	}
	res := decodeResult(t, r.Stdout)
	d := res.Prom.Demand
	if d == nil || d.PutsMax < 270 || d.PutsMax > 330 || d.ProposalsMax < 0.9*d.PutsMax || d.Window != 3 {
		t.Fatalf("demand %+v: want a peak of ~300 puts/s (within 10%%), as many proposals", d)
	}
	t.Logf("demand from Prometheus: %+v", d)

	dir := t.TempDir()
	// The demand, and the cluster's database size and mean write asked for
	// by name: the sweep fills its etcd with the database's size in use and
	// puts values of the mean write, and its answer says so.
	r = testutil.RunBinary(t, 2*time.Minute, "doctor", "--data-dir", dir, "--duration", "2s", "--disk-runtime", "0", "--capacity-step", "1s", "--capacity-confirm", "0",
		"--demand-from", prom.URL, "--demand-since", "2m", "--db-size", "from-prometheus", "--value-size", "from-prometheus", "--no-report", "-o", "json")
	if r.Code != 0 && r.Code != 1 {
		t.Fatalf("doctor --demand-from: exit %d, stderr %s", r.Code, r.Stderr)
	}
	run := decodeResult(t, r.Stdout).Runs[0]
	c := run.Capacity
	if c == nil || c.Demand <= 0 || c.Demand > 330 || !strings.Contains(c.DemandFrom, prom.URL) || c.Headroom != c.PutsPerS/c.Demand || !strings.Contains(c.Answer, "headroom") {
		t.Fatalf("capacity %+v: want it judged against the cluster's peak from %s", c, prom.URL)
	}
	// The member started just before the load: increase() extrapolates
	// its young counters a little differently (a few percent).
	if v := float64(c.ValueSize); v < meanWrite*0.95 || v > meanWrite*1.05 || !strings.Contains(c.ValueSizeFrom, "WAL") || !strings.Contains(c.ValueSizeFrom, prom.URL) {
		t.Errorf("value size %d (%s), want the member's mean write %.0f within 5%%", c.ValueSize, c.ValueSizeFrom, meanWrite)
	}
	if c.DBSize < 3000*1000 || !strings.Contains(c.DBSizeFrom, "in use") || c.FillSeconds <= 0 {
		t.Errorf("db size %d (%s) filled in %gs, want the member's database in use, over the load's values", c.DBSize, c.DBSizeFrom, c.FillSeconds)
	}
	for _, want := range []string{"the database's size (", "the values' size (", "over 2m at " + prom.URL} {
		if !strings.Contains(c.Answer, want) {
			t.Errorf("the answer does not say %q: %s", want, c.Answer)
		}
	}
	t.Logf("filled %s in %.1fs; answer: %s", units.Size(c.DBSize), c.FillSeconds, c.Answer)
	found := false
	for _, ch := range run.Checks {
		found = found || ch.Name == "capacity_headroom"
	}
	if !found {
		t.Errorf("no capacity_headroom check: %+v", run.Checks)
	}
	assertEmptyDir(t, dir)
	// Unreachable: one line, exit 2, before anything is measured.
	r = testutil.RunBinary(t, time.Minute, "doctor", "--data-dir", dir, "--demand-from", "http://127.0.0.1:1", "--no-report")
	if r.Code != 2 || strings.Count(r.Stderr, "\n") != 1 || !strings.Contains(r.Stderr, "--demand-from http://127.0.0.1:1") {
		t.Errorf("unreachable Prometheus: exit %d, stderr %q", r.Code, r.Stderr)
	}
	assertEmptyDir(t, dir)
	// The sizes from a Prometheus: only with --demand-from, only in doctor,
	// only over a period with writes; each one line, exit 2.
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"doctor", "--db-size", "from-prometheus"}, "--db-size from-prometheus reads the cluster's metrics from the Prometheus of --demand-from URL"},
		{[]string{"doctor", "--value-size", "from-prom"}, "a size such as 4k or 2g, or from-prometheus"},
		{[]string{"check", "--value-size", "from-prometheus"}, "with etcdperf doctor --demand-from URL; here give a size"},
		{[]string{"doctor", "--demand-from", prom.URL, "--demand-since", "2m", "--endpoints", member, "--capacity", "--db-size", "from-prometheus"}, "it would fill the cluster"},
		{[]string{"doctor", "--demand-from", prom.URL, "--value-size", "from-prometheus", "--demand-since", "1s"}, "no data in Prometheus"},
	} {
		args := append(c.args, "--data-dir", dir)
		if c.args[0] == "doctor" {
			args = append(args, "--no-report")
		}
		r := testutil.RunBinary(t, 30*time.Second, args...)
		if r.Code != 2 || !strings.Contains(r.Stderr, c.want) || strings.Count(r.Stderr, "\n") != 1 {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and one line with %q", c.args, r.Code, r.Stderr, c.want)
		}
		assertEmptyDir(t, dir)
	}
	// A Prometheus without etcd's series names the one it lacks.
	pc, err := promexport.New(promexport.Options{URL: prom.URL, Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	rg := promexport.Resolved{Start: start, End: time.Now(), Step: time.Second}
	if _, err := pc.MeanWrite(context.Background(), rg, `job="none"`); !errors.Is(err, promexport.ErrNoData) || !strings.Contains(err.Error(), "etcd_server_proposals_committed_total") {
		t.Errorf("no series: %v", err)
	}
	if _, err := pc.DBSize(context.Background(), rg, `job="none"`); !errors.Is(err, promexport.ErrNoData) || !strings.Contains(err.Error(), "etcd_mvcc_db_total_size_in_use_in_bytes") {
		t.Errorf("no series: %v", err)
	}
}

// walCounters reads a member's WAL bytes written and proposals committed
// from its /metrics.
func walCounters(t *testing.T, member string) (walBytes, proposals float64) {
	t.Helper()
	resp, err := http.Get("http://" + member + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	get := func(name string) float64 {
		m := regexp.MustCompile(`(?m)^` + name + ` (\S+)$`).FindSubmatch(b)
		if m == nil {
			t.Fatalf("%s has no %s", member, name)
		}
		v, err := strconv.ParseFloat(string(m[1]), 64)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	return get("etcd_disk_wal_write_bytes_total"), get("etcd_server_proposals_committed_total")
}
