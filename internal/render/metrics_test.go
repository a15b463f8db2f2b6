package render

import (
	"strings"
	"testing"

	"github.com/etcdperf/etcdperf/internal/testutil"
)

// The inputs are Results of real `etcdperf metrics` runs against a
// 3-member etcd 3.7 cluster (one `etcdperf server` process per member)
// while `etcdperf bench put` loaded it: in the second, a follower was
// killed (SIGKILL) midway.
func TestMetricsGolden(t *testing.T) {
	for _, name := range []string{"metrics-3members", "metrics-3members-killed"} {
		t.Run(name, func(t *testing.T) {
			res, txt, tab, recs := textAndCSV(t, name)
			m := res.Metrics
			if len(recs) != m.Intervals*len(m.Members)+1 {
				t.Fatalf("%d CSV rows for %d intervals of %d members", len(recs), m.Intervals, len(m.Members))
			}
			down := 0
			for _, rec := range recs[1:] {
				if (rec[3] == "false") != (rec[4] != "") || (rec[3] == "false") != (rec[7] == "" && rec[12] == "") {
					t.Errorf("row %v: up, error and values disagree", rec)
				}
				if rec[3] == "false" {
					down++
				}
			}
			lines := strings.Count(txt.String(), "NO ANSWER")
			if down != lines || (down > 0) != strings.HasSuffix(name, "killed") {
				t.Errorf("%d rows and %d lines of a member that did not answer", down, lines)
			}
			testutil.Golden(t, name+".txt", txt.Bytes())
			testutil.Golden(t, name+".csv", tab.Bytes())
		})
	}
}
