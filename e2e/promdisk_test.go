package e2e

import (
	"fmt"
	"net/http"
	"net/http/httptest"
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
// used 75% of it, an IOPS cap named (a warning: the member's latencies
// stayed under their limits); with a WAL fsync limit the member passed,
// writes flat on a busy device are a cap or a disk at its limit, both said.
func TestPromNodeDisk(t *testing.T) {
	testutil.Binary(t)
	member := startEtcd(t)
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
	putLoad(t, member, 300, 1, 0)
	// Prometheus holds the load's fsyncs (a busy host delays its
	// scrapes; 300 puts from 16 clients take at least 300/16 of them),
	// and a few seconds past them for the window.
	prom.WaitFor(t, 30*time.Second, fsyncs, func(m map[string]float64) bool { return m[""] >= before+300/16 })
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
			f, ok := findingOf(res, diagnose.FindingMemberIOPSCap)
			if !ok || f.Severity != c.sev || f.Cause != result.CauseIOPSCap || len(f.Members) != 1 || f.Members[0] != member || !strings.Contains(f.Title, c.title) {
				t.Errorf("want a %s %s finding on %s saying %q; findings:\n%s", c.sev, diagnose.FindingMemberIOPSCap, member, c.title, findingLines(res))
			}
		})
	}
}
