package e2e

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/etcdperf/etcdperf/internal/diagnose"
	"github.com/etcdperf/etcdperf/internal/result"
	"github.com/etcdperf/etcdperf/internal/testutil"
)

// TestPromNodeDisk: prom check joins node-exporter's device figures of the
// member's host (an exporter on 127.0.0.1 serving node_disk_* counters: a
// device that writes 150 times a second, busy 95% of the time) to the
// member on that host, and judges them: with --volume-iops 200 the device
// used 75% of it, an IOPS cap named (a warning while the member's
// latencies stayed under their limits, critical when one passed its
// limit); with a WAL fsync limit the member passed, writes flat on a busy
// device are a cap or a disk at its limit, both said.
func TestPromNodeDisk(t *testing.T) {
	testutil.Binary(t)
	// A disk of its own: the member's commits do not queue behind the
	// machine's other writers (on the machine's disk, a CI run's backend
	// commit p99 passed its limit, 25.4ms).
	member := testutil.StartEmbeddedEtcdIn(t, testutil.QuietDirOr(t, "256M")).Client.Endpoints()[0]
	began := time.Now()
	exporter := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s := time.Since(began).Seconds()
		fmt.Fprintf(w, "# TYPE node_disk_writes_completed_total counter\nnode_disk_writes_completed_total{device=\"vdb\"} %g\n"+
			"# TYPE node_disk_io_time_seconds_total counter\nnode_disk_io_time_seconds_total{device=\"vdb\"} %g\n", 150*s, 0.95*s)
	}))
	defer exporter.Close()
	node := strings.TrimPrefix(exporter.URL, "http://")
	prom := testutil.StartPrometheus(t, testutil.PrometheusOptions{Jobs: map[string][]string{"etcd": {member}, "node": {node}}})
	prom.WaitFor(t, 30*time.Second, `sum(count_over_time(etcd_server_has_leader[1m]))`, func(m map[string]float64) bool { return m[""] >= 2 })
	const fsyncs = `sum(etcd_disk_wal_fsync_duration_seconds_count)`
	before := prom.WaitFor(t, 30*time.Second, fsyncs, func(m map[string]float64) bool { return m[""] > 0 })[""]
	start := time.Now().Truncate(time.Second)
	// One client, paced: each put waits for its own WAL fsync, so that a
	// 3s window holds over the 100 fsyncs a p99 needs however busy the
	// host (16 clients at once let etcd batch 300 puts into a few dozen
	// fsyncs, too few to judge).
	if r := testutil.RunBinary(t, time.Minute, "bench", "put", "--endpoints", member, "--rate", "150", "--duration", "4s", "--clients", "1", "--val-size", "256", "-q"); r.Code != 0 && r.Code != 1 {
		t.Fatalf("bench put: exit %d: %s", r.Code, r.Stderr)
	}
	// Prometheus holds the load's fsyncs (a busy host delays its
	// scrapes), and a few seconds past them for the window.
	prom.WaitFor(t, 30*time.Second, fsyncs, func(m map[string]float64) bool { return m[""] >= before+300 })
	time.Sleep(5 * time.Second)
	end := time.Now().Truncate(time.Second)
	args := []string{"prom", "check", "--url", prom.URL, "--selector", `job="etcd"`, "--start", start.Format(time.RFC3339), "--end", end.Format(time.RFC3339),
		"--step", "1s", "--window", "3s", "-o", "json"}
	for _, c := range []struct {
		name  string
		args  []string
		sev   result.Severity
		title string
	}{
		{"--volume-iops 200", []string{"--volume-iops", "200"}, result.Warning, "the device wrote 150 of the 200 IOPS provisioned (75%)"},
		{"a WAL fsync limit passed", []string{"--limit", "wal_fsync_p99=1ns"}, result.Critical, "a provisioned-IOPS cap or a disk at its limit"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := testutil.RunBinary(t, time.Minute, append(args, c.args...)...)
			if r.Code == 2 {
				t.Fatalf("exit 2: %s", r.Stderr)
			}
			res := decodeResult(t, r.Stdout)
			if len(res.Prom.Members) != 1 || res.Prom.Members[0].Disk == nil || res.Prom.Members[0].Disk.Instance != node {
				t.Fatalf("the member's host device is not joined: %+v (notes %q)", res.Prom.Members, res.Prom.Notes)
			}
			sev := c.sev
			if slices.ContainsFunc(res.Checks, func(ch result.Check) bool { return ch.Status == result.StatusFail }) {
				// a limit passed in the period: the cap is the run's failure
				sev = result.Critical
			}
			f, ok := findingOf(res, diagnose.FindingMemberIOPSCap)
			if !ok || f.Severity != sev || f.Cause != result.CauseIOPSCap || len(f.Members) != 1 || f.Members[0] != member || !strings.Contains(f.Title, c.title) {
				t.Errorf("want a %s %s finding on %s saying %q; findings:\n%s", sev, diagnose.FindingMemberIOPSCap, member, c.title, findingLines(res))
			}
		})
	}
}
