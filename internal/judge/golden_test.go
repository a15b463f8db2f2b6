package judge

import (
	"encoding/json"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/etcdperf/etcdperf/internal/limits"
	"github.com/etcdperf/etcdperf/internal/result"
	"github.com/etcdperf/etcdperf/internal/testutil"
)

// Every Result kept as a render fixture (real runs of every command) judged
// again from its own data gets the verdict, the checks and the findings
// it was written with: the judgement needs nothing but the Result.
func TestGoldenResultsJudgeTheSameAgain(t *testing.T) {
	files, err := filepath.Glob("../render/testdata/*.json")
	if err != nil {
		t.Fatal(err)
	}
	// A real doctor's, with its capacity sweep.
	files = append(files, "../report/testdata/doctor-defrag.json")
	n := 0
	for _, f := range files {
		r, err := result.ReadFile(f)
		if err != nil {
			continue // not a Result (fio's output, a capture)
		}
		n++
		want := clone(t, r)
		Again(r)
		if testutil.Updating() {
			// The fixtures' measurements stay; their judgement becomes
			// today's.
			if err := result.WriteFile(f, r); err != nil {
				t.Fatal(err)
			}
			continue
		}
		compareJudged(t, f, want, r)
	}
	if n < 15 {
		t.Fatalf("found %d Results in %d fixtures, want every command's", n, len(files))
	}
}

func clone(t *testing.T, r *result.Result) *result.Result {
	t.Helper()
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var c result.Result
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	return &c
}

func compareJudged(t *testing.T, where string, want, got *result.Result) {
	t.Helper()
	if got.Verdict != want.Verdict {
		t.Errorf("%s: verdict %s, was %s", where, got.Verdict, want.Verdict)
	}
	if !reflect.DeepEqual(got.Checks, want.Checks) {
		t.Errorf("%s: checks\n%+v\nwere\n%+v", where, got.Checks, want.Checks)
	}
	if !reflect.DeepEqual(got.Findings, want.Findings) {
		t.Errorf("%s: findings\n%+v\nwere\n%+v", where, got.Findings, want.Findings)
	}
	if !reflect.DeepEqual(got.Capacity, want.Capacity) {
		t.Errorf("%s: capacity\n%+v\nwas\n%+v", where, got.Capacity, want.Capacity)
	}
	if !reflect.DeepEqual(got.Soak, want.Soak) {
		t.Errorf("%s: soak\n%+v\nwas\n%+v", where, got.Soak, want.Soak)
	}
	if got.Summary != want.Summary {
		t.Errorf("%s: summary\n%s\nwas\n%s", where, got.Summary, want.Summary)
	}
	for i := range min(len(got.Runs), len(want.Runs)) {
		compareJudged(t, where+": run "+got.Runs[i].Name, &want.Runs[i], &got.Runs[i])
	}
}

// A doctor's Result read back from JSON is judged again from its sweep's
// steps: a step changed in the file changes the capacity's answer and
// its row, as a sweep that measured it would have.
func TestDoctorJudgesItsSweepAgain(t *testing.T) {
	r, err := result.ReadFile("../report/testdata/doctor-defrag.json")
	if err != nil {
		t.Fatal(err)
	}
	loc := &r.Runs[0]
	c := loc.Capacity
	if c == nil || c.PutsPerS != 4000 {
		t.Fatalf("the fixture's sweep: %+v, want 4,000 puts/s", c)
	}
	// The knee's middle step (5,700 puts/s) held after all.
	var mid *result.CapacityStep
	for i := range c.Steps {
		if c.Steps[i].Offered == 5700 {
			mid = &c.Steps[i]
		}
	}
	if mid == nil {
		t.Fatal("the fixture's sweep has no step at 5,700 puts/s")
	}
	mid.Broke, mid.Cause = nil, ""
	Again(r)
	if c.PutsPerS != 5700 || !strings.Contains(c.Answer, "up to 5,700 puts/s") || !strings.Contains(c.Answer, "at 8,000 the request p99 broke") {
		t.Errorf("judged again: %.0f puts/s, %q; want 5,700 and the 8,000 step's limits", c.PutsPerS, c.Answer)
	}
	if row := loc.Doctor.Targets[0]; row.Capacity != 5700 {
		t.Errorf("the location's row says %.0f puts/s, want 5,700", row.Capacity)
	}
}

