package report

import (
	"fmt"
	"strings"

	"github.com/etcdperf/etcdperf/internal/diagnose"
	"github.com/etcdperf/etcdperf/internal/limits"
	"github.com/etcdperf/etcdperf/internal/render"
	"github.com/etcdperf/etcdperf/internal/result"
	"github.com/etcdperf/etcdperf/internal/units"
)

// The defrag section: the stall a defragmentation is expected to cause
// (doctor), per location or member: the database size it is stated for
// and where that came from, the rate the storage copies live data at and
// how it was measured (a defragmentation rehearsed on the storage, or the
// member's own past ones), the stall against a Kubernetes controller's
// lease renew deadline, and etcd's advice.
func init() {
	Register(Section{
		ID: "defrag", Title: "Defragmentation: the stall to expect", Order: 46,
		Has: func(r *result.Result) bool { return r.ExpectedDefrag != nil },
		Metrics: []Metric{
			{Label: "expected defragmentation stall (doctor)", Unit: "s", Better: Lower, Get: func(r *result.Result) (Value, bool) {
				return Value{V: r.ExpectedDefrag.Seconds}, r.ExpectedDefrag.Seconds > 0
			}},
			{Label: "live data a defragmentation copies per second (doctor)", Unit: "bytes/s", Better: Higher, Get: func(r *result.Result) (Value, bool) {
				return Value{V: r.ExpectedDefrag.Rate}, r.ExpectedDefrag.Rate > 0
			}},
		},
		Build: defragBlock,
	})
}

// defragOn names what a run's expected defragmentation is about: the
// member, or the storage the run measured (its directory, file system and
// device).
func defragOn(r Run) string {
	e, env := r.Result.ExpectedDefrag, r.Result.Env
	switch {
	case e.Member != "":
		return "member " + e.Member
	case env != nil && env.Dir != "":
		return storageOf(env, env.Dir)
	}
	return "this storage"
}

func defragBlock(runs []Run) Block {
	var b Block
	t := Table{Title: "A defragmentation is stop-the-world for the member it runs on: etcd copies the live keyspace into a new file and answers nothing meanwhile",
		Header: []string{"", "on", "database size in use", "live data a defragmentation copies per second", "expected stall: database size / copy rate", "lease renew deadline"}}
	for _, r := range runs {
		e, on := r.Result.ExpectedDefrag, defragOn(r)
		limit := diagnose.LimitOf(r.Result, limits.DefragStall)
		cell := on
		if env := r.Result.Env; e.Member != "" && env != nil && env.Dir != "" {
			cell += ", its data in " + storageOf(env, env.Dir)
		}
		row := []string{r.Label, cell, units.Bytes(e.DBSize), "not known", "not known", units.Seconds(limit)}
		if e.Rate > 0 {
			row[3] = units.Bytes(e.Rate) + "/s"
		}
		if e.Seconds > 0 {
			row[4] = "about " + units.Seconds(e.Seconds)
			row[5] = "under " + units.Seconds(limit)
			if e.Seconds >= limit {
				row[5] = "longer than " + units.Seconds(limit)
			}
		}
		t.Rows = append(t.Rows, row)

		notes := []string{diagnose.ExpectedDefragTitle(e, on, limit) + "."}
		notes = append(notes, fmt.Sprintf("The database size in use, %s: %s.", units.Bytes(e.DBSize), e.DBSizeFrom))
		if e.Rate > 0 {
			notes = append(notes, fmt.Sprintf("Live data copied at %s/s: %s.", units.Bytes(e.Rate), e.RateFrom))
		}
		if p := e.Past; p != nil {
			notes = append(notes, fmt.Sprintf("Its defragmentations since it started: %s (%s).", strings.Join(render.DefragCells(*p), ", "), p.Source))
		}
		if e.Missing != "" {
			notes = append(notes, e.Missing)
		}
		b.Notes = append(b.Notes, r.Label+": "+strings.Join(notes, " "))
	}
	b.Tables = append(b.Tables, t)
	b.Notes = append(b.Notes, "What to do: "+diagnose.DefragAdvice)
	return b
}
