package pipeline

import (
	"fmt"
	"strings"
	"testing"

	"github.com/etcdperf/etcdperf/internal/cluster"
	"github.com/etcdperf/etcdperf/internal/promscrape"
)

// scrapeFromText builds a member scrape whose WAL fsync histogram has
// floor observations in the 1ms bucket out of count.
func scrapeFromText(t *testing.T, floor, count int) promscrape.MemberScrape {
	t.Helper()
	var b strings.Builder
	b.WriteString("# TYPE etcd_disk_wal_fsync_duration_seconds histogram\n")
	for _, le := range []string{"0.001", "0.002", "0.004"} {
		n := count
		if le == "0.001" {
			n = floor
		}
		fmt.Fprintf(&b, "etcd_disk_wal_fsync_duration_seconds_bucket{le=%q} %d\n", le, n)
	}
	fmt.Fprintf(&b, "etcd_disk_wal_fsync_duration_seconds_bucket{le=\"+Inf\"} %d\n", count)
	fmt.Fprintf(&b, "etcd_disk_wal_fsync_duration_seconds_sum %g\netcd_disk_wal_fsync_duration_seconds_count %d\n", float64(count)*0.0002, count)
	b.WriteString("# TYPE etcd_server_leader_changes_seen_total counter\netcd_server_leader_changes_seen_total 1\n")
	snap, err := promscrape.Parse(strings.NewReader(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	return promscrape.MemberScrape{Member: cluster.Member{Name: "m"}, Snap: snap}
}
