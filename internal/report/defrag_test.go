package report

import (
	"html"
	"strings"
	"testing"

	"github.com/etcdperf/etcdperf/internal/units"
)

// doctor-defrag.json is a real `etcdperf doctor --data-dir DIR
// --db-size 64m` (capacity sweep on): the location's storage rehearsed a
// defragmentation. The page states the stall for the database size, on
// that storage, with what the rehearsal measured, against a Kubernetes
// controller's lease renew deadline, and etcd's advice.
func TestDefragSection(t *testing.T) {
	rep := New(Combine(load(t, "doctor-defrag.json")))
	var run Run
	for _, r := range rep.Runs {
		if r.Result.ExpectedDefrag != nil {
			run = r
		}
	}
	e := run.Result.ExpectedDefrag
	if e == nil || e.Rehearsal == nil || e.Seconds <= 0 || e.Rate <= 0 {
		t.Fatalf("the fixture holds no rehearsed defragmentation: %+v", e)
	}
	page := pageOf(t, rep.Root)
	sec := sectionHTML(t, page, "defrag")
	if sec == "" {
		t.Fatal("no defrag section")
	}
	for _, want := range []string{
		"Defragmentation: the stall to expect",
		storageOf(run.Result.Env, run.Result.Env.Dir),
		units.Bytes(e.DBSize), e.DBSizeFrom,
		units.Bytes(e.Rate) + "/s", e.RateFrom,
		"would stall the member for about " + units.Seconds(e.Seconds),
		"lease renew deadline (10s; lease 15s)",
		"followers first", "move leadership off a member before defragmenting it", "never while a compaction runs",
	} {
		if !strings.Contains(sec, html.EscapeString(want)) {
			t.Errorf("the section lacks %q", want)
		}
	}
	if !strings.Contains(page, "expected defragmentation stall (doctor)") {
		t.Error("no summary row of the expected stall")
	}
	for _, r := range Rows(rep.Runs) {
		if r.Metric.Label == "expected defragmentation stall (doctor)" && (r.Values[run.Index] == nil || r.Values[run.Index].V != e.Seconds) {
			t.Errorf("summary row %+v, want %v", r.Values, e.Seconds)
		}
	}

	// A stall that cannot be told says what it would need.
	e.Rate, e.Seconds, e.RateFrom, e.Rehearsal = 0, 0, "", nil
	e.Missing = "The defragmentation rehearsal on " + run.Result.Env.Dir + " failed (no space left on device)."
	sec = sectionHTML(t, pageOf(t, rep.Root), "defrag")
	for _, want := range []string{"would cause is not known", "not known", e.Missing} {
		if !strings.Contains(sec, html.EscapeString(want)) {
			t.Errorf("the section without a rate lacks %q", want)
		}
	}
	// Without one, no section.
	run.Result.ExpectedDefrag = nil
	if strings.Contains(pageOf(t, rep.Root), `id="defrag"`) {
		t.Error("a defrag section without an expected defragmentation")
	}
}
