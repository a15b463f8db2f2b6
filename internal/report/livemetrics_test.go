package report

import (
	"fmt"
	"html"
	"image/color"
	"math"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"gonum.org/v1/plot/vg"

	"github.com/etcdperf/etcdperf/internal/result"
)

// The metrics Results are the real runs of internal/render/testdata: a
// 3-member cluster under load, and the same with a member killed midway.
func TestMetricsSection(t *testing.T) {
	in, err := Load([]string{filepath.Join("..", "render", "testdata", "metrics-3members-killed.json")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	rep := New(Combine(in))
	out := pageOf(t, rep.Root)
	// The killed member answered some of the intervals.
	var answered string
	for _, m := range in[0].Result.Metrics.Members {
		if m.Unreachable > 0 {
			answered = fmt.Sprintf(`%s</td><td class="num">%d of %d</td>`, m.Name, len(m.Series)-m.Unreachable, len(m.Series))
		}
	}
	if answered == "" {
		t.Fatal("the capture was meant to have a member that did not answer")
	}
	for _, want := range []string{"etcd members over time", "WAL fsync p99 per interval", "backend commit p99 per interval", "database size over time",
		"p99 limit 10ms", "p99 limit 25ms", "resolution 1ms", answered, "never answered", "worst member&#39;s WAL fsync p99 (metrics)", "scrapes not answered (metrics)"} {
		if want == "never answered" {
			if strings.Contains(out, want) {
				t.Errorf("page says %q of members that answered", want)
			}
			continue
		}
		if !strings.Contains(out, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	var names []string
	for _, c := range rep.Charts() {
		if strings.HasPrefix(c.Name, "metrics-") {
			names = append(names, c.Name)
			if _, err := c.SVG(); err != nil {
				t.Errorf("chart %s: %v", c.Name, err)
			}
		}
	}
	if strings.Join(names, ",") != "metrics-wal-fsync-0,metrics-backend-commit-0,metrics-db-size-0" {
		t.Errorf("charts %v", names)
	}
	// Two runs: two charts of each.
	two, err := Load([]string{filepath.Join("..", "render", "testdata", "metrics-3members.json"), filepath.Join("..", "render", "testdata", "metrics-3members-killed.json")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, c := range New(Combine(two)).Charts() {
		if strings.HasPrefix(c.Name, "metrics-wal-fsync-") {
			n++
		}
	}
	if n != 2 {
		t.Errorf("%d fsync charts for two runs", n)
	}
}

// upkeepAt is a compaction (or a defragmentation) a member finished in an
// interval of a metrics run.
type upkeepAt struct {
	member, interval int
	defrag           bool
}

// metricsResult is a metrics run of three members scraped every 10s for
// two minutes under a steady write load, whose members finished the
// compactions and defragmentations of upkeep.
func metricsResult(upkeep ...upkeepAt) *result.Result {
	start := time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)
	const intervals, every = 12, 10.0
	m := &result.Metrics{Start: start, Interval: every, Duration: intervals * every, Seconds: intervals * every, Intervals: intervals}
	bucketed := func(p99 float64) *result.Latency {
		return &result.Latency{Count: 1000, Bucketed: true, Resolution: 0.001, P50: p99 / 4, P90: p99 / 2, P99: p99}
	}
	for i, name := range []string{"etcd-0", "etcd-1", "etcd-2"} {
		mm := result.MetricsMember{Name: name, MetricsURL: "http://10.0.0." + strconv.Itoa(i+1) + ":2381/metrics"}
		for k := 0; k <= intervals; k++ {
			s := &result.MetricsSignals{Seconds: every, DBSize: 40e6 + float64(k)*1e6, DBSizeInUse: 30e6, RSS: 200e6,
				WALFsync: bucketed(0.002 + 0.0005*float64(i)), BackendCommit: bucketed(0.008 + 0.001*float64(i))}
			if k == 0 {
				s.Seconds, s.WALFsync, s.BackendCommit = 0, nil, nil
			}
			for _, u := range upkeep {
				if u.member != i || u.interval != k {
					continue
				}
				if s.Upkeep == nil {
					s.Upkeep = &result.Upkeep{}
				}
				if u.defrag {
					s.Upkeep.Defrags, s.Upkeep.DefragSeconds = 1, 1.6
					s.WALFsync.P99, s.BackendCommit.P99 = 0.064, 1.6
				} else {
					s.Upkeep.Compactions, s.Upkeep.CompactionSeconds = 1, 0.4
					s.BackendCommit.P99 = 0.128
				}
			}
			mm.Series = append(mm.Series, result.MetricsSample{T: float64(k) * every, MetricsSignals: s})
		}
		mm.Overall = mm.Series[intervals].MetricsSignals
		m.Members = append(m.Members, mm)
	}
	return &result.Result{Schema: result.Schema, Kind: "metrics", Tool: result.Tool{Name: "etcdperf", Version: "devel"},
		Started: start, Finished: start.Add(intervals * every * time.Second), Metrics: m}
}

// markXs returns the x (in the SVG's units) of the vertical lines of a
// chart dashed as dashes, but for the legend's sample of them (a
// horizontal line), in the order drawn.
func markXs(t *testing.T, svg string, dashes []vg.Length, stroke ...string) []float64 {
	t.Helper()
	var parts []string
	for _, d := range dashes {
		parts = append(parts, strconv.FormatFloat(float64(d), 'g', -1, 64))
	}
	// vgsvg strokes a dashed line as
	// <path d="Mx0,y0Lx1,y1" style="...;stroke-dasharray:a,b" />
	// With a stroke given, only the lines drawn in it (case aside).
	colour := ""
	if len(stroke) > 0 {
		colour = "(?i:" + regexp.QuoteMeta(stroke[0]) + ")[^\"]*"
	}
	re := regexp.MustCompile(`<path d="M([-0-9.e]+)[ ,]([-0-9.e]+)\s*L([-0-9.e]+)[ ,]([-0-9.e]+)\s*"\s*style="[^"]*` + colour + `stroke-dasharray:` +
		regexp.QuoteMeta(strings.Join(parts, ",")) + `[;"]`)
	var xs []float64
	for _, g := range re.FindAllStringSubmatch(svg, -1) {
		x0, _ := strconv.ParseFloat(g[1], 64)
		x1, _ := strconv.ParseFloat(g[3], 64)
		if x0 == x1 {
			xs = append(xs, x0)
		}
	}
	return xs
}

// A member that compacted (twice) and was defragmented (once) in a
// metrics run: each latency chart over time marks the end of those
// intervals, a compaction and a defragmentation apart, named in its
// legend and its caption; a run without either has no marks.
func TestMetricsUpkeepMarks(t *testing.T) {
	const member = 1
	r := metricsResult(upkeepAt{member, 4, false}, upkeepAt{member, 10, false}, upkeepAt{member, 8, true})
	want := []upkeepMark{{X: 40, Member: member}, {X: 100, Member: member}, {X: 80, Member: member, Defrag: true}}
	if got := upkeepMarks(r.Metrics); !slices.Equal(got, want) {
		t.Errorf("marks %v, want %v", got, want)
	}
	rep := New(r)
	sec := sectionHTML(t, pageOf(t, r), "metrics")
	charts := 0
	for _, c := range rep.Charts() {
		if !strings.HasPrefix(c.Name, "metrics-") || strings.HasPrefix(c.Name, "metrics-db-size-") {
			continue
		}
		charts++
		svg, err := c.SVG()
		if err != nil {
			t.Fatal(err)
		}
		cs, ds := markXs(t, svg, compactionDashes), markXs(t, svg, defragDashes)
		if len(cs) != 2 || len(ds) != 1 {
			t.Fatalf("%s: %d compaction and %d defragmentation marks, want 2 and 1", c.Name, len(cs), len(ds))
		}
		// The x axis is linear in time: the defragmentation (80s) sits
		// two thirds of the way from the first compaction (40s) to the
		// second (100s), and the line is in the member's colour.
		if f := (ds[0] - cs[0]) / (cs[1] - cs[0]); math.Abs(f-2.0/3) > 0.01 {
			t.Errorf("%s: the defragmentation's mark is at %.3f of the way between the compactions', want 2/3", c.Name, f)
		}
		// The marks themselves (not only the member's latency line) are
		// in the member's colour.
		rgb := runColor(member).(color.RGBA)
		stroke := fmt.Sprintf("stroke:#%02x%02x%02x", rgb.R, rgb.G, rgb.B)
		for _, d := range [][]vg.Length{compactionDashes, defragDashes} {
			if n := len(markXs(t, svg, d, stroke)); n == 0 {
				t.Errorf("%s: no mark dashed %v in the member's colour %s", c.Name, d, stroke)
			}
		}
		for _, w := range []string{">compaction<", ">defragmentation<"} {
			if !strings.Contains(svg, w) {
				t.Errorf("%s: the legend lacks %q", c.Name, w)
			}
		}
		if !strings.Contains(html.UnescapeString(sec), "Vertical lines in a member's colour mark the ends of the intervals in which that member finished a scheduled compaction (dotted) or a defragmentation (dash-dot)") {
			t.Errorf("%s: the caption does not say what the marks are", c.Name)
		}
	}
	if charts != 2 {
		t.Fatalf("%d latency charts in the metrics section, want the WAL fsync's and the backend commit's", charts)
	}

	// A compaction of the whole cluster (every member in the same
	// interval) is one grey mark, and the caption says why it is grey.
	all := metricsResult(upkeepAt{0, 6, false}, upkeepAt{1, 6, false}, upkeepAt{2, 6, false}, upkeepAt{2, 9, true})
	if got, want := upkeepMarks(all.Metrics), []upkeepMark{{X: 60, Member: several}, {X: 90, Member: 2, Defrag: true}}; !slices.Equal(got, want) {
		t.Errorf("marks of a cluster's compaction %v, want %v", got, want)
	}
	for _, c := range New(all).Charts() {
		if !strings.HasPrefix(c.Name, "metrics-wal-fsync-") {
			continue
		}
		svg, err := c.SVG()
		if err != nil {
			t.Fatal(err)
		}
		if cs := markXs(t, svg, compactionDashes); len(cs) != 1 {
			t.Errorf("%s: %d marks of one compaction of the cluster", c.Name, len(cs))
		}
		if !strings.Contains(html.UnescapeString(c.Caption), "grey where several members did in the same interval") {
			t.Errorf("%s: the caption does not say what a grey mark is: %s", c.Name, c.Caption)
		}
	}

	// Without compactions or defragmentations: no marks, no words of them.
	calm := metricsResult()
	for _, c := range New(calm).Charts() {
		svg, err := c.SVG()
		if err != nil {
			t.Fatal(err)
		}
		if n := len(markXs(t, svg, compactionDashes)) + len(markXs(t, svg, defragDashes)); n > 0 || strings.Contains(svg, ">compaction<") {
			t.Errorf("%s: %d marks of a compaction or a defragmentation in a run without", c.Name, n)
		}
	}
	if strings.Contains(sectionHTML(t, pageOf(t, calm), "metrics"), "Vertical lines") {
		t.Error("the caption speaks of marks in a run without any")
	}
}
