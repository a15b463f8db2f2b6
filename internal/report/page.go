package report

import (
	"bytes"
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/etcdperf/etcdperf/internal/render"
	"github.com/etcdperf/etcdperf/internal/result"
)

var (
	//go:embed page.html
	pageHTML string
	//go:embed page.css
	pageCSS  string
	pageTmpl = template.Must(template.New("page").Parse(pageHTML))
)

// HTML writes the report as one self-contained page: its styles are
// inline, its charts inline SVG, and it refers to nothing outside itself,
// so it opens on an air-gapped host or attached to a ticket.
func (rep *Report) HTML(w io.Writer) error {
	var buf bytes.Buffer
	if err := pageTmpl.Execute(&buf, rep.page()); err != nil {
		return fmt.Errorf("render the HTML report: %w", err)
	}
	_, err := buf.WriteTo(w)
	return err
}

type page struct {
	Title        string
	Verdict      string
	VerdictClass string
	CSS          template.CSS
	Runs         []pageRun
	Judged       []pageJudged
	Summary      pageTable
	Noise        string
	Sections     []pageSection
	Settings     pageTable
	Tool         string
	Count        int
}

type pageRun struct {
	Label  string
	Swatch template.CSS
}

type pageJudged struct {
	Label, Verdict, Class, Summary, Error string
	Findings                              []pageFinding
	Checks                                []pageCheck
	Tuning                                []pageTuned
	TuningNotes                           []string
	// TuningFile is the changes as the node's layout takes them (doctor
	// --node), as --tuning-out writes them.
	TuningFile string
}

// pageTuned is one of etcd's flags as the figures call for it.
type pageTuned struct {
	Flag, Current, Action, Why, Source string
}

type pageFinding struct {
	Severity, Title, Recommendation string
	Evidence                        []string
}

type pageCheck struct {
	Name, Title, Status, Observed, Limit, Source string
}

// pageTable is a table with a label column, one column per run, and
// optionally a last column.
type pageTable struct {
	Header []string
	Last   string
	Rows   []pageRow
}

type pageRow struct {
	Label string
	Class string
	Cells []pageCell
	Last  string
}

type pageCell struct {
	Text, Ratio, Class string
}

type pageSection struct {
	ID, Title   string
	Notes       []string
	Tables      []Table
	Charts      []pageChart
	ChartsFirst bool
}

type pageChart struct {
	Title, Caption, Error string
	SVG                   template.HTML
}

// namedBlock is a section's block in the report.
type namedBlock struct {
	Section Section
	Block
}

func (rep *Report) blocks() []namedBlock {
	var out []namedBlock
	for _, s := range sections() {
		runs := runsWith(s, rep.Runs)
		if len(runs) == 0 || s.Build == nil {
			continue
		}
		b := s.Build(runs)
		if len(b.Charts)+len(b.Tables)+len(b.Notes) == 0 {
			continue
		}
		out = append(out, namedBlock{s, b})
	}
	return out
}

func (rep *Report) page() page {
	p := page{CSS: template.CSS(pageCSS), Count: len(rep.Runs), Tool: rep.Root.Tool.Version}
	v := rep.Verdict()
	p.Verdict, p.VerdictClass = strings.ToUpper(string(v)), string(v)
	p.Title = "etcdperf report"
	if v != "" {
		p.Title += ": " + p.Verdict
	}
	for _, r := range rep.Runs {
		p.Runs = append(p.Runs, pageRun{Label: r.Label, Swatch: swatch(r.Index)})
	}
	for _, j := range rep.Judged {
		p.Judged = append(p.Judged, judgedOf(j))
	}
	p.Summary = summaryTable(rep.Runs)
	p.Noise = NoiseText()
	for _, b := range rep.blocks() {
		// Sections print what the Results hold: no secret may pass.
		ps := pageSection{ID: b.Section.ID, Title: b.Section.Title, ChartsFirst: b.ChartsFirst}
		for _, n := range b.Notes {
			ps.Notes = append(ps.Notes, scrubText(n))
		}
		for _, t := range b.Tables {
			st := Table{Title: scrubText(t.Title), Header: scrubAll(t.Header)}
			for _, row := range t.Rows {
				st.Rows = append(st.Rows, scrubAll(row))
			}
			ps.Tables = append(ps.Tables, st)
		}
		for _, c := range b.Charts {
			pc := pageChart{Title: c.Title, Caption: c.Caption}
			svg, err := c.SVG()
			if err != nil {
				pc.Error = err.Error()
			} else {
				pc.SVG = template.HTML(svg) // made here from numbers; its text is escaped by the SVG writer
			}
			ps.Charts = append(ps.Charts, pc)
		}
		p.Sections = append(p.Sections, ps)
	}
	p.Settings = settingsTable(rep.Runs)
	return p
}

func scrubAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = scrubText(s)
	}
	return out
}

func swatch(run int) template.CSS {
	c := palette[run%len(palette)]
	return template.CSS(fmt.Sprintf("background:#%02x%02x%02x", c.R, c.G, c.B))
}

func judgedOf(j Run) pageJudged {
	r := j.Result
	pj := pageJudged{Label: j.Label, Verdict: strings.ToUpper(string(r.Verdict)), Class: string(r.Verdict),
		Summary: scrubText(r.Summary), Error: scrubText(r.Error)}
	for _, f := range r.Findings {
		pf := pageFinding{Severity: string(f.Severity), Title: scrubText(f.Title), Recommendation: scrubText(f.Recommendation)}
		for _, e := range f.Evidence {
			pf.Evidence = append(pf.Evidence, scrubText(render.FormatEvidence(e)))
		}
		pj.Findings = append(pj.Findings, pf)
	}
	for _, c := range r.Checks {
		observed := render.FormatValue(c.Observed, c.Unit)
		if c.Bound {
			// A quantile in the lowest bucket of etcd's histogram: at most that.
			observed = atMost + observed
		}
		title := c.Title
		if title == c.Name {
			title = ""
		}
		pj.Checks = append(pj.Checks, pageCheck{Name: c.Name, Title: title, Status: string(c.Status),
			Observed: observed, Limit: render.FormatLimit(c), Source: scrubText(c.Source)})
	}
	if t := r.Tuning; t != nil {
		for _, f := range t.Flags {
			cur, action := render.TunedFlagWords(f)
			pj.Tuning = append(pj.Tuning, pageTuned{Flag: "--" + f.Name, Current: scrubText(cur), Action: scrubText(action), Why: scrubText(f.Why), Source: scrubText(f.Source)})
		}
		for _, n := range t.Notes {
			pj.TuningNotes = append(pj.TuningNotes, scrubText(n))
		}
		if t.Defrag != nil {
			pj.TuningNotes = append(pj.TuningNotes, "Defragmentation: "+scrubText(render.DefragWords(t.Defrag)))
			for i, m := range t.Defrag.Members {
				pj.TuningNotes = append(pj.TuningNotes, fmt.Sprintf("%d. %s: %s", i+1, scrubText(render.DefragMemberWords(m)), scrubText(strings.Join(m.Commands, " && "))))
			}
		}
		if body, ok := render.TuningFile(t); ok && len(t.Changes()) > 0 {
			pj.TuningFile = scrubText(body)
		}
	}
	return pj
}

