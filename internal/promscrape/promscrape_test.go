package promscrape

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/etcdperf/etcdperf/internal/cluster"
	"github.com/etcdperf/etcdperf/internal/result"
)

// testdata/etcd-3.7.3.metrics is the real /metrics of an embedded etcd
// v3.7.3 after 500 puts.
func load(t *testing.T) Snapshot {
	t.Helper()
	f, err := os.Open("testdata/etcd-3.7.3.metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s, err := Parse(f)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestParseRealEtcdMetrics(t *testing.T) {
	s := load(t)
	h, ok := s.Histogram("etcd_disk_wal_fsync_duration_seconds", nil)
	if !ok {
		t.Fatal("no WAL fsync histogram")
	}
	if h.Count != 506 || len(h.Buckets) != 14 || h.Buckets[0].UpperBound != 0.001 || h.Buckets[0].Count != 499 {
		t.Errorf("fsync histogram %+v", h)
	}
	if v, ok := s.Value("etcd_server_leader_changes_seen_total", nil); !ok || v != 1 {
		t.Errorf("leader changes %v %v", v, ok)
	}
	if v, ok := s.Value("etcd_server_version", Labels{"server_version": "3.7.3"}); !ok || v != 1 {
		t.Errorf("server version series %v %v", v, ok)
	}
	if _, ok := s.Value("etcd_server_version", Labels{"server_version": "3.4.0"}); ok {
		t.Error("a label selector that matches nothing matched")
	}
	if _, ok := s.Value("no_such_metric", nil); ok {
		t.Error("a missing metric was found")
	}
}

func hist(bounds []float64, cum []float64, sum float64) Histogram {
	h := Histogram{Count: cum[len(cum)-1], Sum: sum}
	for i, b := range bounds {
		h.Buckets = append(h.Buckets, Bucket{UpperBound: b, Count: cum[i]})
	}
	return h
}

func TestQuantile(t *testing.T) {
	bounds := []float64{0.001, 0.002, 0.004, 0.008, 0.016}
	cases := []struct {
		name           string
		cum            []float64
		q              float64
		want           float64
		floor, overTop bool
	}{
		// 100 observations, all in the lowest bucket: "at most 1ms".
		{"all below 1ms", []float64{100, 100, 100, 100, 100}, 0.99, 0.001, true, false},
		// 90 below 1ms, 10 in (8ms,16ms]: p99 is 9/10 of the way into that bucket.
		{"interpolated", []float64{90, 90, 90, 90, 100}, 0.99, 0.008 + 0.008*0.9, false, false},
		{"median in second bucket", []float64{40, 80, 100, 100, 100}, 0.5, 0.001 + 0.001*0.25, false, false},
		// 5 of 100 above the last finite bound: p99 is beyond what buckets tell.
		{"above top", []float64{10, 20, 30, 50, 95}, 0.99, 0.016, false, true},
	}
	for _, c := range cases {
		h := hist(bounds, c.cum, 1)
		if c.name == "above top" {
			h.Count = 100
		}
		v, floor, top := h.Quantile(c.q)
		if math.Abs(v-c.want) > 1e-12 || floor != c.floor || top != c.overTop {
			t.Errorf("%s: %v floor=%v top=%v, want %v floor=%v top=%v", c.name, v, floor, top, c.want, c.floor, c.overTop)
		}
	}
	if v, _, _ := (Histogram{}).Quantile(0.99); v != 0 {
		t.Errorf("empty histogram quantile %v", v)
	}
}

func TestSubAndLatency(t *testing.T) {
	bounds := []float64{0.001, 0.002, 0.004}
	before := hist(bounds, []float64{10, 10, 10}, 0.005)
	after := hist(bounds, []float64{10, 50, 110}, 0.305)
	d := after.Sub(before)
	if d.Count != 100 || d.Buckets[0].Count != 0 || d.Buckets[1].Count != 40 || d.Buckets[2].Count != 100 || math.Abs(d.Sum-0.3) > 1e-12 {
		t.Fatalf("delta %+v", d)
	}
	l := d.Latency()
	if l.Count != 100 || math.Abs(l.Mean-0.003) > 1e-12 || !l.Bucketed || l.Resolution != 0.001 {
		t.Errorf("latency %+v", l)
	}
	if want := 0.002 + 0.002*(99.0-40)/60; math.Abs(l.P99-want) > 1e-12 {
		t.Errorf("p99 %v, want %v", l.P99, want)
	}
	if d.AllAtFloor() {
		t.Error("AllAtFloor on a spread histogram")
	}
	if !before.Sub(Histogram{}).AllAtFloor() {
		t.Error("AllAtFloor false with everything in the lowest bucket")
	}
	// A restart resets the counters: the later scrape is the delta.
	if r := before.Sub(after); r.Count != before.Count {
		t.Errorf("reset delta count %v", r.Count)
	}
	// A member that restarted and has since observed more than before:
	// the count grew, but the lowest bucket went down, so it is a reset
	// too, not a delta with a bucket clamped to zero.
	restarted := hist(bounds, []float64{5, 60, 120}, 0.4)
	if r := restarted.Sub(after); r.Count != restarted.Count || r.Buckets[0].Count != 5 || r.Sum != restarted.Sum {
		t.Errorf("reset with a higher count: delta %+v, want the later histogram", r)
	}
	// The same with every bucket up but the sum down.
	slower := hist(bounds, []float64{10, 50, 120}, 0.2)
	if r := slower.Sub(after); r.Count != slower.Count || r.Sum != slower.Sum {
		t.Errorf("reset with a lower sum: delta %+v, want the later histogram", r)
	}
}

func TestScrape(t *testing.T) {
	raw, err := os.ReadFile("testdata/etcd-3.7.3.metrics")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/metrics" {
			http.NotFound(w, r)
			return
		}
		w.Write(raw)
	}))
	defer srv.Close()
	s, err := Scrape(context.Background(), srv.Client(), srv.URL+"/metrics")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := s.Histogram("etcd_disk_backend_commit_duration_seconds", nil); !ok {
		t.Error("no backend commit histogram")
	}
	_, err = Scrape(context.Background(), srv.Client(), srv.URL+"/nope")
	if err == nil || !strings.Contains(err.Error(), "404") {
		t.Errorf("scrape of a missing path: %v", err)
	}
}

