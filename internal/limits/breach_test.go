package limits

import (
	"math"
	"testing"
	"time"

	"github.com/etcdperf/etcdperf/internal/result"
)

// historyTable builds the table of one query with one column per member
// (instance), a point a minute from t0; a member with fewer values than
// the longest has no sample at the later points.
func historyTable(query string, t0 float64, members []string, values ...[]float64) *result.PromTable {
	t := &result.PromTable{}
	rows := 0
	for i, m := range members {
		t.Columns = append(t.Columns, result.PromColumn{Name: query, Query: query, Labels: map[string]string{"instance": m}})
		rows = max(rows, len(values[i]))
	}
	for r := range rows {
		t.Time = append(t.Time, t0+60*float64(r))
		row := make([]result.PromValue, len(members))
		for i := range members {
			if r < len(values[i]) {
				row[i] = result.PromSample(values[i][r])
			}
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

func TestBreachWindows(t *testing.T) {
	crit, _ := Lookup(Table, WALFsyncP99) // < 10ms, warn at 8ms
	const t0 = 1714557600
	tb := historyTable(WALFsyncP99, t0, []string{"a", "b"},
		// a: fine, then 2 points over the limit, a NaN, then warn then fail.
		[]float64{0.002, 0.012, 0.030, math.NaN(), 0.009, 0.011, 0.001},
		// b: never passes the warning level, and has no sample after 3 points.
		[]float64{0.001, 0.002, 0.007})
	bs := Breaches(tb, crit, false)
	if len(bs) != 1 {
		t.Fatalf("breaches %+v", bs)
	}
	b := bs[0]
	if b.Check != WALFsyncP99 || b.Instance != "a" || b.Points != 4 || b.Failed != 3 || b.Total != 6 || b.Worst != 0.030 || b.Limit != crit.Limit ||
		b.Status != result.StatusFail || math.Abs(b.Fraction-4.0/6) > 1e-12 {
		t.Errorf("breach %+v", b)
	}
	if len(b.Windows) != 2 {
		t.Fatalf("windows %+v", b.Windows)
	}
	at := func(min int) time.Time { return time.Unix(t0, 0).UTC().Add(time.Duration(min) * time.Minute) }
	w0, w1 := b.Windows[0], b.Windows[1]
	if !w0.From.Equal(at(1)) || !w0.To.Equal(at(2)) || w0.Points != 2 || w0.Worst != 0.030 || w0.Status != result.StatusFail {
		t.Errorf("first window %+v", w0)
	}
	if !w1.From.Equal(at(4)) || !w1.To.Equal(at(5)) || w1.Points != 2 || w1.Worst != 0.011 || w1.Status != result.StatusFail {
		t.Errorf("second window %+v", w1)
	}
	// Only warnings: the breach is a warning.
	bs = Breaches(historyTable(WALFsyncP99, t0, []string{"c"}, []float64{0.001, 0.009, 0.0085}), crit, false)
	if len(bs) != 1 || bs[0].Status != result.StatusWarn || bs[0].Failed != 0 || bs[0].Points != 2 || bs[0].Worst != 0.009 || len(bs[0].Windows) != 1 {
		t.Errorf("warning breaches %+v", bs)
	}
	// Counts are rounded: 0.4 leader changes is none, 1.2 is one.
	lc, _ := Lookup(Table, LeaderChanges)
	bs = Breaches(historyTable(LeaderChanges, t0, []string{"a"}, []float64{0, 0.4, 1.2, 0}), lc, true)
	if len(bs) != 1 || bs[0].Points != 1 || bs[0].Worst != 1 || len(bs[0].Windows) != 1 {
		t.Errorf("leader change breaches %+v", bs)
	}
	// A criterion met from below: has_leader 0 is a breach.
	bs = Breaches(historyTable(HasLeader.ID, t0, []string{"a"}, []float64{1, 0, 0, 1}), HasLeader, false)
	if len(bs) != 1 || bs[0].Points != 2 || bs[0].Worst != 0 || bs[0].Status != result.StatusFail {
		t.Errorf("has_leader breaches %+v", bs)
	}
	// Another query's columns are not judged.
	if bs := Breaches(historyTable("other", t0, []string{"a"}, []float64{1, 1}), crit, false); len(bs) != 0 {
		t.Errorf("breaches of another query %+v", bs)
	}
}
