package report

import (
	"fmt"
	"strconv"

	"gonum.org/v1/plot/plotter"

	"github.com/etcdperf/etcdperf/internal/limits"
	"github.com/etcdperf/etcdperf/internal/result"
	"github.com/etcdperf/etcdperf/internal/units"
)

// The section of a density run through the API server: the worst call of
// each kind against the SLO on API call latency after each step, with
// etcd's own figures beside.
func init() {
	Register(Section{
		ID: "kube", Title: "Through the API server: API call latency against the Kubernetes SLO", Order: 24,
		Has:   func(r *result.Result) bool { return r.Kube != nil },
		Build: kubeBlock,
	})
}

// worstCall is a step's highest p99 among the calls judged by criterion
// id, and the call's name.
func worstCall(st result.KubeStep, id string) (*result.Latency, string, bool) {
	var worst *result.Latency
	var name string
	for _, c := range st.Calls {
		if limits.KubeCallCriterion(c) != id {
			continue
		}
		if l, _ := limits.KubeCallLatency(c); l != nil && (worst == nil || l.P99 > worst.P99) {
			worst, name = l, c.Verb+" "+c.Resource
		}
	}
	return worst, name, worst != nil
}

func kubeBlock(runs []Run) Block {
	var b Block
	var lines []line
	for _, r := range runs {
		var mut, wal plotter.XYs
		for _, st := range r.Result.Kube.Steps {
			if l, _, ok := worstCall(st, limits.APIMutatingP99); ok {
				mut = append(mut, plotter.XY{X: float64(st.Objects), Y: l.P99})
			}
			if st.WALFsync != nil && st.WALFsync.Count > 0 {
				wal = append(wal, plotter.XY{X: float64(st.Objects), Y: st.WALFsync.P99})
			}
		}
		label := func(s string) string {
			if len(runs) > 1 {
				return r.Label + ": " + s
			}
			return s
		}
		run := func(i int) int {
			if len(runs) > 1 {
				return r.Index
			}
			return i
		}
		if len(mut) > 0 {
			lines = append(lines, line{Label: label("slowest mutating call p99"), Run: run(0), Pts: mut})
		}
		if len(wal) > 0 {
			lines = append(lines, line{Label: label("etcd WAL fsync p99"), Run: run(1), Pts: wal, Dashed: true})
		}
	}
	if c, ok := xyChart("kube-latency", "API call and etcd fsync latency vs objects", "The slowest mutating call's p99 after each step (solid; the API server's histogram when it could be read, else etcdperf's) and etcd's WAL fsync p99 over the step (dashed). The SLO allows 1s for a mutating call.",
		"objects", "p99 latency", lines, units.Seconds, true); ok {
		addObjectLimits(c, lines, limitsFor(runs, limits.APIMutatingP99))
		b.Charts = append(b.Charts, c)
	}
	for _, r := range runs {
		k := r.Result.Kube
		t := Table{Title: fmt.Sprintf("%s: %s (client-go QPS %g, burst %d)", r.Label, k.Server, k.QPS, k.Burst),
			Header: []string{"step", "objects", "slowest mutating p99", "slowest read p99", "slowest list p99", "failed calls", "etcd WAL fsync p99", "etcd backend commit p99"}}
		for _, st := range k.Steps {
			cell := func(id string) string {
				if l, name, ok := worstCall(st, id); ok {
					return p99Cell(l) + " (" + name + ")"
				}
				return "-"
			}
			var failed int64
			for _, c := range st.Calls {
				failed += result.ErrorTotal(c.Errors)
			}
			lat := func(l *result.Latency) string {
				if l == nil || l.Count == 0 {
					return "-"
				}
				return p99Cell(l)
			}
			t.Rows = append(t.Rows, []string{strconv.Itoa(st.Step), strconv.FormatInt(st.Objects, 10), cell(limits.APIMutatingP99),
				cell(limits.APIGetP99), cell(limits.APIListP99), strconv.FormatInt(failed, 10), lat(st.WALFsync), lat(st.BackendCommit)})
		}
		b.Tables = append(b.Tables, t)
		if k.Stopped != "" {
			b.Notes = append(b.Notes, fmt.Sprintf("%s: stopped after step %d of %d: %s", r.Label, len(k.Steps), k.Planned, k.Stopped))
		}
		for _, n := range k.Notes {
			b.Notes = append(b.Notes, r.Label+": "+n)
		}
	}
	return b
}