// A server that is not etcd: an HTML page is a parse error that says so,
// and a body over the bound is refused, not parsed in part.
func TestParseRefuses(t *testing.T) {
	if _, err := Parse(strings.NewReader("<html><body>login</body></html>\n")); err == nil || !strings.Contains(err.Error(), "etcd's /metrics") {
		t.Errorf("HTML page: %v", err)
	}
	if _, err := Parse(endless{}); err == nil || !strings.Contains(err.Error(), "more than 64 MiB") {
		t.Errorf("a body over the bound: %v", err)
	}
}

// endless is a body that never ends: comment lines.
type endless struct{}

func (endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = "# pad\n"[i%6]
	}
	return len(p), nil
}

func FuzzParse(f *testing.F) {
	raw, err := os.ReadFile("testdata/etcd-3.7.3.metrics")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(raw[:4096])
	f.Add([]byte("# TYPE x histogram\nx_bucket{le=\"1\"} 1\nx_bucket{le=\"+Inf\"} 1\nx_count 1\nx_sum 0.5\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := Parse(strings.NewReader(string(b)))
		if err != nil {
			return
		}
		for name := range s {
			if h, ok := s.Histogram(name, nil); ok {
				_ = h.Latency()
			}
			s.Value(name, nil)
		}
	})
}

// An empty label value selects the series without the label or with it
// empty, as in PromQL: the API server's requests of a resource without a
// subresource (subresource="").
func TestLabelsEmptyValue(t *testing.T) {
	s, err := Parse(strings.NewReader(`# TYPE req counter
req{resource="pods",subresource=""} 5
req{resource="pods",subresource="status"} 7
req{resource="pods"} 11
`))
	if err != nil {
		t.Fatal(err)
	}
	for sel, want := range map[string]float64{"": 16, "status": 7} {
		if v, ok := s.Value("req", Labels{"resource": "pods", "subresource": sel}); !ok || v != want {
			t.Errorf("subresource=%q: %v %v, want %v", sel, v, ok, want)
		}
	}
}

// The write demand between two scrapes: each counter's rate over the time
// between them, per member, and for the cluster the most any member saw
// (every member commits the same proposals).
func TestServerSectionDemand(t *testing.T) {
	snap := func(committed, puts, deletes, txns, fsyncs float64) Snapshot {
		s, err := Parse(strings.NewReader(fmt.Sprintf(`# TYPE etcd_server_proposals_committed_total gauge
etcd_server_proposals_committed_total %g
# TYPE etcd_mvcc_put_total counter
etcd_mvcc_put_total %g
# TYPE etcd_debugging_mvcc_delete_total counter
etcd_debugging_mvcc_delete_total %g
# TYPE etcd_mvcc_txn_total counter
etcd_mvcc_txn_total %g
# TYPE etcd_disk_wal_fsync_duration_seconds histogram
etcd_disk_wal_fsync_duration_seconds_bucket{le="0.001"} %g
etcd_disk_wal_fsync_duration_seconds_bucket{le="+Inf"} %g
etcd_disk_wal_fsync_duration_seconds_sum 0.1
etcd_disk_wal_fsync_duration_seconds_count %g
`, committed, puts, deletes, txns, fsyncs, fsyncs, fsyncs)))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	t0 := time.Now()
	a, b := cluster.Member{Name: "a"}, cluster.Member{Name: "b"}
	before := []MemberScrape{{Member: a, Snap: snap(100, 80, 5, 10, 100), At: t0}, {Member: b, Snap: snap(100, 80, 5, 10, 90), At: t0}}
	after := []MemberScrape{{Member: a, Snap: snap(1100, 880, 105, 110, 1100), At: t0.Add(10 * time.Second)}, {Member: b, Snap: snap(1000, 780, 105, 110, 490), At: t0.Add(10 * time.Second)}}
	srv, _ := ServerSection(before, after)
	want := result.Demand{Seconds: 10, ProposalsCommitted: 100, Puts: 80, Deletes: 10, Txns: 10, WALFsyncs: 100}
	if srv == nil || srv.Demand == nil || *srv.Demand != want {
		t.Fatalf("cluster demand %+v, want %+v", srv.Demand, want)
	}
	if m := srv.Members[1].Demand; m == nil || m.ProposalsCommitted != 90 || m.WALFsyncs != 40 {
		t.Errorf("member b's demand %+v: want 90 proposals/s and 40 fsyncs/s", m)
	}
}
