package limits

import (
	"math"
	"time"

	"github.com/etcdperf/etcdperf/internal/result"
)

// HasLeader is the pseudo-criterion of a member without a leader: it is
// judged over a history (`prom check`, `metrics`) like the criteria of
// Table, but has no limit to change.
var HasLeader = Criterion{ID: "has_leader", Title: "member has a leader", Unit: Count, Op: AtLeast, Limit: 1,
	Source: "etcd metrics guide: etcd_server_has_leader 0 means the member cannot serve writes"}

// Breaches finds, per member (instance), the evaluation points of the
// query named c.ID in t that pass the criterion's warning level or limit,
// and groups consecutive ones into windows (see Breach).
func Breaches(t *result.PromTable, c Criterion, counted bool) []result.PromBreach {
	var out []result.PromBreach
	for j, col := range t.Columns {
		if col.Query != c.ID {
			continue
		}
		cells := make([]result.PromValue, len(t.Rows))
		for i, row := range t.Rows {
			cells[i] = row[j]
		}
		if b, ok := Breach(c, col.Labels["instance"], t.Time, cells, counted); ok {
			out = append(out, b)
		}
	}
	return out
}

// Breach judges one member's series, cells[i] at times[i] (unix seconds),
// against a criterion: the points that pass its warning level or limit,
// grouped into windows of consecutive ones. Points without a number (no
// sample, or NaN: no observation in the window) are not judged and end a
// window. Counted values are rounded first. It is false when no point
// passed.
func Breach(c Criterion, instance string, times []float64, cells []result.PromValue, counted bool) (result.PromBreach, bool) {
	b := result.PromBreach{Check: c.ID, Instance: instance, Limit: c.Limit, Unit: string(c.Unit), Status: result.StatusPass}
	var cur *result.PromWindow
	for i, cell := range cells {
		if !cell.Finite() {
			cur = nil
			continue
		}
		v := cell.V
		if counted {
			v = math.Round(v)
		}
		b.Total++
		st := Evaluate(c, v).Status
		if st == result.StatusPass {
			cur = nil
			continue
		}
		b.Points++
		if st == result.StatusFail {
			b.Failed++
		}
		at := time.UnixMilli(int64(math.Round(times[i] * 1000))).UTC()
		if b.Points == 1 || worse(c.Op, v, b.Worst) {
			b.Worst = v
		}
		b.Status = result.Status(result.Worse(result.Verdict(b.Status), result.Verdict(st)))
		if cur == nil {
			b.Windows = append(b.Windows, result.PromWindow{From: at, Worst: v, Status: st})
			cur = &b.Windows[len(b.Windows)-1]
		}
		cur.To = at
		cur.Points++
		if worse(c.Op, v, cur.Worst) {
			cur.Worst = v
		}
		cur.Status = result.Status(result.Worse(result.Verdict(cur.Status), result.Verdict(st)))
	}
	if b.Points == 0 {
		return b, false
	}
	b.Fraction = float64(b.Points) / float64(b.Total)
	return b, true
}

// worse reports whether v is further on the failing side than w.
func worse(op Op, v, w float64) bool {
	if op == AtLeast {
		return v < w
	}
	return v > w
}
