package report

import (
	"image/color"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/etcdperf/etcdperf/internal/result"
)

// upkeepMark is the end of an interval of a metrics run in which a member
// made a scheduled compaction, or was defragmented: a vertical line on the
// charts of its latency over time, so that a spike that sits on one shows.
type upkeepMark struct {
	// X is the end of the interval, in seconds since the start.
	X float64
	// Member is the member's index in the run: its colour.
	Member int
	Defrag bool
}

// The marks' lines: dotted a compaction, dash-dot (heavier) a
// defragmentation, each in its member's colour.
var (
	compactionDashes = []vg.Length{vg.Points(1), vg.Points(2)}
	defragDashes     = []vg.Length{vg.Points(6), vg.Points(2), vg.Points(1), vg.Points(2)}
)

func markStyle(c color.Color, defrag bool) draw.LineStyle {
	if defrag {
		return draw.LineStyle{Color: c, Width: vg.Points(1.4), Dashes: defragDashes}
	}
	return draw.LineStyle{Color: c, Width: vg.Points(1), Dashes: compactionDashes}
}

// upkeepMarks are the intervals of a metrics run in which a member
// finished a compaction or a defragmentation (from its histograms), the
// compactions first.
func upkeepMarks(m *result.Metrics) []upkeepMark {
	var cs, ds []upkeepMark
	for i, mm := range m.Members {
		for _, s := range mm.Series {
			if !s.Up() || s.Upkeep == nil {
				continue
			}
			if s.Upkeep.Compactions > 0 {
				cs = append(cs, upkeepMark{X: s.T, Member: i})
			}
			if s.Upkeep.Defrags > 0 {
				ds = append(ds, upkeepMark{X: s.T, Member: i, Defrag: true})
			}
		}
	}
	return append(cs, ds...)
}

// addUpkeepMarks draws the marks across a chart over time whose y axis is
// set, and names each kind drawn in the legend.
func addUpkeepMarks(p *plot.Plot, marks []upkeepMark) {
	drawn := map[bool]bool{}
	for _, k := range marks {
		p.Add(vline(k.X, p.Y.Min, p.Y.Max, markStyle(runColor(k.Member), k.Defrag)))
		drawn[k.Defrag] = true
	}
	for _, kind := range upkeepKinds {
		if drawn[kind.defrag] {
			p.Legend.Add(kind.legend, vline(0, 0, 0, markStyle(noteColor, kind.defrag)))
		}
	}
}

// upkeepKinds name the two kinds of marks in the legend and the caption.
var upkeepKinds = []struct {
	defrag          bool
	legend, caption string
}{{false, "compaction", "a scheduled compaction (dotted)"}, {true, "defragmentation", "a defragmentation (dash-dot)"}}

// upkeepCaption says what the marks drawn are ("" when there are none).
func upkeepCaption(marks []upkeepMark) string {
	drawn := map[bool]bool{}
	for _, k := range marks {
		drawn[k.Defrag] = true
	}
	var kinds []string
	for _, kind := range upkeepKinds {
		if drawn[kind.defrag] {
			kinds = append(kinds, kind.caption)
		}
	}
	if len(kinds) == 0 {
		return ""
	}
	return " Vertical lines in a member's colour mark the ends of the intervals in which that member finished " + strings.Join(kinds, " or ") +
		": a spike on one may be that work's cost rather than the disk's; judge the disk by the intervals between them."
}
