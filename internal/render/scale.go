package render

import (
	"encoding/csv"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/etcdperf/etcdperf/internal/result"
	"github.com/etcdperf/etcdperf/internal/units"
)

func init() {
	RegisterText("scale", scaleText)
	RegisterCSV("scale", ScaleCSV)
}

// scaleText is the run's setting, then one row per step.
func scaleText(w io.Writer, r *result.Result) error {
	if r.Kube != nil {
		return kubeText(w, r)
	}
	sc := r.Scale
	if sc == nil {
		return nil
	}
	fmt.Fprintf(w, "etcdperf scale: %s\n", targetLine(r))
	for _, k := range sc.Kinds {
		fmt.Fprintf(w, "  %s: %d under %s, values %s", k.Name, k.Target, k.Prefix, describeDist(k.ValueSize))
		if k.MeanValueSize > 0 {
			fmt.Fprintf(w, ", mean %s", units.Bytes(k.MeanValueSize))
		}
		if k.LeaseTTL > 0 {
			fmt.Fprintf(w, ", leased for %s", units.Seconds(k.LeaseTTL))
		}
		fmt.Fprintln(w)
	}
	if line := scaleLoadLine(r); line != "" {
		fmt.Fprintf(w, "  %s\n", line)
	}
	fmt.Fprintln(w)
	cols := scaleColumns(sc, r.Target != nil && r.Target.Kind == "embedded")
	rows := [][]string{{}}
	for _, c := range cols {
		rows[0] = append(rows[0], c.title)
	}
	for _, st := range sc.Steps {
		var row []string
		for _, c := range cols {
			row = append(row, c.text(st))
		}
		rows = append(rows, row)
	}
	writeColumns(w, rows)
	if len(sc.Steps) == 0 {
		fmt.Fprintln(w, "no step completed")
	}
	for _, st := range sc.Steps {
		for _, k := range sortedKeys(st.Errors) {
			fmt.Fprintf(w, "step %d: %d failed: %s\n", st.Step, st.Errors[k], k)
		}
	}
	stoppedText(w, len(sc.Steps), sc.Planned, sc.Stopped)
	serverAndNotes(w, r.Server, sc.Notes)
	return nil
}

// describeDist prints a value size distribution (ParseDist's syntax) in
// words; sizes are bytes.
func describeDist(s string) string {
	parts := strings.Split(s, ":")
	num := func(i int) float64 {
		v, _ := strconv.ParseFloat(parts[i], 64)
		return v
	}
	switch {
	case len(parts) == 3 && parts[0] == "uniform":
		return fmt.Sprintf("uniform from %s to %s", units.Bytes(num(1)), units.Bytes(num(2)))
	case len(parts) == 3 && parts[0] == "normal":
		return fmt.Sprintf("normal around %s, stddev %s", units.Bytes(num(1)), units.Bytes(num(2)))
	case len(parts) == 3 && parts[0] == "lognormal":
		return fmt.Sprintf("lognormal around %s, sigma %s", units.Bytes(num(1)), parts[2])
	case len(parts) == 1:
		return units.Bytes(num(0))
	}
	return s
}

func scaleLoadLine(r *result.Result) string {
	var parts []string
	writers := func(clients int, rate, updates float64, lists int, page int64) {
		s := fmt.Sprintf("%d writers", clients)
		if rate > 0 {
			s += fmt.Sprintf(" at %g/s", rate)
		}
		parts = append(parts, s)
		if updates > 0 {
			parts = append(parts, fmt.Sprintf("%g status updates/s", updates))
		}
		parts = append(parts, fmt.Sprintf("%d whole lists per resource after each step in pages of %d", lists, page))
	}
	switch p := r.Params.(type) {
	case *result.ScaleParams:
		writers(p.Clients, p.Rate, p.UpdateRate, p.Lists, p.PageLimit)
	case *result.KubeScaleParams:
		writers(p.Clients, 0, p.UpdateRate, p.Lists, p.PageLimit)
	}
	parts = append(parts, "a watch per resource")
	return strings.Join(parts, ", ")
}

// scaleColumn is one column of the text's steps table.
type scaleColumn struct {
	title string
	text  func(result.ScaleStep) string
}

// scaleColumns are the text's columns; logs adds the warnings the members
// logged (known for embedded members only).
func scaleColumns(sc *result.Scale, logs bool) []scaleColumn {
	lat := func(get func(result.ScaleStep) *result.Latency, q func(result.Latency) float64) func(result.ScaleStep) string {
		return func(st result.ScaleStep) string {
			l := get(st)
			if l == nil || l.Count == 0 {
				return "-"
			}
			return LatencyValue(*l, q(*l))
		}
	}
	p99 := func(l result.Latency) float64 { return l.P99 }
	p50 := func(l result.Latency) float64 { return l.P50 }
	cols := []scaleColumn{
		{"step", func(st result.ScaleStep) string { return strconv.Itoa(st.Step) }},
		{"objects", func(st result.ScaleStep) string { return strconv.FormatInt(st.Objects, 10) }},
		{"db size", func(st result.ScaleStep) string { return units.Bytes(st.DBSize) }},
		{"in use", func(st result.ScaleStep) string { return units.Bytes(st.DBSizeInUse) }},
		{"RSS", func(st result.ScaleStep) string {
			if st.RSS == 0 {
				return "-"
			}
			return units.Bytes(st.RSS)
		}},
		{"WAL p99", lat(func(st result.ScaleStep) *result.Latency { return st.WALFsync }, p99)},
		{"commit p99", lat(func(st result.ScaleStep) *result.Latency { return st.BackendCommit }, p99)},
		{"put p99", lat(func(st result.ScaleStep) *result.Latency { return st.Put }, p99)},
	}
	for _, k := range sc.Kinds {
		cols = append(cols, scaleColumn{"list " + k.Name, lat(func(st result.ScaleStep) *result.Latency {
			for _, l := range st.Lists {
				if l.Kind == k.Name {
					return l.Latency
				}
			}
			return nil
		}, p50)})
	}
	cols = append(cols,
		scaleColumn{"watch lag p99", lat(func(st result.ScaleStep) *result.Latency { return st.WatchLag }, p99)},
		scaleColumn{"pending", func(st result.ScaleStep) string { return strconv.FormatFloat(st.ProposalsPending, 'f', -1, 64) }},
		scaleColumn{"slow applies", func(st result.ScaleStep) string { return strconv.FormatFloat(st.SlowApplies, 'f', -1, 64) }},
	)
	if logs {
		cols = append(cols, scaleColumn{"log warnings", func(st result.ScaleStep) string { return strconv.FormatInt(sum(st.LogWarnings), 10) }})
	}
	return append(cols, scaleColumn{"errors", func(st result.ScaleStep) string { return strconv.FormatInt(sum(st.Errors), 10) }})
}

