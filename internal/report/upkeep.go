package report

import (
	"fmt"
	"strconv"

	"github.com/etcdperf/etcdperf/internal/diagnose"
	"github.com/etcdperf/etcdperf/internal/limits"
	"github.com/etcdperf/etcdperf/internal/render"
	"github.com/etcdperf/etcdperf/internal/result"
	"github.com/etcdperf/etcdperf/internal/units"
)

// The upkeep section: the scheduled compactions and defragmentations each
// member made, as `logs`, `metrics` and `prom check` saw them (its log's
// lines, its histograms): how many, how often, what they took, the
// latency spikes near the compactions, the longest defragmentation
// against a Kubernetes controller's lease renew deadline, and etcd's
// advice; with `metrics`, the intervals in which each ended.
func init() {
	Register(Section{
		ID: "upkeep", Title: "Compactions and defragmentations: what etcd's upkeep cost each member", Order: 42,
		Has: func(r *result.Result) bool {
			cs, ds := r.UpkeepSeen()
			return len(cs)+len(ds) > 0
		},
		Metrics: []Metric{
			{Label: "scheduled compactions (all members)", Unit: "count", Better: Neither, Get: func(r *result.Result) (Value, bool) {
				cs, _ := r.UpkeepSeen()
				var n int64
				for _, c := range cs {
					n += c.Count
				}
				return Value{V: float64(n)}, len(cs) > 0
			}},
			{Label: "defragmentations (all members)", Unit: "count", Better: Neither, Get: func(r *result.Result) (Value, bool) {
				_, ds := r.UpkeepSeen()
				var n float64
				for _, d := range ds {
					n += d.Count
				}
				return Value{V: n}, len(ds) > 0
			}},
			{Label: "longest defragmentation", Unit: "s", Better: Lower, Get: func(r *result.Result) (Value, bool) {
				_, ds := r.UpkeepSeen()
				var longest float64
				for _, d := range ds {
					// the most it can have taken, as the notes and
					// defrag_stall say it (a histogram's bucket narrowed)
					_, hi := d.LongestBounds()
					longest = max(longest, hi)
				}
				return Value{V: longest}, longest > 0
			}},
		},
		Build: upkeepBlock,
	})
}

func upkeepBlock(runs []Run) Block {
	var b Block
	ct := Table{Title: "scheduled compactions: each deletes the history of its period in batches and commits them",
		Header: []string{"", "member", "compactions", "how often", "what each took", "latency spikes near one", "source"}}
	dt := Table{Title: "defragmentations: each stops the member it runs on until etcd has copied its live data into a new file",
		Header: []string{"", "member", "defragmentations", "in all", "longest", "source"}}
	var when []Table
	defragged := false
	for _, r := range runs {
		cs, ds := r.Result.UpkeepSeen()
		for _, c := range cs {
			cells := render.CompactionCells(c)
			ct.Rows = append(ct.Rows, []string{r.Label, c.Member, cells[0], cells[1], cells[2], cells[3], c.Source})
			if c.Near > 0 {
				b.Notes = append(b.Notes, fmt.Sprintf("%s: %d of %s's %s came within %s of a compaction: these spikes are compaction's cost, "+
					"not a slow disk's; judge the disk by the latency between compactions.", r.Label, c.Near, c.Member,
					render.Plural(c.Spikes, "latency spike"), units.Seconds(c.Window)))
			}
		}
		limit := diagnose.LimitOf(r.Result, limits.DefragStall)
		for _, d := range ds {
			cells := render.DefragCells(d)
			dt.Rows = append(dt.Rows, append(append([]string{r.Label, d.Member}, cells...), d.Source))
			if d.Count > 0 {
				defragged = true
				_, hi := d.LongestBounds()
				b.Notes = append(b.Notes, fmt.Sprintf("%s: the longest defragmentation of %s took %s: %s.", r.Label, d.Member,
					render.DefragLongest(d), diagnose.LeaseWords(hi, limit)))
			}
		}
		if t, ok := upkeepIntervals(r); ok {
			when = append(when, t)
		}
	}
	if len(ct.Rows) > 0 {
		b.Tables = append(b.Tables, ct)
	}
	if len(dt.Rows) > 0 {
		b.Tables = append(b.Tables, dt)
	}
	b.Tables = append(b.Tables, when...)
	if defragged {
		b.Notes = append(b.Notes, "What to do: "+diagnose.DefragAdvice)
	}
	return b
}

// upkeepIntervals lists the intervals of a metrics run in which a member
// finished a compaction or a defragmentation, from its histograms.
func upkeepIntervals(r Run) (Table, bool) {
	m := r.Result.Metrics
	if m == nil {
		return Table{}, false
	}
	t := Table{Title: r.Label + ": the intervals in which a compaction or a defragmentation ended (from " + result.CompactionMetric + ", " +
		result.CompactionPauseMetric + " and " + result.DefragMetric + ")",
		Header: []string{"member", "interval ending (s into the run)", "compactions", "their time", "their batches' pauses (writes waited)", "defragmentations", "their time"}}
	count := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	for _, mm := range m.Members {
		for _, s := range mm.Series {
			if !s.Up() || s.Upkeep == nil {
				continue
			}
			u := s.Upkeep
			t.Rows = append(t.Rows, []string{mm.Name, units.Seconds(s.T), count(u.Compactions), units.Seconds(u.CompactionSeconds),
				units.Seconds(u.CompactionPauseSeconds), count(u.Defrags), units.Seconds(u.DefragSeconds)})
		}
	}
	return t, len(t.Rows) > 0
}
