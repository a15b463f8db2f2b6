package e2e

import (
	"context"
	"fmt"
	"math/rand"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/etcdperf/etcdperf/internal/limits"
	"github.com/etcdperf/etcdperf/internal/result"
	"github.com/etcdperf/etcdperf/internal/testutil"
)

// TestPromCompactionSpikes: a real Prometheus scrapes a member whose disk
// writes are capped at 2 MB/s (a cgroup throttle) while a modest put load
// rewrites keys at random and a client compacts at the latest revision
// every 3 seconds. The puts commit a few KB at a time and stay fast; each
// compaction deletes a period's old revisions, scattered over the whole
// database, and commits every page they lived in: a commit of a few
// hundred KB that the cap makes take a few hundred milliseconds, and the
// member's WAL writes wait behind it in the throttle. Its backend commit
// and WAL fsync spike at each compaction; prom check sees the WAL fsync
// p99 pass its limit there (at 10 commits a second a 2s window holds too
// few backend commits for a p99) and nowhere else, and names the spikes
// compaction_spikes on the member, with the compactions' period.
func TestPromCompactionSpikes(t *testing.T) {
	dir := skipWithoutIOCap(t)
	if testutil.QuietDiskSupported() == nil {
		// a disk of its own: the other work's I/O on the machine's disk
		// does not queue the member's writes between compactions
		dir = testutil.MountQuietDisk(t, "512M")
	}
	const (
		capBPS   = "2m"
		keys     = 500
		valSize  = 2048
		putsPerS = 80
		every    = 3 * time.Second
		rounds   = 5
	)
	ep := fmt.Sprintf("127.0.0.1:%d", testutil.FreePort(t))
	peer := fmt.Sprintf("http://127.0.0.1:%d", testutil.FreePort(t))
	t0 := time.Now()
	// Prometheus first: it applies its targets some seconds after it
	// starts, while the member starts and is filled.
	prom := testutil.StartPrometheus(t, testutil.PrometheusOptions{Interval: 500 * time.Millisecond, Jobs: map[string][]string{"etcd": {ep}}})
	cli, stopMember := startServerWith(t, filepath.Join(dir, "data"), filepath.Join(t.TempDir(), "etcd.log"), ep, peer, "--write-bps-limit", capBPS)
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
	defer cancel()

	val := func(r *rand.Rand) string {
		b := make([]byte, valSize)
		for i := range b {
			b[i] = byte('a' + r.Intn(26))
		}
		return string(b)
	}
	key := func(i int) string { return fmt.Sprintf("/spikes/%05d", i) }
	// The keys, once each: the database the compactions delete from.
	seed := func(w int) error {
		r := rand.New(rand.NewSource(int64(w)))
		for i := w; i < keys; i += 16 {
			if _, err := cli.Put(ctx, key(i), val(r)); err != nil {
				return err
			}
		}
		return nil
	}
	if err := parallel(16, seed); err != nil {
		t.Fatal(err)
	}
	// The seed's own writes under the cap are slow: the period judged
	// starts after they have left the first point's window.
	quiet := time.Now().Add(2 * time.Second)
	prom.WaitFor(t, 10*time.Second, `count(etcd_debugging_mvcc_db_compaction_total_duration_milliseconds_count)`, func(m map[string]float64) bool { return m[""] >= 1 })
	t.Logf("seeded %d keys of %d B, first scrape after %s", keys, valSize, time.Since(t0).Round(time.Millisecond))
	time.Sleep(time.Until(quiet))

	// A paced load rewriting random keys, and a compaction at the latest
	// revision every period.
	loadCtx, stopLoad := context.WithCancel(ctx)
	defer stopLoad()
	tick := time.NewTicker(time.Second / putsPerS)
	defer tick.Stop()
	var puts sync.WaitGroup
	loadErr := make(chan error, 8)
	for w := 0; w < 8; w++ {
		puts.Add(1)
		go func(w int) {
			defer puts.Done()
			r := rand.New(rand.NewSource(int64(100 + w)))
			for {
				select {
				case <-loadCtx.Done():
					return
				case <-tick.C:
				}
				if _, err := cli.Put(loadCtx, key(r.Intn(keys)), val(r)); err != nil && loadCtx.Err() == nil {
					loadErr <- err
					return
				}
			}
		}(w)
	}
	start := time.Now()
	sched := time.NewTicker(every)
	defer sched.Stop()
	var ends []time.Time
	var took []time.Duration
	for i := 0; i < rounds; i++ {
		select {
		case <-sched.C:
		case err := <-loadErr:
			t.Fatalf("put: %v", err)
		}
		g, err := cli.Get(ctx, "/spikes/none")
		if err != nil {
			t.Fatal(err)
		}
		began := time.Now()
		if _, err := cli.Compact(ctx, g.Header.Revision, clientv3.WithCompactPhysical()); err != nil {
			t.Fatal(err)
		}
		ends, took = append(ends, time.Now()), append(took, time.Since(began))
	}
	// a quiet period past the last compaction, to see the latency fall back
	time.Sleep(time.Second)
	stopLoad()
	puts.Wait()
	// until Prometheus has scraped every compaction
	prom.WaitFor(t, 10*time.Second, fmt.Sprintf(`sum(increase(etcd_debugging_mvcc_db_compaction_total_duration_milliseconds_count[%ds]))`, int(time.Since(start).Seconds())+2),
		func(m map[string]float64) bool { return m[""] >= rounds-0.5 })
	end := time.Now().Add(time.Second)
	gaps := make([]float64, 0, len(ends)-1)
	for i := 1; i < len(ends); i++ {
		gaps = append(gaps, ends[i].Sub(ends[i-1]).Seconds())
	}
	sort.Float64s(gaps)
	period := gaps[len(gaps)/2]
	t.Logf("%d compactions every %.2fs (took %v), load until %s", len(ends), period, took, time.Since(t0).Round(time.Millisecond))

	r := testutil.RunBinary(t, 30*time.Second, "prom", "check", "--url", prom.URL, "--selector", `job="etcd"`,
		"--start", start.Add(time.Second).Truncate(time.Second).Format(time.RFC3339), "--end", end.Truncate(time.Second).Format(time.RFC3339),
		"--step", "1s", "--window", "2s", "-o", "json")
	if r.Code == 2 {
		t.Fatalf("prom check: exit 2: %s", r.Stderr)
	}
	res := decodeResult(t, r.Stdout)
	logLatencies(t, res, ep, ends)
	logSlow(t, prom, ep, time.Since(start))
	var c *result.Compactions
	for i := range res.Prom.Compactions {
		if res.Prom.Compactions[i].Member == ep {
			c = &res.Prom.Compactions[i]
		}
	}
	if c == nil {
		t.Fatalf("prom check saw no compactions of %s: %+v", ep, res.Prom.Compactions)
	}
	for _, b := range res.Prom.Breaches {
		if b.Instance == ep {
			for _, w := range b.Windows {
				t.Logf("%s breached from %s to %s", b.Check, w.From.Format("15:04:05.000"), w.To.Format("15:04:05.000"))
			}
		}
	}
	t.Logf("compactions ended (prom check) at %v, (client) at %v", c.Ends, ends)
	t.Logf("prom check: %d compactions every %.2fs, %d spikes, %d near one; findings:\n%s", c.Count, c.Period, c.Spikes, c.Near, findingLines(res))
	if c.Count != rounds || c.Period < 0.7*period || c.Period > 1.3*period {
		t.Errorf("prom check read %d compactions every %.2fs; %d were made every %.2fs", c.Count, c.Period, rounds, period)
	}
	if c.Near < 2 || 2*c.Near < c.Spikes {
		t.Errorf("%d of %d latency spikes near a compaction", c.Near, c.Spikes)
	}
	f, ok := findingOf(res, "compaction_spikes")
	if !ok || len(f.Members) != 1 || f.Members[0] != ep || !strings.Contains(f.Title, ep+":") {
		t.Errorf("no compaction_spikes finding on %s", ep)
	}
	stopMember()
	if g := ownGroups(t); len(g) > 0 {
		t.Errorf("cgroups left: %v", g)
	}
}

