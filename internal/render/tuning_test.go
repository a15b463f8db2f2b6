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
	}, Notes: []string{"The findings named m3 (the disk)."}}
	var b bytes.Buffer
	Judgement(&b, r)
	for _, want := range []string{
		"--heartbeat-interval: in force 100ms (--current-flag); set --heartbeat-interval=250",
		"why: round trip 212ms (etcd tuning guide)",
		"--election-timeout: in force unknown (state it with --current-flag election-timeout=VALUE); make sure it is at least 2.5s (--election-timeout=2500)",
		"note: The findings named m3 (the disk).",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, b.String())
		}
	}
}
