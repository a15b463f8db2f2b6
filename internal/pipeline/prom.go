package pipeline

import (
	"context"
	"fmt"
	"time"

	"github.com/etcdperf/etcdperf/internal/judge"
	"github.com/etcdperf/etcdperf/internal/limits"
	"github.com/etcdperf/etcdperf/internal/promexport"
	"github.com/etcdperf/etcdperf/internal/result"
)

// PromExportOptions configure `etcdperf prom export`.
type PromExportOptions struct {
	Conn  promexport.Options
	Range promexport.Resolved
	// Preset, when set, adds the preset's queries (promexport.PresetEtcd)
	// before Queries; Selector and Window (0: promexport.WindowFor) shape
	// them.
	Preset   string
	Selector string
	Window   time.Duration
	Queries  []promexport.Query
	// Matrix lists plot axes: "time" or a query's name.
	Matrix []string
}

// ExportQueries returns the queries an export runs, validating names and
// --matrix axes. It contacts no server.
func (o PromExportOptions) ExportQueries() ([]promexport.Query, error) {
	var qs []promexport.Query
	if o.Preset != "" {
		p, err := promexport.Preset(o.Preset, o.Selector, promexport.WindowFor(o.Window, o.Range.Step))
		if err != nil {
			return nil, err
		}
		qs = append(qs, p...)
	}
	qs = append(qs, o.Queries...)
	if len(qs) == 0 {
		return nil, fmt.Errorf("nothing to query: give --preset %s or --query NAME=PROMQL", promexport.PresetEtcd)
	}
	if err := promexport.CheckUnique(qs); err != nil {
		return nil, err
	}
	if err := promexport.CheckAxes(o.Matrix, qs); err != nil {
		return nil, err
	}
	return qs, nil
}

// PromExport runs the range queries and aligns their series into the prom
// section's table. It returns no Result when nothing could be read.
func PromExport(ctx context.Context, o PromExportOptions) (*result.Result, error) {
	qs, err := o.ExportQueries()
	if err != nil {
		return nil, err
	}
	c, err := promexport.New(o.Conn)
	if err != nil {
		return nil, err
	}
	res := result.New(result.KindPromExport)
	var window time.Duration // the preset's; a user's queries carry their own
	if o.Preset != "" {
		window = promexport.WindowFor(o.Window, o.Range.Step)
	}
	params := o.Conn.Params(o.Range, o.Selector, window, o.Matrix)
	params.Preset = o.Preset
	res.Params = params
	answers, err := c.Fetch(ctx, qs, o.Range)
	if err != nil {
		return nil, err
	}
	p, err := promexport.Section(c.URL(), o.Range, answers)
	if err != nil {
		return nil, err
	}
	p.Selector = o.Selector
	p.Window = window.Seconds()
	res.Prom = p
	if len(o.Matrix) > 0 {
		var notes []string
		p.Plots, notes = promexport.Plots(p.Table, qs, o.Matrix)
		p.Notes = append(p.Notes, notes...)
	}
	res.Summary = fmt.Sprintf("%d series from %d queries, %d timestamps from %s to %s every %s.",
		len(p.Table.Columns), len(qs), len(p.Table.Time), p.Start.Format(time.RFC3339), p.End.Format(time.RFC3339), o.Range.Step)
	res.Finish()
	return res, nil
}

// PromCheckOptions configure `etcdperf prom check`.
type PromCheckOptions struct {
	Conn  promexport.Options
	Range promexport.Resolved
	// Window is the range of rate() at each evaluation point; 0 picks
	// promexport.WindowFor.
	Window   time.Duration
	Selector string
	// Criteria are the limits to judge by (limits.Table, maybe overridden).
	Criteria []limits.Criterion
	Matrix   []string
	// Known are etcd's flags in force as the user stated them
	// (--current-flag): the tuning compares its suggestions with them.
	Known []result.FlagValue
}

// PromCheck judges etcd's history in Prometheus: each criterion over the
// whole period for every member (the checks take the worst member), and at
// every evaluation point, where breaches are grouped into time windows.
func PromCheck(ctx context.Context, o PromCheckOptions) (*result.Result, error) {
	o.Window = promexport.WindowFor(o.Window, o.Range.Step)
	if err := promexport.CheckAxes(o.Matrix, promexport.HistoryQueries(o.Selector, o.Window)); err != nil {
		return nil, err
	}
	c, err := promexport.New(o.Conn)
	if err != nil {
		return nil, err
	}
	res := result.New(result.KindPromCheck)
	res.Params = o.Conn.Params(o.Range, o.Selector, o.Window, o.Matrix)
	res.Tuning = &result.Tuning{Known: o.Known}
	h, err := c.ReadHistory(ctx, promexport.HistoryOptions{Range: o.Range, Window: o.Window, Selector: o.Selector})
	if err != nil {
		return nil, err
	}
	p, err := promexport.Section(c.URL(), o.Range, h.Answers)
	if err != nil {
		return nil, err
	}
	p.Window = o.Window.Seconds()
	p.Selector = o.Selector
	p.Members = h.Members
	// node-exporter's view of the members' hosts' devices, where it can be
	// joined to them: what tells a device at a write cap from etcd's CPU.
	var instances []string
	for _, m := range p.Members {
		instances = append(instances, m.Instance)
	}
	disks, notes, err := c.NodeDisks(ctx, o.Range, o.Window, instances)
	if err != nil {
		return nil, err
	}
	for i := range p.Members {
		p.Members[i].Disk = disks[p.Members[i].Instance]
	}
	p.Notes = append(p.Notes, notes...)
	if p.PeerRTTs, err = c.PeerRTTs(ctx, o.Range, o.Selector); err != nil {
		return nil, err
	}
	if p.Demand, err = c.Demand(ctx, o.Range, o.Selector, o.Window); err != nil {
		return nil, err
	}
	if p.Compactions, p.Defrags, err = c.Upkeep(ctx, o.Range, o.Selector); err != nil {
		return nil, err
	}
	if p.Databases, err = c.Databases(ctx, o.Range, o.Selector); err != nil {
		return nil, err
	}
	if o.Window < o.Range.Step {
		p.Notes = append(p.Notes, fmt.Sprintf("the --window %s is shorter than the --step %s: each point judges only the last %s of its step, and breaches in between can be missed",
			o.Window, o.Range.Step, o.Window))
	}
	res.Prom = p
	judge.Judge(res, o.Criteria)
	if len(o.Matrix) > 0 {
		var notes []string
		p.Plots, notes = promexport.Plots(p.Table, promexport.HistoryQueries(o.Selector, o.Window), o.Matrix)
		p.Notes = append(p.Notes, notes...)
	}
	res.Finish()
	return res, nil
}
