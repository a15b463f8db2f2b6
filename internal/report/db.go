package report

import (
	"fmt"
	"sort"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/etcdperf/etcdperf/internal/result"
	"github.com/etcdperf/etcdperf/internal/units"
)

// The db section: what fills a database file (`etcdperf db`): its bytes by
// resource as a bar chart (live and history), the table per resource, and
// with two snapshots or more what grew, resource by resource.
func init() {
	db := func(label, unit string, better Better, get func(d *result.DB) float64) Metric {
		return Metric{Label: label, Unit: unit, Better: better, Get: func(r *result.Result) (Value, bool) {
			return Value{V: get(r.DB)}, true
		}}
	}
	Register(Section{
		ID: "db", Title: "Database: what fills it", Order: 45,
		Has: func(r *result.Result) bool { return r.DB != nil },
		Metrics: []Metric{
			db("database file (db)", "bytes", Lower, func(d *result.DB) float64 { return d.FileSize }),
			db("database in use (db)", "bytes", Lower, func(d *result.DB) float64 { return d.SizeInUse }),
			db("a defragmentation gives back (db)", "bytes", Lower, func(d *result.DB) float64 { return d.Reclaimable }),
			db("quota used (db)", "ratio", Lower, func(d *result.DB) float64 { return d.Size / d.Quota }),
			db("live keys (db)", "count", Neither, func(d *result.DB) float64 { return float64(d.Totals.Keys) }),
			db("live bytes (db)", "bytes", Neither, func(d *result.DB) float64 { return d.Totals.LiveBytes }),
			db("history bytes (db)", "bytes", Lower, func(d *result.DB) float64 { return d.Totals.HistoryBytes }),
			db("leases (db)", "count", Neither, func(d *result.DB) float64 { return float64(d.Leases.Count) }),
		},
		MetricsOf: resourceMetrics,
		Build:     dbBlock,
	})
}

// maxResourceRows bounds the resources the summary and the chart show:
// those with most bytes in any run.
const maxResourceRows = 12

// topResources are the names of the resources with most bytes in any of
// the runs, most first.
func topResources(runs []Run, n int) []string {
	most := map[string]float64{}
	for _, r := range runs {
		for _, rs := range r.Result.DB.Resources {
			most[rs.Name] = max(most[rs.Name], rs.Bytes())
		}
	}
	var names []string
	for name := range most {
		names = append(names, name)
	}
	sort.Slice(names, func(i, j int) bool {
		if most[names[i]] != most[names[j]] {
			return most[names[i]] > most[names[j]]
		}
		return names[i] < names[j]
	})
	return names[:min(len(names), n)]
}

func resourceOf(d *result.DB, name string) (result.DBResource, bool) {
	for _, rs := range d.Resources {
		if rs.Name == name {
			return rs, true
		}
	}
	return result.DBResource{}, false
}

// resourceMetrics are a row per resource (its live and history bytes, and
// its keys), so that compare says what grew between two snapshots. A
// resource a run does not hold counts as 0 there.
func resourceMetrics(runs []Run) []Metric {
	var ms []Metric
	for _, name := range topResources(runs, maxResourceRows) {
		ms = append(ms,
			Metric{Label: name + " bytes (db)", Unit: "bytes", Better: Neither, Get: func(r *result.Result) (Value, bool) {
				rs, _ := resourceOf(r.DB, name)
				return Value{V: rs.Bytes()}, true
			}},
			Metric{Label: name + " keys (db)", Unit: "count", Better: Neither, Get: func(r *result.Result) (Value, bool) {
				rs, _ := resourceOf(r.DB, name)
				return Value{V: float64(rs.Keys)}, true
			}})
	}
	return ms
}

