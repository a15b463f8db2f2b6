package judge

import (
	"encoding/json"
	"path/filepath"
	"reflect"
	"testing"

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
	if got.Summary != want.Summary {
		t.Errorf("%s: summary\n%s\nwas\n%s", where, got.Summary, want.Summary)
	}
	for i := range min(len(got.Runs), len(want.Runs)) {
		compareJudged(t, where+": run "+got.Runs[i].Name, &want.Runs[i], &got.Runs[i])
	}
}
