package report

import (
	"strings"
	"testing"
)

// db-scale.json and db-fragmented.json are the Results of `etcdperf db` on
// real files (a snapshot of scale's objects, a member's database
// fragmented by deletes): the page draws the bytes by resource, and two
// of them compare resource by resource, with what grew.
func TestDBSection(t *testing.T) {
	in := load(t, "db-scale.json")
	rep := New(Combine(in))
	out := pageOf(t, rep.Root)
	for _, want := range []string{"Database: what fills it", "bytes by resource", "services/specs", "keys with the most revisions kept",
		"a defragmentation gives back", "quota used (db)", "pods bytes (db)"} {
		if !strings.Contains(out, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if cs := rep.Charts(); len(cs) != 1 || cs[0].Name != "db-resources-0" {
		t.Errorf("charts %+v", cs)
	}

	two := New(Combine(load(t, "db-scale.json", "db-fragmented.json")))
	rows := Rows(two.Runs)
	labels := map[string][]*Value{}
	for _, r := range rows {
		labels[r.Metric.Label] = r.Values
	}
	if v := labels["pods keys (db)"]; len(v) != 2 || v[0] == nil || v[0].V != 300 || v[1] == nil || v[1].V != 0 {
		t.Errorf("pods keys: %+v", v)
	}
	if v := labels["/frag keys (db)"]; len(v) != 2 || v[1] == nil || v[1].V != 201 {
		t.Errorf("/frag keys: %+v", v)
	}
	var b Block
	for _, s := range sections() {
		if s.ID == "db" {
			b = s.Build(two.Runs)
		}
	}
	last := b.Tables[len(b.Tables)-1]
	if !strings.HasPrefix(last.Title, "what grew from") || last.Rows[0][0] != "pods" || !strings.HasPrefix(last.Rows[0][3], "-") || last.Rows[0][4] != "-300" {
		t.Errorf("growth table %+v", last)
	}
}