// parallel runs f(0..n-1) at once and returns the first error.
func parallel(n int, f func(w int) error) error {
	errs := make(chan error, n)
	var wg sync.WaitGroup
	for w := 0; w < n; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			errs <- f(w)
		}(w)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// logLatencies logs the member's WAL fsync and backend commit p99 at each
// evaluation point of a prom check, marking the points within two seconds
// after a compaction's end, and the most each reached at them and between.
func logLatencies(t *testing.T, res *result.Result, instance string, ends []time.Time) {
	t.Helper()
	tb := res.Prom.Table
	if tb == nil {
		return
	}
	for _, id := range []string{limits.WALFsyncP99, limits.BackendCommitP99} {
		col := -1
		for j, c := range tb.Columns {
			if c.Query == id && c.Labels["instance"] == instance {
				col = j
			}
		}
		if col < 0 {
			continue
		}
		var line strings.Builder
		var at, between float64
		for i, ts := range tb.Time {
			v := tb.Rows[i][col]
			near := false
			for _, e := range ends {
				if d := ts - float64(e.UnixNano())/1e9; d >= 0 && d <= 2.5 {
					near = true
				}
			}
			mark := " "
			if near {
				mark = "*"
			}
			fmt.Fprintf(&line, " %s%s", mark, v.String())
			if v.Finite() {
				if near {
					at = max(at, v.V)
				} else {
					between = max(between, v.V)
				}
			}
		}
		t.Logf("%s (* within 2.5s after a compaction): most %.1fms at compactions, %.1fms between:%s", id, at*1000, between*1000, line.String())
	}
}

// logSlow logs how many of the member's WAL fsyncs and backend commits
// since start took longer than 32ms.
func logSlow(t *testing.T, prom *testutil.Prometheus, instance string, since time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, h := range []string{"etcd_disk_wal_fsync_duration_seconds", "etcd_disk_backend_commit_duration_seconds"} {
		q := func(le string) float64 {
			m, err := prom.Query(ctx, fmt.Sprintf(`sum by (instance) (increase(%s_bucket{le=%q}[%ds]))`, h, le, int(since.Seconds())+2))
			if err != nil {
				t.Log(err)
			}
			return m[instance]
		}
		all := q("+Inf")
		t.Logf("%s: %.0f in all, %.0f over 32ms", h, all, all-q("0.032"))
	}
}
