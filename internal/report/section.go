package report

import (
	"sort"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"

	"github.com/etcdperf/etcdperf/internal/result"
)

// Section is one part of a report that some Results have (disk, bench,
// server, ...). Each lives in its own file of this package and registers
// itself from an init function; the page, the PNG charts and compare only
// walk the registry. To add one (say the logs timeline or scale's curves,
// once their fields are in package result): write logs.go with
//
//	func init() {
//		Register(Section{ID: "logs", Title: "etcd logs", Order: 40,
//			Has:     func(r *result.Result) bool { return r.Logs != nil },
//			Metrics: []Metric{...},
//			Build:   func(runs []Run) Block { ... },
//		})
//	}
//
// and, if it helps, a Result with the section in testdata for the tests.
type Section struct {
	// ID names the section in the page (an anchor) and prefixes the names
	// of its PNG files.
	ID    string
	Title string
	// Order places the section on the page and its rows in the summary.
	Order int
	// Has reports whether a Result holds the section's data. Runs without
	// it are not passed to Build, and the section is left out when no run
	// has it. A nil Has makes a view across all the runs (the ratios):
	// Build gets every run, and the section does not make a Result a run.
	Has func(r *result.Result) bool
	// Metrics are the section's rows in the summary table and in compare.
	Metrics []Metric
	// MetricsOf, when set, adds rows that depend on the runs (one per
	// resource a database holds), after Metrics; it gets the runs that
	// have the section.
	MetricsOf func(runs []Run) []Metric
	// Build returns the section's charts, tables and notes for the runs
	// that have it (at least one).
	Build func(runs []Run) Block
}

// Block is what a section shows on the page.
type Block struct {
	Notes  []string
	Tables []Table
	Charts []Chart
	// ChartsFirst puts the charts above the tables (the page shows tables
	// first otherwise).
	ChartsFirst bool
}

// Table is a small table of text: a header row and rows of cells.
type Table struct {
	Title  string
	Header []string
	Rows   [][]string
}

// Chart is one plot. The page inlines it as SVG, --png writes it as a PNG.
type Chart struct {
	// Name is unique in the report and names its PNG file.
	Name  string
	Title string
	// Caption tells in one sentence how to read it.
	Caption string
	Plot    *plot.Plot
	// Lower, when set, is a second plot drawn under Plot on the same x
	// axis (their data areas line up), taking LowerShare of the height.
	Lower      *plot.Plot
	LowerShare float64
	// Width and Height default to the page's chart size.
	Width, Height vg.Length
}

var registry []Section

// Register adds a section; it is meant for init functions.
func Register(s Section) {
	registry = append(registry, s)
	sort.SliceStable(registry, func(i, j int) bool { return registry[i].Order < registry[j].Order })
}

func sections() []Section { return registry }

// runsWith returns the runs that have the section's data.
func runsWith(s Section, runs []Run) []Run {
	if s.Has == nil {
		return runs
	}
	var out []Run
	for _, r := range runs {
		if s.Has(r.Result) {
			out = append(out, r)
		}
	}
	return out
}
