package promscrape

import (
	"fmt"
	"strings"
	"testing"

	"github.com/etcdperf/etcdperf/internal/cluster"
)

// The stall of a member's next defragmentation around a load comes from
// its scrape before the load; when that scrape failed, from the one after
// it, and the source says which.
func TestExpectedAroundLoad(t *testing.T) {
	before := []MemberScrape{{Member: cluster.Member{Name: "etcd-0"}, Snap: loadFile(t, "etcd-3.4.13.metrics")}}
	after := []MemberScrape{{Member: cluster.Member{Name: "etcd-0"}, Snap: loadFile(t, "etcd-3.6.16.metrics")}}
	failed := []MemberScrape{{Member: cluster.Member{Name: "etcd-0"}, Err: fmt.Errorf("connection refused")}}
	for _, c := range []struct {
		name         string
		first, last  []MemberScrape
		member, when string
		before       bool // the size is the scrape's before the load
	}{
		{"the scrape before the load", before, after, "etcd-0", "before the load", true},
		{"the scrape before failed", failed, after, "etcd-0", "after the load", false},
		{"both failed", failed, failed, "etcd-0", "", false},
		{"no member to state it for", before, after, "", "", false},
	} {
		e := ExpectedAroundLoad(c.member, c.first, c.last)
		if c.when == "" {
			if e != nil {
				t.Errorf("%s: %+v, want none", c.name, e)
			}
			continue
		}
		used := c.last
		if c.before {
			used = c.first
		}
		want := used[0].Snap.EtcdSignals().Values["db_size_in_use"]
		if e == nil || !strings.HasSuffix(e.DBSizeFrom, ", "+c.when) || e.DBSize != want || want <= 0 {
			t.Errorf("%s: %+v, want %v bytes %s", c.name, e, want, c.when)
		}
	}
}
