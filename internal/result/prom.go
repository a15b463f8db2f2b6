package result

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"time"
)

// Prom is what `etcdperf prom export` and `etcdperf prom check` read from a
// Prometheus server: the queries, the aligned table of their series and,
// for a check, when each limit was breached.
type Prom struct {
	// URL is the Prometheus server's base URL (it never holds credentials).
	URL   string    `json:"url"`
	Start time.Time `json:"start"`
	End   time.Time `json:"end"`
	// Step is the resolution of the range queries, in seconds.
	Step float64 `json:"step"`
	// Window is the range, in seconds, of the rate(), increase() and
	// histogram_quantile() windows in the preset and check queries: each
	// point judges the Window before it.
	Window float64 `json:"window,omitempty"`
	// Selector holds the label matchers added to every preset and check
	// query (e.g. job="etcd").
	Selector string      `json:"selector,omitempty"`
	Queries  []PromQuery `json:"queries"`
	Table    *PromTable  `json:"table,omitempty"`
	// Members holds, for a check, each member's values over the whole
	// period by criterion (e.g. its WAL fsync p99 over the period).
	Members []PromMember `json:"members,omitempty"`
	// Demand is the cluster's peak write demand over the range (prom
	// check).
	Demand *PromDemand `json:"demand,omitempty"`
	// PeerRTTs are the members' round trips to each other (instances).
	PeerRTTs []PeerRTT `json:"peer_rtts,omitempty"`
	// Breaches holds, for a check, every member and criterion whose limit
	// was passed at some point, with the time windows.
	Breaches []PromBreach `json:"breaches,omitempty"`
	// Plots holds chart data when asked for (--matrix).
	Plots []PromPlot `json:"plots,omitempty"`
	Notes []string   `json:"notes,omitempty"`
	// Compactions and Defrags are each member's scheduled compactions and
	// defragmentations over the period, from its histograms.
	Compactions []Compactions `json:"compactions,omitempty"`
	Defrags     []Defrags     `json:"defrags,omitempty"`
	// Databases are the members' databases at the end of the period and
	// their growth over it (prom check).
	Databases []PromDatabase `json:"databases,omitempty"`
}

// PromDatabase is one member's database over a history: its file's size
// and the part in use at the end, its quota (0 when not exported), in
// bytes, and the file's growth over the period in bytes per second.
type PromDatabase struct {
	Instance string  `json:"instance"`
	Size     float64 `json:"size"`
	InUse    float64 `json:"in_use,omitempty"`
	Quota    float64 `json:"quota,omitempty"`
	Growth   float64 `json:"growth"`
}

// PromQuery is one PromQL range query and what it returned.
type PromQuery struct {
	Name string `json:"name"`
	Expr string `json:"expr"`
	// Unit of the values: "s", "bytes", "bytes/s", "ops/s", "count" or ""
	// when unknown (a user's query).
	Unit string `json:"unit,omitempty"`
	// Series is how many series the query returned (columns in the table).
	Series   int      `json:"series"`
	Warnings []string `json:"warnings,omitempty"`
}

// PromTable is the range queries' series aligned on their timestamps: one
// row per timestamp, one column per series. A series without a sample at a
// row's time has an absent cell there.
type PromTable struct {
	Columns []PromColumn `json:"columns"`
	// Time holds the rows' timestamps in unix seconds, ascending.
	Time []float64 `json:"time"`
	// Rows[i][j] is column j at Time[i].
	Rows [][]PromValue `json:"rows"`
}

// UnmarshalJSON reads a table and checks its shape (one time per row, one
// cell per column in each row), so that a Result from elsewhere cannot make
// a view index past a row.
func (t *PromTable) UnmarshalJSON(b []byte) error {
	type plain PromTable
	if err := json.Unmarshal(b, (*plain)(t)); err != nil {
		return err
	}
	if len(t.Rows) != len(t.Time) {
		return fmt.Errorf("the prom table has %d rows but %d times", len(t.Rows), len(t.Time))
	}
	for i, row := range t.Rows {
		if len(row) != len(t.Columns) {
			return fmt.Errorf("row %d of the prom table has %d cells for %d columns", i+1, len(row), len(t.Columns))
		}
	}
	return nil
}

// PromColumn names one series: Name is "query{label=value,...}" with the
// labels sorted by name.
type PromColumn struct {
	Name   string            `json:"name"`
	Query  string            `json:"query"`
	Labels map[string]string `json:"labels,omitempty"`
	Unit   string            `json:"unit,omitempty"`
}

// PromValue is one cell of a PromTable. In JSON it is a number, null when
// the series has no sample at that time, or the string "NaN", "+Inf" or
// "-Inf" (as Prometheus writes them; JSON numbers cannot hold them). NaN is
// what histogram_quantile returns over a window without observations.
type PromValue struct {
	V       float64
	Present bool
}

// PromSample returns a present cell holding v.
func PromSample(v float64) PromValue { return PromValue{V: v, Present: true} }

// Finite reports whether the cell holds a real number.
func (p PromValue) Finite() bool {
	return p.Present && !math.IsNaN(p.V) && !math.IsInf(p.V, 0)
}

