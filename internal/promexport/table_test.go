package promexport

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/model"

	"github.com/etcdperf/etcdperf/internal/result"
)

// series builds one series of a range answer: values at t0+step*i, a nil
// value leaving that timestamp out (a gap).
func series(labels model.Metric, t0 model.Time, step time.Duration, values ...*float64) *model.SampleStream {
	s := &model.SampleStream{Metric: labels}
	for i, v := range values {
		if v != nil {
			s.Values = append(s.Values, model.SamplePair{Timestamp: t0.Add(time.Duration(i) * step), Value: model.SampleValue(*v)})
		}
	}
	return s
}

func v(f float64) *float64 { return &f }

func TestTableAlignsSeriesWithGaps(t *testing.T) {
	t0 := model.TimeFromUnix(1714557600)
	a := []Answer{
		{Query: Query{Name: "wal_fsync_p99", Unit: "s"}, Matrix: model.Matrix{
			series(model.Metric{"instance": "b:2379"}, t0, 15*time.Second, v(0.002), nil, v(0.004), v(0.005)),
			series(model.Metric{"instance": "a:2379"}, t0, 15*time.Second, v(0.001), v(0.001), nil, v(math.NaN())),
		}},
		// A series that starts later and has a timestamp of its own.
		{Query: Query{Name: "puts"}, Matrix: model.Matrix{
			series(model.Metric{"__name__": "etcd_mvcc_put_total", "instance": "a:2379", "job": "etcd"}, t0.Add(30*time.Second), 15*time.Second, v(500), v(900)),
			series(model.Metric{"instance": "c"}, t0.Add(50*time.Second), time.Second, v(1)),
		}},
		{Query: Query{Name: "empty"}},
	}
	tb, err := Table(a)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range tb.Columns {
		names = append(names, c.Name)
	}
	want := "wal_fsync_p99{instance=a:2379} wal_fsync_p99{instance=b:2379} puts{instance=a:2379,job=etcd} puts{instance=c}"
	if strings.Join(names, " ") != want {
		t.Errorf("columns %q\nwant     %q", strings.Join(names, " "), want)
	}
	wantTimes := []float64{1714557600, 1714557615, 1714557630, 1714557645, 1714557650}
	if len(tb.Time) != len(wantTimes) {
		t.Fatalf("times %v", tb.Time)
	}
	for i, w := range wantTimes {
		if tb.Time[i] != w {
			t.Errorf("time[%d] = %v, want %v", i, tb.Time[i], w)
		}
		if len(tb.Rows[i]) != len(tb.Columns) {
			t.Errorf("row %d has %d cells for %d columns", i, len(tb.Rows[i]), len(tb.Columns))
		}
	}
	cells := func(j int) string {
		var s []string
		for _, row := range tb.Rows {
			s = append(s, row[j].String())
		}
		return strings.Join(s, "|")
	}
	for j, w := range []string{"0.001|0.001||NaN|", "0.002||0.004|0.005|", "||500|900|", "||||1"} {
		if got := cells(j); got != w {
			t.Errorf("column %s: %q, want %q", tb.Columns[j].Name, got, w)
		}
	}
	if tb.Columns[0].Unit != "s" || tb.Columns[2].Labels["job"] != "etcd" || tb.Columns[2].Query != "puts" {
		t.Errorf("column metadata %+v", tb.Columns)
	}
	// The table survives JSON, NaN and gaps included.
	b, err := json.Marshal(tb)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"rows":[[0.001,0.002,null,null],`) || !strings.Contains(string(b), `"NaN"`) {
		t.Errorf("JSON %s", b)
	}
	var back result.PromTable
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if !math.IsNaN(back.Rows[3][0].V) || back.Rows[1][1].Present || back.Rows[3][2].V != 900 {
		t.Errorf("round trip %+v", back.Rows)
	}
}

func TestTableKeepsMetricNameWhenItTellsSeriesApart(t *testing.T) {
	t0 := model.TimeFromUnix(1714557600)
	tb, err := Table([]Answer{{Query: Query{Name: "db"}, Matrix: model.Matrix{
		series(model.Metric{"__name__": "etcd_mvcc_db_total_size_in_bytes", "instance": "a"}, t0, time.Second, v(1)),
		series(model.Metric{"__name__": "etcd_debugging_mvcc_db_total_size_in_bytes", "instance": "a"}, t0, time.Second, v(1)),
	}}})
	if err != nil {
		t.Fatal(err)
	}
	if tb.Columns[0].Name != "db{__name__=etcd_debugging_mvcc_db_total_size_in_bytes,instance=a}" || tb.Columns[1].Name == tb.Columns[0].Name {
		t.Errorf("columns %+v", tb.Columns)
	}
}

func TestColumnName(t *testing.T) {
	cases := []struct {
		labels map[string]string
		want   string
	}{
		{nil, "up"},
		{map[string]string{"job": "etcd", "instance": "10.0.0.1:2379"}, "up{instance=10.0.0.1:2379,job=etcd}"},
		{map[string]string{"path": "/a,b", "empty": ""}, `up{empty="",path="/a,b"}`},
		{map[string]string{"q": `say "hi"`}, `up{q="say \"hi\""}`},
	}
	for _, c := range cases {
		if got := ColumnName("up", c.labels); got != c.want {
			t.Errorf("ColumnName(%v) = %s, want %s", c.labels, got, c.want)
		}
	}
}

func TestTableRefusesTooManySeries(t *testing.T) {
	m := make(model.Matrix, MaxColumns+1)
	for i := range m {
		m[i] = series(model.Metric{"i": model.LabelValue(strings.Repeat("x", i%7) + string(rune('a'+i%26)) + time.Duration(i).String())}, 0, time.Second, v(1))
	}
	if _, err := Table([]Answer{{Query: Query{Name: "all"}, Matrix: m}}); err == nil || !strings.Contains(err.Error(), "aggregate") {
		t.Errorf("error %v", err)
	}
}

func TestPlots(t *testing.T) {
	t0 := model.TimeFromUnix(1714557600)
	qs := []Query{{Name: "rss", Unit: "bytes"}, {Name: "pods", Unit: "count"}}
	tb, err := Table([]Answer{
		{Query: qs[0], Matrix: model.Matrix{
			series(model.Metric{"instance": "a"}, t0, time.Minute, v(100), v(200), nil, v(400)),
			series(model.Metric{"instance": "b"}, t0, time.Minute, v(10), v(math.NaN()), v(30), v(40)),
		}},
		{Query: qs[1], Matrix: model.Matrix{series(nil, t0, time.Minute, v(1000), v(2000), v(3000), nil)}},
	})
	if err != nil {
		t.Fatal(err)
	}
	plots, notes := Plots(tb, qs, []string{PlotTime, "pods"})
	if len(notes) != 0 || len(plots) != 3 {
		t.Fatalf("plots %+v notes %v", plots, notes)
	}
	if p := plots[0]; p.Title != "rss vs time" || p.X != "time" || p.YUnit != "bytes" || len(p.Lines) != 2 || len(p.Lines[0].Points) != 3 || p.Lines[0].Points[2] != [2]float64{1714557780, 400} {
		t.Errorf("rss vs time %+v", p)
	}
	if p := plots[1]; p.Title != "pods vs time" || len(p.Lines) != 1 || len(p.Lines[0].Points) != 3 {
		t.Errorf("pods vs time %+v", p)
	}
	// rss against the one pods series, at the timestamps where both are numbers.
	p := plots[2]
	if p.Title != "rss vs pods" || p.XUnit != "count" || len(p.Lines) != 2 {
		t.Fatalf("rss vs pods %+v", p)
	}
	if got := p.Lines[0].Points; len(got) != 2 || got[0] != [2]float64{1000, 100} || got[1] != [2]float64{2000, 200} {
		t.Errorf("rss{a} vs pods %v", got)
	}
	if got := p.Lines[1].Points; len(got) != 2 || got[1] != [2]float64{3000, 30} || p.Lines[1].XColumn != "pods" {
		t.Errorf("rss{b} vs pods %v (x %s)", got, p.Lines[1].XColumn)
	}
	if err := CheckAxes([]string{"time", "pods"}, qs); err != nil {
		t.Error(err)
	}
	if err := CheckAxes([]string{"nodes"}, qs); err == nil {
		t.Error("an unknown axis was accepted")
	}
}

func TestPlotsPairByInstance(t *testing.T) {
	t0 := model.TimeFromUnix(1714557600)
	qs := []Query{{Name: "fsync"}, {Name: "puts"}}
	tb, _ := Table([]Answer{
		{Query: qs[0], Matrix: model.Matrix{
			series(model.Metric{"instance": "a"}, t0, time.Minute, v(1), v(2)),
			series(model.Metric{"instance": "z"}, t0, time.Minute, v(1), v(2)),
		}},
		{Query: qs[1], Matrix: model.Matrix{
			series(model.Metric{"instance": "a", "job": "etcd"}, t0, time.Minute, v(10), v(20)),
			series(model.Metric{"instance": "b", "job": "etcd"}, t0, time.Minute, v(5), v(6)),
		}},
	})
	plots, notes := Plots(tb, qs, []string{"puts"})
	if len(plots) != 1 || len(plots[0].Lines) != 1 || plots[0].Lines[0].XColumn != "puts{instance=a,job=etcd}" || plots[0].Lines[0].Points[1] != [2]float64{20, 2} {
		t.Errorf("plots %+v", plots)
	}
	if len(notes) != 1 || !strings.Contains(notes[0], "fsync{instance=z}") {
		t.Errorf("notes %v", notes)
	}
}

func TestPreset(t *testing.T) {
	qs, err := Preset(PresetEtcd, `job="etcd"`, 2*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]Query{}
	for _, q := range qs {
		byName[q.Name] = q
		if !strings.Contains(q.Expr, `job="etcd"`) {
			t.Errorf("%s does not carry the selector: %s", q.Name, q.Expr)
		}
	}
	want := map[string]string{
		"wal_fsync_p99":        `histogram_quantile(0.99, sum by (instance, le) (rate(etcd_disk_wal_fsync_duration_seconds_bucket{job="etcd"}[2m])))`,
		"db_size":              `max by (instance) ((etcd_mvcc_db_total_size_in_bytes{job="etcd"} or etcd_debugging_mvcc_db_total_size_in_bytes{job="etcd"}))`,
		"failed_requests_rate": `sum by (instance) (rate(grpc_server_handled_total{job="etcd",grpc_code!~"OK|Canceled"}[2m]))`,
		"puts_rate":            `sum by (instance) (rate(etcd_mvcc_put_total{job="etcd"}[2m])) or sum by (instance) (rate(etcd_debugging_mvcc_put_total{job="etcd"}[2m]))`,
		"leader_changes":       `sum by (instance) (increase(etcd_server_leader_changes_seen_total{job="etcd"}[2m]))`,
	}
	for name, expr := range want {
		if byName[name].Expr != expr {
			t.Errorf("%s:\n got %s\nwant %s", name, byName[name].Expr, expr)
		}
	}
	for _, name := range []string{"rss", "snapshot_save_p99", "backend_commit_p99", "proposals_pending", "peer_sent_rate", "peer_received_rate"} {
		if _, ok := byName[name]; !ok {
			t.Errorf("the etcd preset lacks %s", name)
		}
	}
	if q, _ := Preset(PresetEtcd, "", time.Minute); !strings.Contains(q[3].Expr, "etcd_disk_wal_fsync_duration_seconds_bucket{}[1m]") {
		t.Errorf("without a selector: %s", q[3].Expr)
	}
	if _, err := Preset("mysql", "", time.Minute); err == nil {
		t.Error("an unknown preset was accepted")
	}
}
