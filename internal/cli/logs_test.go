package cli

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/etcdperf/etcdperf/internal/result"
)

// logs --limit moves a level of its findings, and the Result records it.
func TestLogsLimit(t *testing.T) {
	churnLimit := func(args ...string) (float64, []result.Limit) {
		t.Helper()
		root := NewRoot()
		var out bytes.Buffer
		root.SetOut(&out)
		root.SetErr(&bytes.Buffer{})
		root.SetArgs(append([]string{"logs", "../etcdlog/testdata/real/embed-3.7.3-json.log", "-o", "json"}, args...))
		if err := root.Execute(); err != nil && !strings.Contains(err.Error(), "exit") {
			t.Fatalf("logs %v: %v", args, err)
		}
		var r result.Result
		if err := json.Unmarshal(out.Bytes(), &r); err != nil {
			t.Fatalf("logs %v: %v: %q", args, err, out.String())
		}
		for _, f := range r.Findings {
			for _, e := range f.Evidence {
				if f.ID == "logs_leader_churn" && strings.HasPrefix(e.What, "most leader changes") {
					return e.Limit, r.Limits
				}
			}
		}
		t.Fatalf("logs %v: no logs_leader_churn evidence in %+v", args, r.Findings)
		return 0, nil
	}
	if l, limits := churnLimit(); l != 4 || len(limits) != 0 {
		t.Errorf("by default: leader changes level %g, limits %+v; want 4 (etcd's alert), none recorded", l, limits)
	}
	if l, limits := churnLimit("--limit", "leader_changes_15m=2"); l != 2 || len(limits) != 1 || limits[0].Name != "leader_changes_15m" {
		t.Errorf("with --limit leader_changes_15m=2: level %g, limits %+v", l, limits)
	}
}
