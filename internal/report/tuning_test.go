package report

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/etcdperf/etcdperf/internal/result"
)

// The flags the figures call for are a table under the run's checks:
// the flag, the value in force, what to do and why; then the notes, and
// the changes as the node's layout takes them.
func TestTuningTable(t *testing.T) {
	in, err := Load([]string{filepath.Join("..", "render", "testdata", "metrics-3members-killed.json")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	in[0].Result.Tuning = &result.Tuning{Flags: []result.TunedFlag{
		{Name: "heartbeat-interval", Unit: "ms", Current: 100, CurrentFrom: "--current-flag", Suggested: 250, Action: result.TuneChange, Why: "round trip 212ms", Source: "etcd tuning guide"},
	}, Notes: []string{"The findings named m3 (the disk)."}, Layout: &result.FlagLayout{Member: "m1", Source: "k3s", File: "/var/lib/rancher/k3s/server/db/etcd/config"}}
	out := pageOf(t, New(Combine(in)).Root)
	for _, want := range []string{"flags for this cluster, from what was measured", "<td><code>--heartbeat-interval</code></td><td>100ms (--current-flag)</td><td>set --heartbeat-interval=250</td><td>round trip 212ms</td>",
		`<p class="note">The findings named m3 (the disk).</p>`, "etcd-arg:\n- heartbeat-interval=250\n</pre>"} {
		if !strings.Contains(out, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
}