// String formats the cell as the CSV view writes it: empty when absent,
// NaN, +Inf, -Inf or the shortest exact decimal.
func (p PromValue) String() string {
	switch {
	case !p.Present:
		return ""
	case math.IsNaN(p.V):
		return "NaN"
	case math.IsInf(p.V, 1):
		return "+Inf"
	case math.IsInf(p.V, -1):
		return "-Inf"
	}
	return strconv.FormatFloat(p.V, 'g', -1, 64)
}

// MarshalJSON writes a number, null or one of "NaN", "+Inf", "-Inf".
func (p PromValue) MarshalJSON() ([]byte, error) {
	if !p.Present {
		return []byte("null"), nil
	}
	if p.Finite() {
		return []byte(p.String()), nil
	}
	return []byte(strconv.Quote(p.String())), nil
}

// UnmarshalJSON reads what MarshalJSON writes.
func (p *PromValue) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*p = PromValue{}
		return nil
	}
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		switch s {
		case "NaN":
			*p = PromSample(math.NaN())
		case "+Inf":
			*p = PromSample(math.Inf(1))
		case "-Inf":
			*p = PromSample(math.Inf(-1))
		default:
			return fmt.Errorf("prom value %q is not a number, NaN, +Inf or -Inf", s)
		}
		return nil
	}
	var v float64
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*p = PromSample(v)
	return nil
}

// PromMember is one member (Prometheus' instance label) in a check, with
// its value of each criterion over the whole period.
type PromMember struct {
	Instance string             `json:"instance"`
	Observed map[string]float64 `json:"observed"`
	// Disk is what node-exporter says of a device of the member's host,
	// when Prometheus scrapes one on that host (nil: none joined).
	Disk *PromDisk `json:"disk,omitempty"`
}

// PromDisk is a device of a member's host as node-exporter reports it
// (node_disk_writes_completed_total, node_disk_io_time_seconds_total),
// joined to the member by the host part of their instance labels. Which
// device holds etcd's WAL node-exporter does not say: it is the host's
// busiest device over the period.
type PromDisk struct {
	// Instance is node-exporter's instance label, Device its device label.
	Instance string `json:"instance"`
	Device   string `json:"device"`
	// WriteIOPS and Busy are the writes completed per second and the
	// share of the time the device was busy over each window, at each
	// evaluation point of the period (Time, Unix seconds).
	Time      []float64 `json:"time"`
	WriteIOPS []float64 `json:"write_iops"`
	Busy      []float64 `json:"busy"`
	// Devices is how many devices the host reported.
	Devices int `json:"devices"`
}

// PromBreach tells how often and when one member passed one limit.
type PromBreach struct {
	// Check is the criterion's ID (e.g. wal_fsync_p99).
	Check    string `json:"check"`
	Instance string `json:"instance"`
	// Status is fail when the limit was passed, warn when only the warning
	// level was.
	Status Status `json:"status"`
	// Points is how many evaluation points passed the warning level (or the
	// limit, without one); Failed how many passed the limit; Total how many
	// had a value for this member.
	Points int `json:"points"`
	Failed int `json:"failed"`
	Total  int `json:"total"`
	// Fraction is Points/Total: how much of the time it was breached.
	Fraction float64 `json:"fraction"`
	// Worst is the worst value seen.
	Worst   float64      `json:"worst"`
	Limit   float64      `json:"limit"`
	Unit    string       `json:"unit"`
	Windows []PromWindow `json:"windows"`
}

// PromWindow is a run of consecutive breached evaluation points. From and
// To are the first and last of them; each judged the Window before it.
type PromWindow struct {
	From   time.Time `json:"from"`
	To     time.Time `json:"to"`
	Points int       `json:"points"`
	Worst  float64   `json:"worst"`
	Status Status    `json:"status"`
}

// PromPlot is the data of one chart: one line per series, Y against X.
// X is "time" (unix seconds) or the name of another query, whose values at
// the same timestamps give the x coordinates (etcd health tests plot each
// metric against the number of pods this way).
type PromPlot struct {
	Title string     `json:"title"`
	X     string     `json:"x"`
	Y     string     `json:"y"`
	XUnit string     `json:"x_unit,omitempty"`
	YUnit string     `json:"y_unit,omitempty"`
	Lines []PromLine `json:"lines"`
}

// PromLine is one series of a plot. Points are [x, y] pairs in time order;
// only timestamps where both are finite numbers are kept.
type PromLine struct {
	// Name is the y column's name; XColumn the x column's, when X is a query.
	Name    string       `json:"name"`
	XColumn string       `json:"x_column,omitempty"`
	Points  [][2]float64 `json:"points"`
}

// PromDemand is a cluster's write demand over a Prometheus range: the p99
// and the maximum, over the range's steps, of the most any member
// committed (proposals) and applied (puts) per second over Window seconds.
type PromDemand struct {
	Window       float64 `json:"window"`
	Points       int     `json:"points"`
	ProposalsP99 float64 `json:"proposals_p99"`
	ProposalsMax float64 `json:"proposals_max"`
	PutsP99      float64 `json:"puts_p99"`
	PutsMax      float64 `json:"puts_max"`
}
