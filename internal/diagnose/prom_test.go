package diagnose

import (
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/etcdperf/etcdperf/internal/limits"
	"github.com/etcdperf/etcdperf/internal/result"
)

func historyResult(fsyncOverall float64, breaches []result.PromBreach, slowApplies float64) *result.Result {
	r := result.New("prom-check")
	r.Prom = &result.Prom{Step: 15, Window: 300, Breaches: breaches, Members: []result.PromMember{
		{Instance: "10.0.0.1:2379", Observed: map[string]float64{"wal_fsync_p99": fsyncOverall, "slow_applies": slowApplies}},
	}}
	c, _ := limits.Lookup(limits.Table, limits.WALFsyncP99)
	r.Checks = []result.Check{limits.Evaluate(c, fsyncOverall)}
	return r
}

func windows(n int) []result.PromWindow {
	var ws []result.PromWindow
	t0 := time.Date(2024, 5, 1, 10, 0, 0, 0, time.UTC)
	for i := 0; i < n; i++ {
		ws = append(ws, result.PromWindow{From: t0.Add(time.Duration(i) * time.Hour), To: t0.Add(time.Duration(i)*time.Hour + 2*time.Minute), Points: 9, Worst: 0.04, Status: result.StatusFail})
	}
	return ws
}

func TestHistoryRules(t *testing.T) {
	fsync := func(ws []result.PromWindow) []result.PromBreach {
		return []result.PromBreach{{Check: limits.WALFsyncP99, Instance: "10.0.0.1:2379", Status: result.StatusFail, Points: 9 * len(ws), Failed: 9 * len(ws), Total: 5760,
			Fraction: float64(9*len(ws)) / 5760, Worst: 0.04, Limit: 0.01, Unit: "s", Windows: ws}}
	}
	cases := []struct {
		name    string
		r       *result.Result
		want    map[string]result.Severity
		verdict result.Verdict
	}{
		{"healthy", historyResult(0.002, nil, 0), map[string]result.Severity{}, result.Pass},
		// p99 of the whole day is fine, a few windows were not: told, as
		// moments, not a verdict.
		{"transient", historyResult(0.003, fsync(windows(2)), 0), map[string]result.Severity{"history_wal_fsync_p99": result.Info}, result.Pass},
		// A history says nothing of the member's process: its disk or its
		// CPU, and how to tell.
		{"slow all day", historyResult(0.02, fsync(windows(7)), 0),
			map[string]result.Severity{"history_wal_fsync_p99": result.Critical, FindingMemberDiskOrCPU: result.Critical}, result.Fail},
		// Only the warning level, and only at times: told, no warning.
		{"nearly at times", historyResult(0.003, func() []result.PromBreach {
			b := fsync(windows(2))
			b[0].Status, b[0].Failed, b[0].Worst = result.StatusWarn, 0, 0.009
			return b
		}(), 0), map[string]result.Severity{"history_wal_fsync_p99": result.Info}, result.Pass},
		{"slow applies", historyResult(0.002, nil, 12), map[string]result.Severity{"history_slow_applies": result.Warning}, result.Warn},
		{"no leader", historyResult(0.002, []result.PromBreach{{Check: "has_leader", Instance: "10.0.0.1:2379", Status: result.StatusFail, Points: 2, Failed: 2, Total: 100, Worst: 0, Limit: 1, Unit: "count", Windows: windows(1)}}, 0),
			map[string]result.Severity{"history_has_leader": result.Critical}, result.Fail},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fs := Run(c.r)
			if got := ids(fs); !maps.Equal(got, c.want) {
				t.Errorf("findings %v, want %v", got, c.want)
			}
			if v := Verdict(c.r.Checks, fs); v != c.verdict {
				t.Errorf("verdict %s, want %s", v, c.verdict)
			}
		})
	}
}

func TestHistoryFindingListsWindows(t *testing.T) {
	ws := windows(7)
	r := historyResult(0.02, []result.PromBreach{{Check: limits.WALFsyncP99, Instance: "10.0.0.1:2379", Status: result.StatusFail, Points: 63, Failed: 63, Total: 5760,
		Fraction: 63.0 / 5760, Worst: 0.04, Limit: 0.01, Unit: "s", Windows: ws}}, 0)
	var f result.Finding
	for _, x := range Run(r) {
		if x.ID == "history_wal_fsync_p99" {
			f = x
		}
	}
	// A summary line, five windows, and how many more.
	if len(f.Evidence) != 7 {
		t.Fatalf("evidence %+v", f.Evidence)
	}
	if !strings.Contains(f.Evidence[0].What, "63 of 5760 evaluation points (1.1% of the time) over the limit, in 7 window(s)") || f.Evidence[0].Observed != 0.04 {
		t.Errorf("summary %+v", f.Evidence[0])
	}
	if w := f.Evidence[1].What; w != "10.0.0.1:2379: 2024-05-01T10:00:00Z to 10:02:00Z (2m15s, 9 points), worst 40ms (fail); each point covers the 5m0s before it" {
		t.Errorf("window %q", w)
	}
	if !strings.Contains(f.Evidence[6].What, "2 more window(s)") || !strings.Contains(f.Title, "10.0.0.1:2379") || f.Recommendation == "" {
		t.Errorf("finding %+v", f)
	}
}