func sum(m map[string]int64) int64 {
	var n int64
	for _, v := range m {
		n += v
	}
	return n
}

func sortedKeys(m map[string]int64) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// writeColumns writes rows left-aligned in columns two spaces apart.
func writeColumns(w io.Writer, rows [][]string) {
	var widths []int
	for _, row := range rows {
		for i, cell := range row {
			if i >= len(widths) {
				widths = append(widths, 0)
			}
			widths[i] = max(widths[i], len([]rune(cell)))
		}
	}
	for _, row := range rows {
		var b strings.Builder
		for i, cell := range row {
			b.WriteString(cell)
			if i < len(row)-1 {
				b.WriteString(strings.Repeat(" ", widths[i]-len([]rune(cell))+2))
			}
		}
		fmt.Fprintln(w, b.String())
	}
}

// ScaleCSV writes one row per step; sizes in bytes, durations in seconds.
// Columns that depend on the run (the kinds, the members) follow its
// order.
func ScaleCSV(w io.Writer, r *result.Result) error {
	if r.Kube != nil {
		return kubeCSV(w, r)
	}
	sc := r.Scale
	if sc == nil {
		return fmt.Errorf("the result has no scale section")
	}
	cw := csv.NewWriter(w)
	exact := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	lat := func(l *result.Latency, q func(result.Latency) float64) string {
		if l == nil || l.Count == 0 {
			return ""
		}
		return exact(q(*l))
	}
	p50 := func(l result.Latency) float64 { return l.P50 }
	p99 := func(l result.Latency) float64 { return l.P99 }
	maxOf := func(l result.Latency) float64 { return l.Max }
	header := []string{"step", "t", "seconds", "objects"}
	for _, k := range sc.Kinds {
		header = append(header, k.Name)
	}
	header = append(header, "written", "updates", "db_size", "db_size_in_use", "rss",
		"wal_fsync_p99", "backend_commit_p99", "put_p50", "put_p99", "update_p99")
	for _, k := range sc.Kinds {
		header = append(header, "list_"+k.Name+"_p50", "list_"+k.Name+"_max", "list_"+k.Name+"_slowest_page")
	}
	header = append(header, "watch_lag_p50", "watch_lag_p99", "watch_events", "proposals_pending", "slow_applies", "log_warnings", "errors")
	var members []string
	if len(sc.Steps) > 0 && len(sc.Steps[0].Members) > 1 {
		for _, m := range sc.Steps[0].Members {
			members = append(members, m.Name)
			header = append(header, "rss_"+m.Name, "db_size_"+m.Name)
		}
	}
	if err := cw.Write(header); err != nil {
		return err
	}
	for _, st := range sc.Steps {
		row := []string{strconv.Itoa(st.Step), exact(st.T), exact(st.Seconds), strconv.FormatInt(st.Objects, 10)}
		for _, k := range sc.Kinds {
			row = append(row, strconv.FormatInt(st.Kinds[k.Name], 10))
		}
		row = append(row, strconv.FormatInt(st.Written, 10), strconv.FormatInt(st.Updates, 10),
			exact(st.DBSize), exact(st.DBSizeInUse), exact(st.RSS),
			lat(st.WALFsync, p99), lat(st.BackendCommit, p99), lat(st.Put, p50), lat(st.Put, p99), lat(st.Update, p99))
		for _, k := range sc.Kinds {
			var l *result.Latency
			slowest := ""
			for _, sl := range st.Lists {
				if sl.Kind == k.Name {
					l, slowest = sl.Latency, exact(sl.SlowestPage)
				}
			}
			row = append(row, lat(l, p50), lat(l, maxOf), slowest)
		}
		row = append(row, lat(st.WatchLag, p50), lat(st.WatchLag, p99), strconv.FormatInt(st.WatchEvents, 10),
			exact(st.ProposalsPending), exact(st.SlowApplies), strconv.FormatInt(sum(st.LogWarnings), 10), strconv.FormatInt(sum(st.Errors), 10))
		for _, name := range members {
			rss, db := "", ""
			for _, m := range st.Members {
				if m.Name == name {
					rss, db = exact(m.RSS), exact(m.DBSize)
				}
			}
			row = append(row, rss, db)
		}
		if err := cw.Write(row); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}
