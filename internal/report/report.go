// Package report turns any number of Results into one self-contained HTML
// page (inline SVG charts, no network at all), PNG charts, and the text
// comparison of `etcdperf compare`.
//
// The report knows no command: it shows whichever sections the Results
// have. Each section (disk, bench, server, ...) lives in its own file and
// registers its summary rows (Metrics) and its charts with Register, so
// that a new section is one new file here.
package report

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/etcdperf/etcdperf/internal/result"
)

// Input is one Result as it was read, with where it came from.
type Input struct {
	// Source is the file it was read from, "-" for standard input, or ""
	// when the Result was made in this process.
	Source string
	Result *result.Result
}

// Run is one column of a report: a Result and the label it is shown under.
type Run struct {
	Label  string
	Result *result.Result
	// Index is the run's column in the report; it keeps its colour in
	// every chart.
	Index int
}

// Report is what the page, the PNG charts and the comparison show.
type Report struct {
	// Root is the Result the report is made of.
	Root *result.Result
	// Runs are the columns: the Result when it has data of its own, and the
	// runs it holds under "runs" (a doctor or a comparison), recursively.
	Runs []Run
	// Judged are the Results that carry a verdict, checks, findings or an
	// error, each under its label.
	Judged []Run
}

// Load reads the Results in the files given ("-" is standard input). A file
// may hold several, among other lines (the logs of the pods of an indexed
// Job); each becomes one Input.
func Load(paths []string, stdin io.Reader) ([]Input, error) {
	var out []Input
	for _, p := range paths {
		var (
			data []byte
			err  error
		)
		if p == "-" {
			data, err = io.ReadAll(stdin)
		} else {
			data, err = os.ReadFile(p)
		}
		if err != nil {
			return nil, fmt.Errorf("cannot read %s: %w", p, err)
		}
		rs, err := result.Extract(data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name(p), err)
		}
		for _, r := range rs {
			out = append(out, Input{Source: p, Result: r})
		}
	}
	return out, nil
}

func name(source string) string {
	if source == "-" {
		return "standard input"
	}
	return source
}

// KindCompare is the kind of the Result that Combine makes of several.
const KindCompare = result.KindCompare

// Combine makes one Result of the inputs: the input itself when there is
// one, else their comparison (Compare).
func Combine(inputs []Input) *result.Result {
	if len(inputs) == 1 {
		return inputs[0].Result
	}
	return Compare(inputs)
}

// Compare makes a comparison Result that holds each input under "runs",
// named after the file it came from (what the user called it: gp2.json,
// ramdisk.json) unless it has a name. Its times span the runs'; it has no
// verdict of its own.
func Compare(inputs []Input) *result.Result {
	c := &result.Result{Schema: result.Schema, Kind: KindCompare, Tool: result.New(KindCompare).Tool}
	labels := labeler{}
	for i, in := range inputs {
		r := *in.Result
		r.Name = labels.unique(inputLabel(in, i, inputs))
		c.Runs = append(c.Runs, r)
		if c.Started.IsZero() || r.Started.Before(c.Started) {
			c.Started = r.Started
		}
		if r.Finished.After(c.Finished) {
			c.Finished = r.Finished
		}
	}
	return c
}

// New lays a Result out as the columns of a report.
func New(root *result.Result) *Report {
	rep := &Report{Root: root}
	rep.add(root, labeler{}, "")
	for i := range rep.Runs {
		rep.Runs[i].Index = i
	}
	return rep
}

func (rep *Report) add(r *result.Result, labels labeler, fallback string) {
	label := r.Name
	if label == "" {
		label = fallback
	}
	if label == "" {
		label = r.Kind
	}
	if label == "" {
		label = "result"
	}
	label = labels.unique(label)
	if hasData(r) || len(r.Runs) == 0 {
		rep.Runs = append(rep.Runs, Run{Label: label, Result: r})
	}
	if judged(r) && !repeatsItsRun(r) {
		rep.Judged = append(rep.Judged, Run{Label: label, Result: r})
	}
	for j := range r.Runs {
		rep.add(&r.Runs[j], labels, fmt.Sprintf("%s/%d", label, j+1))
	}
}

// Verdict is the worst verdict of all the Results.
func (rep *Report) Verdict() result.Verdict {
	var v result.Verdict
	for _, j := range rep.Judged {
		v = result.Worse(v, j.Result.Verdict)
	}
	return v
}

// repeatsItsRun tells whether a Result's judgement is its only run's,
// word for word (a doctor of one directory): the run's is shown, once.
func repeatsItsRun(r *result.Result) bool {
	if len(r.Runs) != 1 || len(r.Checks) > 0 || len(r.Findings) > 0 {
		return false
	}
	c := &r.Runs[0]
	return r.Verdict == c.Verdict && r.Summary == c.Summary && (r.Error == "" || r.Error == c.Error)
}

func judged(r *result.Result) bool {
	return r.Verdict != "" || len(r.Checks) > 0 || len(r.Findings) > 0 || r.Error != ""
}

func hasData(r *result.Result) bool {
	for _, s := range sections() {
		if s.Has != nil && s.Has(r) {
			return true
		}
	}
	return false
}

// inputLabel names an input: the Result's own name, else the file it came
// from, else its kind.
func inputLabel(in Input, i int, all []Input) string {
	if in.Result.Name != "" {
		return in.Result.Name
	}
	if in.Source != "" && in.Source != "-" {
		base := filepath.Base(in.Source)
		if ext := filepath.Ext(base); ext != "" && ext != base {
			base = strings.TrimSuffix(base, ext)
		}
		n, k := 0, 0
		for j, o := range all {
			if o.Source == in.Source {
				n++
				if j < i {
					k++
				}
			}
		}
		if n > 1 {
			return fmt.Sprintf("%s#%d", base, k+1)
		}
		return base
	}
	if in.Result.Kind != "" {
		return in.Result.Kind
	}
	return "result"
}

// labeler makes labels unique by numbering repeats.
type labeler map[string]int

func (l labeler) unique(s string) string {
	s = scrubText(s)
	l[s]++
	if l[s] == 1 {
		return s
	}
	for n := l[s]; ; n++ {
		c := fmt.Sprintf("%s (%d)", s, n)
		if l[c] == 0 {
			l[c] = 1
			return c
		}
	}
}
