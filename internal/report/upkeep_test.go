package report

import (
	"html"
	"strings"
	"testing"

	"github.com/etcdperf/etcdperf/internal/render"
	"github.com/etcdperf/etcdperf/internal/units"
)

// metrics-upkeep.json is a real `etcdperf metrics` of an etcd compacted
// and defragmented while it watched (by `etcdperf check --auto-compact
// --auto-defrag`); logs-compactions.json a real `etcdperf logs` of a
// member's journal (etcd-io/etcd#12185) with its scheduled compactions.
// The page lists each member's compactions and defragmentations as the
// text view says them, with their source, the intervals they ended in,
// the longest defragmentation against a Kubernetes controller's lease
// renew deadline, and etcd's advice.
func TestUpkeepSection(t *testing.T) {
	rep := New(Combine(load(t, "metrics-upkeep.json", "logs-compactions.json")))
	page := pageOf(t, rep.Root)
	sec := sectionHTML(t, page, "upkeep")
	if sec == "" {
		t.Fatal("no upkeep section")
	}
	var compactions, defrags int
	for _, r := range rep.Runs {
		cs, ds := r.Result.UpkeepSeen()
		for _, c := range cs {
			compactions++
			cells := render.CompactionCells(c)
			for _, want := range append(cells[:], c.Member, c.Source) {
				if !strings.Contains(sec, html.EscapeString(want)) {
					t.Errorf("%s: the section lacks %q", r.Label, want)
				}
			}
		}
		for _, d := range ds {
			defrags++
			for _, want := range append(render.DefragCells(d), d.Member, d.Source, "the longest defragmentation of "+d.Member+" took "+render.DefragLongest(d)) {
				if !strings.Contains(sec, html.EscapeString(want)) {
					t.Errorf("%s: the section lacks %q", r.Label, want)
				}
			}
		}
		if m := r.Result.Metrics; m != nil {
			rows := 0
			for _, mm := range m.Members {
				for _, s := range mm.Series {
					if s.Up() && s.Upkeep != nil {
						rows++
						want := "<th>" + mm.Name + `</th><td class="num">` + units.Seconds(s.T) + "</td>"
						if !strings.Contains(sec, want) {
							t.Errorf("%s: no row of the interval ending at %s", r.Label, units.Seconds(s.T))
						}
					}
				}
			}
			if rows == 0 {
				t.Errorf("%s: no interval of the metrics run saw a compaction or a defragmentation", r.Label)
			}
		}
	}
	if compactions < 2 || defrags < 1 {
		t.Fatalf("the fixtures hold %d members' compactions and %d members' defragmentations", compactions, defrags)
	}
	for _, want := range []string{"every 5m0s", "lease renew deadline (10s; lease 15s)", "followers first",
		"scheduled compactions (all members)", "longest defragmentation"} {
		if !strings.Contains(page, html.EscapeString(want)) {
			t.Errorf("the page lacks %q", want)
		}
	}
	// The summary's longest defragmentation is the most the notes say it
	// took, not its histogram bucket's bound.
	for _, sc := range registry {
		if sc.ID != "upkeep" {
			continue
		}
		for _, m := range sc.Metrics {
			if m.Label != "longest defragmentation" {
				continue
			}
			for _, r := range rep.Runs {
				_, ds := r.Result.UpkeepSeen()
				var want float64
				for _, d := range ds {
					_, hi := d.LongestBounds()
					want = max(want, hi)
				}
				if v, ok := m.Get(r.Result); want > 0 && (!ok || v.V != want) {
					t.Errorf("%s: longest defragmentation %v (%v), want %v", r.Label, v.V, ok, want)
				}
			}
		}
	}
	// A run without compactions or defragmentations has no such section.
	if strings.Contains(pageOf(t, load(t, "disk-ext4.json")[0].Result), `id="upkeep"`) {
		t.Error("an upkeep section on a disk run")
	}
}
