package promexport

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/prometheus/common/model"

	"github.com/etcdperf/etcdperf/internal/result"
)

// MaxColumns bounds the table: a query that returns more series than this
// in total is refused with advice to aggregate it.
const MaxColumns = 2000

// Answer is one query and the series Prometheus returned for it.
type Answer struct {
	Query    Query
	Matrix   model.Matrix
	Warnings []string
}

// Table aligns the answers' series on their timestamps: one row per
// timestamp that any series has, one column per series. Columns are in
// query order, and within a query sorted by name; a series without a
// sample at a row's time leaves that cell absent.
func Table(answers []Answer) (*result.PromTable, error) {
	t := &result.PromTable{}
	type col struct {
		name    string
		labels  map[string]string
		samples []model.SamplePair
	}
	var cols []col
	times := map[model.Time]struct{}{}
	for _, a := range answers {
		keepName := distinctNames(a.Matrix) > 1
		var qc []col
		for _, s := range a.Matrix {
			labels := map[string]string{}
			for k, v := range s.Metric {
				if k == model.MetricNameLabel && !keepName {
					continue
				}
				labels[string(k)] = string(v)
			}
			qc = append(qc, col{name: ColumnName(a.Query.Name, labels), labels: labels, samples: s.Values})
			for _, p := range s.Values {
				times[p.Timestamp] = struct{}{}
			}
		}
		sort.Slice(qc, func(i, j int) bool { return qc[i].name < qc[j].name })
		for _, c := range qc {
			t.Columns = append(t.Columns, result.PromColumn{Name: c.name, Query: a.Query.Name, Labels: c.labels, Unit: a.Query.Unit})
		}
		cols = append(cols, qc...)
		if len(cols) > MaxColumns {
			return nil, fmt.Errorf("the queries return more than %d series (query %s alone %d): aggregate them, e.g. sum by (instance) (...)",
				MaxColumns, a.Query.Name, len(a.Matrix))
		}
	}
	stamps := make([]model.Time, 0, len(times))
	for ts := range times {
		stamps = append(stamps, ts)
	}
	slices.Sort(stamps)
	row := make(map[model.Time]int, len(stamps))
	t.Time = make([]float64, len(stamps))
	t.Rows = make([][]result.PromValue, len(stamps))
	for i, ts := range stamps {
		row[ts] = i
		t.Time[i] = float64(ts) / 1000
		t.Rows[i] = make([]result.PromValue, len(cols))
	}
	for j, c := range cols {
		for _, p := range c.samples {
			t.Rows[row[p.Timestamp]][j] = result.PromSample(float64(p.Value))
		}
	}
	return t, nil
}

func distinctNames(m model.Matrix) int {
	names := map[model.LabelValue]bool{}
	for _, s := range m {
		if n := s.Metric[model.MetricNameLabel]; n != "" {
			names[n] = true
		}
	}
	return len(names)
}

// ColumnName names a series: the query's name followed by its labels
// sorted by name, e.g. wal_fsync_p99{instance=10.0.0.1:2379}. A value
// holding a separator, a quote or white space is quoted.
func ColumnName(query string, labels map[string]string) string {
	if len(labels) == 0 {
		return query
	}
	keys := make([]string, 0, len(labels))
	for k := range labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteString(query)
	b.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(',')
		}
		v := labels[k]
		if v == "" || strings.ContainsAny(v, ",={}\"' \t\n") {
			v = strconv.Quote(v)
		}
		b.WriteString(k)
		b.WriteByte('=')
		b.WriteString(v)
	}
	b.WriteByte('}')
	return b.String()
}
