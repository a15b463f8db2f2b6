package promexport

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/etcdperf/etcdperf/internal/testutil"
)

// TestNodeDisksRealPrometheus has a real Prometheus scrape an exporter
// serving node-exporter's node_disk_* counters of two devices (vdb writes
// 150 times a second and is busy 95% of the time, vda is nearly idle):
// a member on the exporter's host is joined to vdb, the busiest; one on
// another host is not, and a note says so.
func TestNodeDisksRealPrometheus(t *testing.T) {
	start := time.Now()
	exporter := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s := time.Since(start).Seconds()
		fmt.Fprintf(w, "# TYPE node_disk_writes_completed_total counter\n"+
			"node_disk_writes_completed_total{device=\"vda\"} %g\nnode_disk_writes_completed_total{device=\"vdb\"} %g\n"+
			"# TYPE node_disk_io_time_seconds_total counter\n"+
			"node_disk_io_time_seconds_total{device=\"vda\"} %g\nnode_disk_io_time_seconds_total{device=\"vdb\"} %g\n",
			2*s, 150*s, 0.01*s, 0.95*s)
	}))
	defer exporter.Close()
	host := strings.TrimPrefix(exporter.URL, "http://")
	prom := testutil.StartPrometheus(t, testutil.PrometheusOptions{Jobs: map[string][]string{"node": {host}}})
	prom.WaitFor(t, 30*time.Second, `count_over_time(node_disk_writes_completed_total{device="vdb"}[1m])`, func(m map[string]float64) bool {
		for _, v := range m {
			return v >= 6
		}
		return false
	})
	c, err := New(Options{URL: prom.URL, Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	end := time.Now()
	r := Resolved{Start: end.Add(-3 * time.Second), End: end, Step: time.Second}
	here, elsewhere := "127.0.0.1:2379", "10.9.9.9:2379"
	disks, notes, err := c.NodeDisks(context.Background(), r, 3*time.Second, []string{here, elsewhere})
	if err != nil {
		t.Fatal(err)
	}
	d := disks[here]
	if d == nil || d.Device != "vdb" || d.Instance != host || d.Devices != 2 || len(d.WriteIOPS) == 0 {
		t.Fatalf("the member on the exporter's host: %+v", d)
	}
	for i := range d.WriteIOPS {
		if math.Abs(d.WriteIOPS[i]-150) > 15 || math.Abs(d.Busy[i]-0.95) > 0.1 {
			t.Errorf("point %d: %.1f writes/s, %.2f busy; want 150 and 0.95", i, d.WriteIOPS[i], d.Busy[i])
		}
	}
	if disks[elsewhere] != nil {
		t.Errorf("a member on another host was joined: %+v", disks[elsewhere])
	}
	if len(notes) != 1 || !strings.Contains(notes[0], elsewhere) || !strings.Contains(notes[0], host) {
		t.Errorf("notes %q", notes)
	}
	// No node-exporter series: nothing, and nothing said.
	none, notes, err := c.NodeDisks(context.Background(), Resolved{Start: start.Add(-time.Hour), End: start.Add(-50 * time.Minute), Step: time.Minute}, time.Minute, []string{here})
	if err != nil || len(none) != 0 || len(notes) != 0 {
		t.Errorf("before any scrape: %v, %q, %v", none, notes, err)
	}
}
