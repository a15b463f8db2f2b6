package report

import (
	"io"

	"github.com/etcdperf/etcdperf/internal/render"
	"github.com/etcdperf/etcdperf/internal/result"
)

// The HTML page is an output format of every command (-o run.html, -o html
// and --html FILE), and a comparison's text view is the summary table.
func init() {
	render.RegisterFormat(render.Format{Name: "html", Extensions: []string{".html", ".htm"}, Render: Page})
	render.RegisterText(KindCompare, func(w io.Writer, r *result.Result) error { return New(r).Text(w) })
}

// Page writes the HTML report of a Result.
func Page(w io.Writer, r *result.Result) error { return New(r).HTML(w) }
