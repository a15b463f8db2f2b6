package render

import (
	"bytes"
	"strings"
	"testing"

	"github.com/etcdperf/etcdperf/internal/result"
	"github.com/etcdperf/etcdperf/internal/testutil"
)

// The inputs are Results of real `etcdperf prom export` and `prom check`
// runs against a Prometheus scraping a 3-member etcd 3.6 cluster whose
// leader was killed and restarted during the period: its series have gaps.
func TestPromGolden(t *testing.T) {
	for _, name := range []string{"prom-export-3members", "prom-check-3members"} {
		t.Run(name, func(t *testing.T) {
			res, txt, tab, recs := textAndCSV(t, name)
			tb := res.Prom.Table
			if len(recs) != len(tb.Time)+1 || len(recs[0]) != len(tb.Columns)+2 {
				t.Fatalf("CSV %dx%d for %d rows and %d columns", len(recs), len(recs[0]), len(tb.Time), len(tb.Columns))
			}
			gaps := 0
			for i, row := range tb.Rows {
				for j, v := range row {
					if cell := recs[i+1][j+2]; (cell == "") != !v.Present {
						t.Errorf("row %d column %s: cell %q for %+v", i, tb.Columns[j].Name, cell, v)
					}
					if !v.Present {
						gaps++
					}
				}
			}
			if gaps == 0 {
				t.Error("the capture was meant to have gaps (a member was down)")
			}
			for _, c := range tb.Columns {
				if !strings.Contains(txt.String(), c.Name) && res.Kind == "prom" {
					t.Errorf("column %s missing from the text", c.Name)
				}
			}
			testutil.Golden(t, name+".txt", txt.Bytes())
			testutil.Golden(t, name+".csv", tab.Bytes())
		})
	}
}

func TestPromCSVWithoutTable(t *testing.T) {
	if err := CSV(&bytes.Buffer{}, &result.Result{Kind: "prom"}); err == nil {
		t.Error("a prom Result without a table rendered as CSV")
	}
}
