package render

import (
	"bytes"
	"strings"
	"testing"

	"github.com/etcdperf/etcdperf/internal/result"
)

// The tuning section says per flag the value in force and where it was
// learned, what to do, and why; an unknown value says how to state it.
func TestTuningText(t *testing.T) {
	r := result.New(result.KindMetrics)
	r.Tuning = &result.Tuning{Flags: []result.TunedFlag{
		{Name: "heartbeat-interval", Unit: "ms", Current: 100, CurrentFrom: "--current-flag", Suggested: 250, Action: result.TuneChange, Why: "round trip 212ms", Source: "etcd tuning guide"},
		{Name: "election-timeout", Unit: "ms", Suggested: 2500, Action: result.TuneAtLeast, Why: "10x", Source: "etcd tuning guide"},
	}, Notes: []string{"The findings named m3 (the disk)."},
		Defrag: &result.DefragPlan{Due: true, Rule: "at least 100.0 MiB with under 50% of it in use", Members: []result.DefragMember{
			{Name: "m2", Size: 800 << 20, InUse: 120 << 20, Stall: 1.5, StallFrom: "its own 2 defragmentations", Commands: []string{"etcdctl --endpoints=https://10.0.0.2:2379 defrag"}},
			{Name: "m1", Leader: true, Size: 800 << 20, InUse: 100 << 20, Commands: []string{"etcdctl --endpoints=https://10.0.0.1:2379 move-leader b2", "etcdctl --endpoints=https://10.0.0.1:2379 defrag"}}}}}
	var b bytes.Buffer
	Judgement(&b, r)
	for _, want := range []string{
		"--heartbeat-interval: in force 100ms (--current-flag); set --heartbeat-interval=250",
		"why: round trip 212ms (etcd tuning guide)",
		"--election-timeout: in force unknown (state it with --current-flag election-timeout=VALUE); make sure it is at least 2.5s (--election-timeout=2500)",
		"note: The findings named m3 (the disk).",
		"defragmentation: due (a member's database file at least 100.0 MiB with under 50% of it in use): one member at a time after a compaction, followers first",
		"etcdperf doctor --data-dir on a member's storage predicts how long it stalls",
		"1. m2 (follower, file 800.0 MiB, 120.0 MiB in use, a stall of about 1.5s (its own 2 defragmentations)): etcdctl --endpoints=https://10.0.0.2:2379 defrag",
		"2. m1 (leader, file 800.0 MiB, 100.0 MiB in use, its stall not known): etcdctl --endpoints=https://10.0.0.1:2379 move-leader b2 && etcdctl --endpoints=https://10.0.0.1:2379 defrag",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, b.String())
		}
	}
}
