package report

import (
	"fmt"
	"sort"
	"strconv"
	"time"

	"gonum.org/v1/plot/plotter"

	"github.com/etcdperf/etcdperf/internal/result"
	"github.com/etcdperf/etcdperf/internal/units"
)

// The logs section: what etcd's own logs said (`etcdperf logs`): the
// warnings per class over time, and per class their counts and durations.
func init() {
	count := func(label string, ids ...string) Metric {
		return Metric{Label: label, Unit: "count", Better: Lower, Get: func(r *result.Result) (Value, bool) {
			var n int64
			for _, id := range ids {
				n += r.Logs.Classes[id]
			}
			return Value{V: float64(n)}, true
		}}
	}
	Register(Section{
		ID: "logs", Title: "etcd logs: its warnings over time", Order: 40,
		Has: func(r *result.Result) bool { return r.Logs != nil },
		Metrics: []Metric{
			count("slow applies and reads (logs)", "slow_apply", "slow_read_only_range", "slow_read_only_txn"),
			count("late heartbeats (logs)", "heartbeat_late"),
			count("fdatasyncs over 1s (logs)", "slow_fdatasync"),
			count("leaders lost or changed (logs)", "leader_lost", "leader_changed"),
			count("request timeouts (logs)", "request_timeout"),
			count("peer failures (logs)", "peer_unhealthy", "message_dropped"),
			{Label: "slow apply p99 (logs)", Unit: "s", Better: Lower, Get: func(r *result.Result) (Value, bool) {
				for _, st := range r.Logs.Stats {
					if st.Class == "slow_apply" && st.Took != nil {
						return Value{V: st.Took.P99}, true
					}
				}
				return Value{}, false
			}},
		},
		Build: logsBlock,
	})
}

// maxTimelineClasses bounds the lines of one timeline chart: the classes
// with the most events.
const maxTimelineClasses = 6

func logsBlock(runs []Run) Block {
	var b Block
	t := Table{Title: "events per class (took: the duration the lines report)",
		Header: []string{"", "class", "count", "first (UTC)", "last (UTC)", "took p50", "took p99", "took max"}}
	for _, r := range runs {
		l := r.Result.Logs
		if c, note, ok := timelineChart(r, l.Timeline); ok {
			b.Charts = append(b.Charts, c)
		} else if note != "" {
			b.Notes = append(b.Notes, note)
		}
		for _, st := range l.Stats {
			row := []string{r.Label, st.Class, formatUnit(float64(st.Count), "count"), utc(st.First), utc(st.Last), "", "", ""}
			if st.Took != nil {
				row[5], row[6], row[7] = units.Seconds(st.Took.P50), units.Seconds(st.Took.P99), units.Seconds(st.Took.Max)
			}
			t.Rows = append(t.Rows, row)
		}
		if l.Unparsed > 0 {
			were := "lines were not etcd log lines"
			if l.Unparsed == 1 {
				were = "lines was not an etcd log line"
			}
			b.Notes = append(b.Notes, fmt.Sprintf("%s: %d of %d %s.", r.Label, l.Unparsed, l.Lines, were))
		}
	}
	if len(t.Rows) > 0 {
		b.Tables = append(b.Tables, t)
	}
	return b
}

func utc(t *time.Time) string {
	if t == nil {
		return ""
	}
	return t.UTC().Format("2006-01-02 15:04:05")
}

// timelineChart draws a run's events per bucket, one line per class (the
// classes with most events; colours tell classes apart, not runs), or
// says why it is not drawn.
func timelineChart(r Run, tl *result.LogTimeline) (Chart, string, bool) {
	if tl == nil || tl.Buckets == 0 {
		return Chart{}, "", false
	}
	type total struct {
		s result.LogTimelineSeries
		n int64
	}
	var series []total
	for _, s := range tl.Series {
		if s.Member != "" || len(s.Counts) != tl.Buckets {
			continue
		}
		var n int64
		for _, c := range s.Counts {
			n += c
		}
		series = append(series, total{s, n})
	}
	sort.SliceStable(series, func(i, j int) bool { return series[i].n > series[j].n })
	if len(series) > maxTimelineClasses {
		series = series[:maxTimelineClasses]
	}
	var lines []line
	for i, s := range series {
		pts := make(plotter.XYs, len(s.s.Counts))
		for k, c := range s.s.Counts {
			pts[k] = plotter.XY{X: float64(k) * tl.Bucket, Y: float64(c)}
		}
		lines = append(lines, line{Label: s.s.Class, Run: i, Pts: pts})
	}
	width := time.Duration(tl.Bucket * float64(time.Second))
	var short shortCharts
	short.add(r.Label+": events per "+width.String(), lines)
	if n := short.note(); n != "" {
		return Chart{}, n, false
	}
	c, ok := timeChart("logs-timeline-"+strconv.Itoa(r.Index), r.Label+": events per "+width.String(),
		fmt.Sprintf("Events of the %d most frequent classes per %s bucket, from %s UTC; each colour is a class.",
			len(lines), width, tl.Start.UTC().Format("2006-01-02 15:04:05")),
		"events", lines, func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }, false)
	return c, "", ok
}
