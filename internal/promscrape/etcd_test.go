package promscrape

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/etcdperf/etcdperf/internal/testutil"
)

// The captures in testdata/ (see testdata/README.md): real /metrics of
// etcd 3.4 to 3.7, each after 500 puts.
var captures = []struct {
	version string
	peers   bool // captured from a member of a 3-member cluster
}{
	{"3.4.13", false},
	{"3.5.35", false},
	{"3.6.16", true},
	{"3.7.3", false},
}

func loadFile(t *testing.T, name string) Snapshot {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s, err := Parse(f)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return s
}

// describe is the golden view of the signals: each with its value and the
// metric it came from.
func describe(e Etcd) string {
	var b strings.Builder
	fmt.Fprintf(&b, "version %s\n", e.Version)
	for _, id := range e.Signals() {
		if h, ok := e.Histograms[id]; ok {
			p50, _, _ := h.Quantile(0.5)
			p99, floor, _ := h.Quantile(0.99)
			fmt.Fprintf(&b, "%s: histogram count=%g sum=%.6g buckets=%d p50=%g p99=%g at_floor=%v (%s)\n",
				id, h.Count, h.Sum, len(h.Buckets), p50, p99, floor, e.Source[id])
			continue
		}
		fmt.Fprintf(&b, "%s: %g (%s)\n", id, e.Values[id], e.Source[id])
	}
	return b.String()
}

func TestEtcdSignalsAcrossVersions(t *testing.T) {
	for _, c := range captures {
		t.Run(c.version, func(t *testing.T) {
			s := loadFile(t, "etcd-"+c.version+".metrics")
			e := s.EtcdSignals()
			if e.Version != c.version {
				t.Errorf("version %q, want %q", e.Version, c.version)
			}
			// One WAL fsync per put at least; backend commits are batched
			// (every 100ms or 10000 writes), so fewer.
			for id, least := range map[string]float64{"wal_fsync": 500, "backend_commit": 1} {
				h, ok := e.Histograms[id]
				if !ok || h.Count < least || len(h.Buckets) != 14 || h.Buckets[0].UpperBound != 0.001 {
					t.Errorf("%s histogram: %+v (found %v)", id, h, ok)
				}
			}
			want := map[string]float64{"puts": 500, "has_leader": 1, "leader_changes": 1, "proposals_failed": 0, "proposals_pending": 0}
			for id, v := range want {
				if got, ok := e.Values[id]; !ok || got != v {
					t.Errorf("%s = %v (found %v), want %v", id, got, ok, v)
				}
			}
			for _, id := range []string{"proposals_committed", "proposals_applied", "db_size", "db_size_in_use", "rss", "quota", "keys"} {
				if e.Values[id] <= 0 {
					t.Errorf("%s = %v, want > 0", id, e.Values[id])
				}
			}
			if e.Values["proposals_committed"] < 500 {
				t.Errorf("500 puts but %v proposals committed", e.Values["proposals_committed"])
			}
			_, rtt := e.Histograms["peer_rtt"]
			_, sent := e.Values["peer_sent"]
			if rtt != c.peers || sent != c.peers {
				t.Errorf("peer signals present: rtt %v, sent %v; want %v", rtt, sent, c.peers)
			}
			testutil.Golden(t, "etcd-"+c.version+".golden", []byte(describe(e)))
		})
	}
}

// etcd renamed metrics between versions: 3.4 exposes the database size
// and the put counter under both the old etcd_debugging_mvcc_* names and
// the new etcd_mvcc_* ones; 3.5 dropped the old. Without the new names (as
// in etcd 3.3 and early 3.4) the old ones must be read.
func TestEtcdSignalsRenamedMetrics(t *testing.T) {
	s := loadFile(t, "etcd-3.4.13.metrics")
	both := s.EtcdSignals()
	if both.Source["db_size"] != "etcd_mvcc_db_total_size_in_bytes" || both.Source["puts"] != "etcd_mvcc_put_total" {
		t.Fatalf("with both names the new one must win: %v", both.Source)
	}
	delete(s, "etcd_mvcc_db_total_size_in_bytes")
	delete(s, "etcd_mvcc_put_total")
	old := s.EtcdSignals()
	if old.Source["db_size"] != "etcd_debugging_mvcc_db_total_size_in_bytes" || old.Values["db_size"] != both.Values["db_size"] {
		t.Errorf("db size from the old name: %v from %s, want %v", old.Values["db_size"], old.Source["db_size"], both.Values["db_size"])
	}
	if old.Source["puts"] != "etcd_debugging_mvcc_put_total" || old.Values["puts"] != 500 {
		t.Errorf("puts from the old name: %v from %s", old.Values["puts"], old.Source["puts"])
	}
	// 3.5 and later have only the new names.
	s35 := loadFile(t, "etcd-3.5.35.metrics")
	for _, old := range []string{"etcd_debugging_mvcc_db_total_size_in_bytes", "etcd_debugging_mvcc_put_total"} {
		if _, ok := s35[old]; ok {
			t.Errorf("3.5 still has %s", old)
		}
	}
	if e := s35.EtcdSignals(); e.Values["db_size"] <= 0 || e.Values["puts"] != 500 {
		t.Errorf("3.5 signals: %v", e.Values)
	}
}

func TestEtcdSignalsFailedRequests(t *testing.T) {
	in := `# TYPE grpc_server_handled_total counter
grpc_server_handled_total{grpc_code="OK",grpc_method="Put"} 100
grpc_server_handled_total{grpc_code="Canceled",grpc_method="Watch"} 3
grpc_server_handled_total{grpc_code="Unavailable",grpc_method="Put"} 2
grpc_server_handled_total{grpc_code="DeadlineExceeded",grpc_method="Range"} 5
`
	s, err := Parse(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if v := s.EtcdSignals().Values["failed_requests"]; v != 7 {
		t.Errorf("failed requests %v, want 7 (Unavailable + DeadlineExceeded)", v)
	}
	if _, ok := (Snapshot{}).EtcdSignals().Values["failed_requests"]; ok {
		t.Error("failed requests found in an empty scrape")
	}
}
