package limits

import (
	"flag"
	"os"
	"strings"
	"testing"

	"github.com/etcdperf/etcdperf/internal/units"
)

var updateDocs = flag.Bool("update", false, "rewrite docs/limits.md's table from limits.Table")

// The markers around the table of docs/limits.md that Table generates.
const (
	docsPath  = "../../docs/limits.md"
	docsBegin = "<!-- limits: generated from limits.Table by `go test ./internal/limits -run TestDocsLimits -update` -->\n"
	docsEnd   = "<!-- end of limits -->\n"
)

// markdownTable is the documentation's table of limits: one row per
// criterion of table, as --limit names it, with its default, what judges
// by it and its source.
func markdownTable(table []Criterion) string {
	var b strings.Builder
	b.WriteString("| `--limit` name | what | default | judged as | source |\n|---|---|---|---|---|\n")
	for _, c := range table {
		def := string(c.Op) + " " + units.Value(c.Limit, string(c.Unit))
		if c.Warn != nil {
			def += ", warn at " + units.Value(*c.Warn, string(c.Unit))
		}
		var judged []string
		if _, ok := Lookup(checked, c.ID); ok {
			judged = append(judged, "check")
		}
		if c.Findings != "" {
			judged = append(judged, "level of "+c.Findings)
		}
		b.WriteString("| `" + c.ID + "` | " + c.Title + " | " + def + " | " + strings.Join(judged, "; ") + " | " + strings.ReplaceAll(c.Source, "|", "\\|") + " |\n")
	}
	return b.String()
}

// TestDocsLimits fails when docs/limits.md's table and Table disagree:
// a limit added, removed or changed in one and not the other.
func TestDocsLimits(t *testing.T) {
	doc, err := os.ReadFile(docsPath)
	if err != nil {
		t.Fatal(err)
	}
	before, rest, ok := strings.Cut(string(doc), docsBegin)
	table, after, ok2 := strings.Cut(rest, docsEnd)
	if !ok || !ok2 {
		t.Fatalf("%s lacks the markers %q and %q around its table", docsPath, docsBegin, docsEnd)
	}
	want := markdownTable(Table)
	if *updateDocs {
		if err := os.WriteFile(docsPath, []byte(before+docsBegin+want+docsEnd+after), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if table != want {
		t.Errorf("%s's table of limits differs from limits.Table (go test ./internal/limits -run TestDocsLimits -update rewrites it)\n--- docs:\n%s\n--- limits.Table:\n%s", docsPath, table, want)
	}
}

func TestDocsTableNamesEveryCriterion(t *testing.T) {
	got := markdownTable(Table)
	for _, c := range Table {
		if !strings.Contains(got, "| `"+c.ID+"` |") {
			t.Errorf("the table of limits lacks %s", c.ID)
		}
	}
	// A changed default shows in the table, so that TestDocsLimits fails.
	changed, err := Override(Table, []string{PeerRTT + "=40ms"})
	if err != nil {
		t.Fatal(err)
	}
	if markdownTable(changed) == got || !strings.Contains(markdownTable(changed), "< 40ms") {
		t.Errorf("a changed limit does not change the table of limits")
	}
}
