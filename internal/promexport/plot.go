package promexport

import (
	"fmt"
	"maps"

	"github.com/etcdperf/etcdperf/internal/result"
)

// PlotTime is the --matrix axis that plots every query against time.
const PlotTime = "time"

// CheckAxes validates --matrix values against the query names: each is
// "time" or the name of a query.
func CheckAxes(axes []string, qs []Query) error {
	for _, x := range axes {
		if x == PlotTime {
			continue
		}
		found := false
		for _, q := range qs {
			found = found || q.Name == x
		}
		if !found {
			names := make([]string, len(qs))
			for i, q := range qs {
				names[i] = q.Name
			}
			return fmt.Errorf("--matrix %q: not %q nor the name of a query (%v)", x, PlotTime, names)
		}
	}
	return nil
}

// Plots returns chart data from a table: for each axis, one plot per
// query. With the "time" axis each line is a series against time; with a
// query's name as the axis, each other query's series is plotted against
// that query's series of the same instance (or against its only series,
// e.g. a pod count), at the timestamps where both have a number.
func Plots(t *result.PromTable, qs []Query, axes []string) (plots []result.PromPlot, notes []string) {
	byQuery := map[string][]int{}
	for j, c := range t.Columns {
		byQuery[c.Query] = append(byQuery[c.Query], j)
	}
	for _, x := range axes {
		for _, q := range qs {
			if q.Name == x || len(byQuery[q.Name]) == 0 {
				continue
			}
			p := result.PromPlot{Title: q.Name + " vs " + x, X: x, Y: q.Name, YUnit: q.Unit}
			if x == PlotTime {
				p.XUnit = "s"
				for _, j := range byQuery[q.Name] {
					p.Lines = append(p.Lines, line(t, -1, j))
				}
				plots = append(plots, p)
				continue
			}
			for _, xq := range qs {
				if xq.Name == x {
					p.XUnit = xq.Unit
				}
			}
			xcols := byQuery[x]
			if len(xcols) == 0 {
				continue
			}
			for _, j := range byQuery[q.Name] {
				xj, ok := partner(t, xcols, j)
				if !ok {
					notes = append(notes, fmt.Sprintf("plot %s: no series of %s has the labels of %s", p.Title, x, t.Columns[j].Name))
					continue
				}
				p.Lines = append(p.Lines, line(t, xj, j))
			}
			if len(p.Lines) > 0 {
				plots = append(plots, p)
			}
		}
	}
	return plots, notes
}

// partner picks the x column for y column j: the only one, the one with
// the same labels, or the one with the same instance.
func partner(t *result.PromTable, xcols []int, j int) (int, bool) {
	if len(xcols) == 1 {
		return xcols[0], true
	}
	yl := t.Columns[j].Labels
	for _, xj := range xcols {
		if maps.Equal(t.Columns[xj].Labels, yl) {
			return xj, true
		}
	}
	if inst, ok := yl["instance"]; ok {
		for _, xj := range xcols {
			if t.Columns[xj].Labels["instance"] == inst {
				return xj, true
			}
		}
	}
	return 0, false
}

// line pairs column xj (or the time, when xj < 0) with column yj.
func line(t *result.PromTable, xj, yj int) result.PromLine {
	l := result.PromLine{Name: t.Columns[yj].Name, Points: [][2]float64{}}
	if xj >= 0 {
		l.XColumn = t.Columns[xj].Name
	}
	for i, row := range t.Rows {
		y := row[yj]
		if !y.Finite() {
			continue
		}
		x := t.Time[i]
		if xj >= 0 {
			if !row[xj].Finite() {
				continue
			}
			x = row[xj].V
		}
		l.Points = append(l.Points, [2]float64{x, y.V})
	}
	return l
}
