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
	// Member is the member's index in the run (its colour), or several
	// when more than one member finished the same in the interval (a
	// cluster's compaction usually runs on every member at once).
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

// several is the Member of a mark that more than one member made.
const several = -1

// upkeepMarks are the intervals of a metrics run in which a member
// finished a compaction or a defragmentation (from its histograms), one
// mark per interval and kind, the compactions first.
func upkeepMarks(m *result.Metrics) []upkeepMark {
	var marks []upkeepMark
	at := map[upkeepMark]int{} // a mark without its member: its index in marks
	for _, defrag := range []bool{false, true} {
		for i, mm := range m.Members {
			for _, s := range mm.Series {
				if !s.Up() || s.Upkeep == nil || (defrag && s.Upkeep.Defrags <= 0) || (!defrag && s.Upkeep.Compactions <= 0) {
					continue
				}
				key := upkeepMark{X: s.T, Defrag: defrag}
				if j, ok := at[key]; ok {
					if marks[j].Member != i {
						marks[j].Member = several
					}
					continue
				}
				at[key] = len(marks)
				key.Member = i
				marks = append(marks, key)
			}
		}
	}
	return marks
}

// markColor is a mark's member's colour, grey for several members.
func markColor(k upkeepMark) color.Color {
	if k.Member == several {
		return noteColor
	}
	return runColor(k.Member)
}

// addUpkeepMarks draws the marks across a chart over time whose y axis is
// set, and names each kind drawn in the legend.
func addUpkeepMarks(p *plot.Plot, marks []upkeepMark) {
	drawn := map[bool]bool{}
	for _, k := range marks {
		p.Add(vline(k.X, p.Y.Min, p.Y.Max, markStyle(markColor(k), k.Defrag)))
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
	drawn, shared := map[bool]bool{}, false
	for _, k := range marks {
		drawn[k.Defrag] = true
		shared = shared || k.Member == several
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
	grey := ""
	if shared {
		grey = " (grey where several members did in the same interval)"
	}
	return " Vertical lines in a member's colour mark the ends of the intervals in which that member finished " + strings.Join(kinds, " or ") + grey +
		": a spike on one may be that work's cost rather than the disk's; judge the disk by the intervals between them."
}