// A hold read back from JSON is judged again from its intervals, as the
// sweep judged it (hold): slower intervals in the file undo the answer
// the hold confirmed.
func TestDoctorJudgesItsHoldsAgain(t *testing.T) {
	r, err := result.ReadFile("../report/testdata/doctor-defrag.json")
	if err != nil {
		t.Fatal(err)
	}
	c := r.Runs[0].Capacity
	hold := result.CapacityStep{Offered: 4000, Achieved: 4000, Seconds: 10, Confirm: true, WALFsyncP99: 0.002, WALFsyncs: 1100}
	for i := range 2 {
		hold.Intervals = append(hold.Intervals, result.SoakSample{T: float64(5 * (i + 1)), Seconds: 5, Achieved: 4000,
			WALFsyncP99: 0.002, BackendCommitP99: 0.008, RequestP99: 0.02, WALFsyncs: 1100})
	}
	c.Steps, c.ConfirmSeconds = append(c.Steps, hold), 10
	Again(r)
	if c.PutsPerS != 4000 || !strings.Contains(c.Answer, "up to 4,000 puts/s of 1.0 KiB within its limits, held for 10s") {
		t.Fatalf("a hold at 4,000 within its limits: %.0f puts/s, %q", c.PutsPerS, c.Answer)
	}
	back := readBack(t, r)
	c = back.Runs[0].Capacity
	last := &c.Steps[len(c.Steps)-1]
	for i := range last.Intervals {
		last.Intervals[i].BackendCommitP99 = 0.03
	}
	Again(back)
	if c.PutsPerS != 2000 || !slices.Contains(last.Broke, limits.BackendCommitP99) || !strings.Contains(c.Answer, "at 4,000, held for 10s, the backend commit p99 broke (30ms)") {
		t.Errorf("judged again: %.0f puts/s, hold broke %v, %q; want 2,000 and the hold at 4,000 broken by its commits", c.PutsPerS, last.Broke, c.Answer)
	}
}

// A check's soak read back from JSON is judged again from its series: a
// last part slowed in the file breaks the WAL fsync limit.
func TestCheckJudgesItsSoakAgain(t *testing.T) {
	s := &result.Soak{Rate: 500, RateFrom: "--soak-rate", IntervalSeconds: 5}
	for i := range 6 {
		s.Series = append(s.Series, result.SoakSample{T: float64(5 * (i + 1)), Seconds: 5, Achieved: 500, WALFsyncP99: 0.002, BackendCommitP99: 0.004, WALFsyncs: 500})
	}
	r := result.New(result.KindCheck)
	r.Soak = s
	Judge(r, limits.Table)
	if len(s.Broke) != 0 || s.SustainedPutsPerS != 500 {
		t.Fatalf("a steady soak: broke %v, sustained %.0f", s.Broke, s.SustainedPutsPerS)
	}
	back := readBack(t, r)
	for i := 4; i < 6; i++ {
		back.Soak.Series[i].WALFsyncP99 = 0.03
	}
	Again(back)
	if !slices.Contains(back.Soak.Broke, limits.WALFsyncP99) || !strings.Contains(back.Soak.Answer, "broke the WAL fsync p99") {
		t.Errorf("judged again: broke %v, %q; want the WAL fsync p99 broken", back.Soak.Broke, back.Soak.Answer)
	}
}

// readBack is r written as JSON and read back, as a saved Result is.
func readBack(t *testing.T, r *result.Result) *result.Result {
	t.Helper()
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var back result.Result
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	return &back
}
