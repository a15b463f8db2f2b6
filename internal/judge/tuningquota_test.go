package judge

import (
	"strings"
	"testing"

	"github.com/etcdperf/etcdperf/internal/result"
)

// The quota lies between room for the database (its file under 80% of it
// now and after the history's span again at its growth) and a
// defragmentation at the quota stalling under 10s; etcd's default is
// taken when it fits, a quota in force within the bounds is kept, and
// when no quota fits both a note says so.
func TestTuneQuota(t *testing.T) {
	const mib, gib = 1 << 20, 1 << 30
	for _, c := range []struct {
		name     string
		f        quotaFigures
		inForce  float64 // 0: unknown
		action   string
		value    float64
		why      string
		noneFits bool
	}{
		{"small database, fast storage: etcd's default", quotaFigures{size: 300 * mib, inUse: 200 * mib, rate: 500 * mib}, 0, result.TuneAtLeast, 2 * gib, "at most 4.9 GiB: a defragmentation copies 500.0 MiB/s there", false},
		{"the default in force and fitting is kept", quotaFigures{size: 300 * mib, rate: 500 * mib}, 2 * gib, result.TuneKeep, 2 * gib, "", false},
		{"near the default quota: raised to hold it", quotaFigures{size: 1.9 * gib, inUse: 1.5 * gib, rate: 1 * gib}, 2 * gib, result.TuneChange, 2.5 * gib, "under 80%", false},
		{"growth over the history counts", quotaFigures{size: 1 * gib, inUse: 1 * gib, growth: 50 * mib / 86400.0, span: 7 * 86400, rate: 1 * gib}, 2 * gib, result.TuneKeep, 2 * gib, "grew 50.0 MiB a day over the last 7 days", false},
		{"fast growth: a larger quota", quotaFigures{size: 1 * gib, inUse: 1 * gib, growth: 400 * mib / 86400.0, span: 7 * 86400, rate: 1 * gib}, 2 * gib, result.TuneChange, 5 * gib, "3.7 GiB in 7 days", false},
		{"a slow storage bounds it: lowered under the stall", quotaFigures{size: 100 * mib, inUse: 80 * mib, rate: 50 * mib}, 2 * gib, result.TuneChange, 500 * mib, "at most 500.0 MiB: a defragmentation copies 50.0 MiB/s there", false},
		{"no quota fits: the room wins, and a note", quotaFigures{size: 1.5 * gib, inUse: 1.2 * gib, rate: 50 * mib}, 2 * gib, result.TuneKeep, 2 * gib, "", true},
		{"no stall known: bounded by 8 GiB, says how to measure", quotaFigures{size: 7 * gib, inUse: 7 * gib, rateMissing: "run doctor there."}, 8 * gib, result.TuneChange, 9 * gib, "not known (run doctor there)", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.f.member = "m1"
			tu := &result.Tuning{}
			if c.inForce > 0 {
				tu.Known = []result.FlagValue{{Name: FlagQuota, Value: c.inForce, From: "--current-flag"}}
			}
			tuneQuota(tu, c.f, 0.8, 10)
			if len(tu.Flags) != 1 {
				t.Fatalf("flags %+v", tu.Flags)
			}
			q := tu.Flags[0]
			if q.Action != c.action || q.Suggested != c.value || !strings.Contains(q.Why, c.why) {
				t.Errorf("got %s %.0f (%.2f GiB), why %q; want %s %.0f, why with %q", q.Action, q.Suggested, q.Suggested/gib, q.Why, c.action, c.value, c.why)
			}
			noted := len(tu.Notes) > 0 && strings.Contains(tu.Notes[0], "No quota satisfies both")
			if noted != c.noneFits {
				t.Errorf("notes %q, want the no-quota note %v", tu.Notes, c.noneFits)
			}
		})
	}
	// The member's gauge is the value in force when none was stated.
	tu := &result.Tuning{}
	tuneQuota(tu, quotaFigures{member: "m1", size: 300 * mib, quota: 4 * gib, quotaFrom: "etcd_server_quota_backend_bytes of m1", rate: 1 * gib}, 0.8, 10)
	if q := tu.Flags[0]; q.Action != result.TuneKeep || q.Current != 4*gib || q.CurrentFrom != "etcd_server_quota_backend_bytes of m1" {
		t.Errorf("with the gauge: %+v", q)
	}
}