// summaryTable has what each run is, then every metric the runs have, with
// ratios to the first run and the best run per line.
func summaryTable(runs []Run) pageTable {
	t := pageTable{Header: []string{""}}
	for _, r := range runs {
		t.Header = append(t.Header, r.Label)
	}
	multi := len(runs) > 1
	if multi {
		t.Last = "better"
	}
	info := func(label string, f func(r *result.Result) string) {
		row := pageRow{Label: label, Class: "info"}
		any := false
		for _, r := range runs {
			s := f(r.Result)
			any = any || s != ""
			row.Cells = append(row.Cells, pageCell{Text: s})
		}
		if any {
			t.Rows = append(t.Rows, row)
		}
	}
	info("kind", func(r *result.Result) string { return r.Kind })
	info("verdict", func(r *result.Result) string { return strings.ToUpper(string(r.Verdict)) })
	info("where", where)
	info("started", func(r *result.Result) string {
		if r.Started.IsZero() {
			return ""
		}
		return r.Started.UTC().Format(time.RFC3339)
	})
	for i := range t.Rows {
		if t.Rows[i].Label == "verdict" {
			for j := range t.Rows[i].Cells {
				t.Rows[i].Cells[j].Class = "v-" + strings.ToLower(t.Rows[i].Cells[j].Text)
			}
		}
	}
	for _, row := range Rows(runs) {
		pr := pageRow{Label: row.Metric.Label}
		for i, v := range row.Values {
			c := pageCell{}
			if v == nil {
				c.Text, c.Class = "–", "absent"
			} else {
				c.Text = row.Metric.Format(*v)
			}
			if i > 0 && v != nil && !math.IsNaN(row.Ratios[i]) {
				c.Ratio = formatRatio(row.Ratios[i])
			}
			if multi && i == row.Best {
				c.Class = "best"
			}
			pr.Cells = append(pr.Cells, c)
		}
		if multi {
			pr.Last = bestText(row, runs)
		}
		t.Rows = append(t.Rows, pr)
	}
	return t
}

// where says in a few words what a run measured: a directory on a file
// system and device, etcd endpoints, or an embedded etcd in a directory
// (its endpoints were the run's own, gone with it).
func where(r *result.Result) string {
	e := r.Env
	if e == nil {
		return ""
	}
	var parts []string
	dir := e.Dir
	embedded := r.Target != nil && r.Target.Kind == "embedded"
	if embedded && dir == "" && r.Target.DataDir != "" {
		dir = filepath.Dir(r.Target.DataDir)
	}
	if dir != "" {
		s := storageOf(e, dir)
		if embedded {
			s = embeddedMembers(len(r.Target.Members)) + " in " + s
		}
		parts = append(parts, s)
	}
	switch {
	case embedded && dir == "":
		parts = append(parts, embeddedMembers(len(r.Target.Members)))
	case e.Endpoints != "" && !embedded:
		parts = append(parts, scrubText(e.Endpoints))
	}
	if len(parts) == 0 && e.Hostname != "" {
		parts = append(parts, e.Hostname)
	}
	return strings.Join(parts, ", ")
}

// storageOf names a directory with the file system and the device under
// it: "/var/lib/etcd (ext4 on vda)".
func storageOf(e *result.Env, dir string) string {
	var on []string
	if e.FSType != "" {
		on = append(on, e.FSType)
	}
	if e.Device != "" {
		on = append(on, e.Device)
	}
	if len(on) > 0 {
		return dir + " (" + strings.Join(on, " on ") + ")"
	}
	return dir
}

// embeddedMembers names n embedded members: "an embedded etcd member",
// "3 embedded etcd members".
func embeddedMembers(n int) string {
	if n <= 1 {
		return "an embedded etcd member"
	}
	return fmt.Sprintf("%d embedded etcd members", n)
}

func formatRatio(r float64) string { return render.Ratio(r) }

// bestText names the best run of a row and by how much it beats the worst.
func bestText(row Row, runs []Run) string {
	switch row.Best {
	case NoBest:
		return ""
	case Tie:
		return "tie"
	}
	s := runs[row.Best].Label
	if !math.IsNaN(row.Factor) && !math.IsInf(row.Factor, 0) {
		s += " (" + formatRatio(row.Factor) + ")"
	}
	return s
}

// settingsTable lists every setting of every run side by side; the rows
// where the runs differ are marked.
func settingsTable(runs []Run) pageTable {
	t := pageTable{Header: []string{""}}
	values := map[string][]string{}
	var keys []string
	for i, r := range runs {
		t.Header = append(t.Header, r.Label)
		for _, s := range settings(r.Result) {
			if _, ok := values[s.Key]; !ok {
				values[s.Key] = make([]string, len(runs))
				keys = append(keys, s.Key)
			}
			values[s.Key][i] = s.Value
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		row := pageRow{Label: k}
		for _, v := range values[k] {
			row.Cells = append(row.Cells, pageCell{Text: v})
			if v != values[k][0] {
				row.Class = "differs"
			}
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}
