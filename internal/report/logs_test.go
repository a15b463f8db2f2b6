package report

import (
	"strings"
	"testing"
)

// logs-real.json is the Result of `etcdperf logs` over the real lines in
// internal/etcdlog/testdata/real: the page shows its timeline and classes.
func TestLogsSection(t *testing.T) {
	in := load(t, "logs-real.json")
	res := Combine(in)
	out := pageOf(t, res)
	for _, want := range []string{"etcd logs: its warnings over time", "<svg", "events per", "slow_apply", "heartbeat_late", "late heartbeats (logs)", "were not etcd log lines"} {
		if !strings.Contains(out, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	// Two runs: one timeline each, and the summary compares their counts.
	two := pageOf(t, Combine(load(t, "logs-real.json", "logs-real.json")))
	const caption = "most frequent classes per"
	if one := strings.Count(out, caption); one != 1 || strings.Count(two, caption) != 2 {
		t.Errorf("%d timelines for one run, %d for two", one, strings.Count(two, caption))
	}
}