func dbBlock(runs []Run) Block {
	b := Block{ChartsFirst: true}
	for _, r := range runs {
		d := r.Result.DB
		if c, ok := resourceChart(r); ok {
			b.Charts = append(b.Charts, c)
		}
		t := Table{Title: r.Label + ": per resource (live: the latest revision of each key; history: the older revisions kept until a compaction)",
			Header: []string{"resource", "class", "keys", "live", "history revisions", "history", "namespaces"}}
		for _, rs := range d.Resources {
			ns := ""
			if rs.Namespaces > 0 {
				ns = strconv.Itoa(rs.Namespaces)
			}
			t.Rows = append(t.Rows, []string{rs.Name, rs.Class, strconv.FormatInt(rs.Keys, 10), units.Bytes(rs.LiveBytes),
				strconv.FormatInt(rs.HistoryRevisions, 10), units.Bytes(rs.HistoryBytes), ns})
		}
		b.Tables = append(b.Tables, t)
		if len(d.Churn) > 0 {
			ct := Table{Title: r.Label + ": keys with the most revisions kept", Header: []string{"revisions", "history", "key"}}
			for _, k := range d.Churn {
				ct.Rows = append(ct.Rows, []string{strconv.FormatInt(k.Revisions, 10), units.Bytes(k.HistoryBytes), k.Key})
			}
			b.Tables = append(b.Tables, ct)
		}
		free := float64(d.FreePages+d.PendingPages) * float64(d.PageSize)
		b.Notes = append(b.Notes, fmt.Sprintf("%s: %s file, %s in use, %s in free pages; a defragmentation gives back %s; %.1f%% of the %s quota (%s).",
			r.Label, units.Bytes(d.FileSize), units.Bytes(d.SizeInUse), units.Bytes(free), units.Bytes(d.Reclaimable),
			100*d.Size/d.Quota, units.Bytes(d.Quota), d.QuotaSource))
		for _, n := range d.Notes {
			b.Notes = append(b.Notes, r.Label+": "+n+".")
		}
	}
	if len(runs) > 1 {
		b.Tables = append(b.Tables, growthTable(runs))
	}
	return b
}

// growthTable says what grew from the first run to the last, resource by
// resource, largest change first.
func growthTable(runs []Run) Table {
	first, last := runs[0], runs[len(runs)-1]
	t := Table{Title: fmt.Sprintf("what grew from %s to %s", first.Label, last.Label),
		Header: []string{"resource", "bytes in " + first.Label, "bytes in " + last.Label, "change", "keys change"}}
	type row struct {
		name  string
		a, b  result.DBResource
		delta float64
	}
	var rows []row
	seen := map[string]bool{}
	for _, d := range []*result.DB{first.Result.DB, last.Result.DB} {
		for _, rs := range d.Resources {
			if seen[rs.Name] {
				continue
			}
			seen[rs.Name] = true
			a, _ := resourceOf(first.Result.DB, rs.Name)
			b, _ := resourceOf(last.Result.DB, rs.Name)
			rows = append(rows, row{rs.Name, a, b, b.Bytes() - a.Bytes()})
		}
	}
	sort.SliceStable(rows, func(i, j int) bool { return abs(rows[i].delta) > abs(rows[j].delta) })
	for _, r := range rows {
		t.Rows = append(t.Rows, []string{r.name, units.Bytes(r.a.Bytes()), units.Bytes(r.b.Bytes()), signedBytes(r.delta),
			fmt.Sprintf("%+d", r.b.Keys-r.a.Keys)})
	}
	return t
}

func abs(v float64) float64 {
	if v < 0 {
		return -v
	}
	return v
}

func signedBytes(v float64) string {
	if v < 0 {
		return "-" + units.Bytes(-v)
	}
	return "+" + units.Bytes(v)
}

// resourceChart draws a run's bytes by resource as horizontal bars, live
// and history stacked, the largest at the top.
func resourceChart(r Run) (Chart, bool) {
	d := r.Result.DB
	names := topResources([]Run{r}, maxResourceRows)
	if len(names) == 0 {
		return Chart{}, false
	}
	// Bars are drawn from the bottom: the largest last.
	var live, hist plotter.Values
	var labels []string
	for i := len(names) - 1; i >= 0; i-- {
		rs, _ := resourceOf(d, names[i])
		live = append(live, rs.LiveBytes)
		hist = append(hist, rs.HistoryBytes)
		labels = append(labels, names[i])
	}
	p := newPlot(r.Label+": bytes by resource", "bytes (keys and values)", "")
	p.Y.Tick.Label.Font.Size = vg.Points(8)
	width := vg.Points(12)
	lb, err := plotter.NewBarChart(live, width)
	if err != nil {
		return Chart{}, false
	}
	hb, err := plotter.NewBarChart(hist, width)
	if err != nil {
		return Chart{}, false
	}
	for i, bc := range []*plotter.BarChart{lb, hb} {
		bc.Horizontal = true
		bc.LineStyle.Width = 0
		bc.Color = runColor(i)
	}
	hb.StackOn(lb)
	p.Add(lb, hb)
	p.Legend.Add("live", lb)
	p.Legend.Add("history", hb)
	legendAt(p, false, false)
	p.NominalY(labels...)
	p.X.Min = 0
	p.X.Tick.Marker = relabel(plot.DefaultTicks{}, func(v float64) string { return units.Bytes(v) })
	return Chart{Name: "db-resources-" + strconv.Itoa(r.Index), Title: r.Label + ": bytes by resource",
		Caption: fmt.Sprintf("The %d resources (and groups of other keys) with most bytes: the live keys and values, and the history etcd keeps for them until a compaction.", len(names)),
		Plot:    p, Height: vg.Points(float64(60 + 22*len(names)))}, true
}
