package report

import (
	"strings"
	"testing"

	"github.com/etcdperf/etcdperf/internal/result"
)

// scale-embedded.json is the Result of a real `etcdperf scale` run: the
// page draws etcd's figures against the objects and lists the steps.
func TestScaleSection(t *testing.T) {
	in := load(t, "scale-embedded.json")
	rep := New(Combine(in))
	out := pageOf(t, rep.Root)
	for _, want := range []string{"Growth: etcd", "database size vs objects", "etcd memory (RSS) vs objects", "whole list vs objects",
		"put p99 vs objects", "watch event lag p99 vs objects", "after each step", "list services", "objects reached", "database bytes per object"} {
		if !strings.Contains(out, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	names := map[string]bool{}
	for _, c := range rep.Charts() {
		names[c.Name] = true
	}
	for _, n := range []string{"scale-db-size", "scale-rss", "scale-disk", "scale-put", "scale-list", "scale-watch", "scale-pressure"} {
		if !names[n] {
			t.Errorf("no chart %s among %v", n, names)
		}
	}
	// The charts' x is the objects: each run's line has a point per step.
	var b Block
	for _, s := range sections() {
		if s.ID == "scale" {
			b = s.Build(rep.Runs)
		}
	}
	steps := in[0].Result.Scale.Steps
	if len(b.Tables) != 1 || len(b.Tables[0].Rows) != len(steps) || b.Tables[0].Rows[3][1] != formatUnit(float64(steps[3].Objects), "count") {
		t.Errorf("steps table %+v", b.Tables)
	}

	// Two runs compare: the summary rows have both, the better one marked.
	two := load(t, "scale-embedded.json", "scale-embedded.json")
	bigger := *two[1].Result
	sc := *bigger.Scale
	sc.Steps = append([]result.ScaleStep(nil), sc.Steps...)
	sc.Steps[len(sc.Steps)-1].Objects *= 2
	bigger.Scale, bigger.Name = &sc, "bigger"
	two[1].Result = &bigger
	rows := Rows(New(Combine(two)).Runs)
	found := false
	for _, r := range rows {
		if r.Metric.Label == "objects reached" {
			found = true
			if r.Best != 1 || r.Factor != 2 {
				t.Errorf("objects reached: best %d factor %v", r.Best, r.Factor)
			}
		}
	}
	if !found {
		t.Error("no objects reached row")
	}

	// A stopped run says why; a run without steps draws nothing.
	stopped := *in[0].Result
	ssc := *stopped.Scale
	ssc.Stopped = "put p99 2s at 4800 objects (step 4) is over its limit"
	stopped.Scale = &ssc
	if p := pageOf(t, &stopped); !strings.Contains(p, "stopped after step 4 of 4: put p99 2s") {
		t.Error("the stop is not on the page")
	}
	empty := result.New("scale")
	empty.Scale = &result.Scale{Planned: 3}
	if p := pageOf(t, empty); strings.Contains(p, "vs objects") {
		t.Error("a run without steps drew charts")
	}
}
