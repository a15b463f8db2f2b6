package cli

import (
	"errors"
	"testing"

	"github.com/etcdperf/etcdperf/internal/result"
)

// --current-flag takes etcd's timers in milliseconds or as a duration;
// anything else is a usage error.
func TestCurrentFlags(t *testing.T) {
	got, err := (&currentFlags{raw: []string{"heartbeat-interval=100", "--election-timeout=2.5s", "quota-backend-bytes=8GiB", "auto-compaction-retention=5m"}}).values()
	want := []result.FlagValue{{Name: "heartbeat-interval", Value: 100, From: "--current-flag"}, {Name: "election-timeout", Value: 2500, From: "--current-flag"},
		{Name: "quota-backend-bytes", Value: 8 << 30, From: "--current-flag"}, {Name: "auto-compaction-retention", Text: "5m", From: "--current-flag"}}
	if err != nil || len(got) != len(want) || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] || got[3] != want[3] {
		t.Fatalf("values %+v, %v; want %+v", got, err, want)
	}
	for _, bad := range [][]string{
		{"heartbeat-interval"}, {"=100"}, {"heartbeat-interval="}, {"heartbeat=100"}, {"quota-backend-bytes=lots"}, {"auto-compaction-mode=hourly"}, {"auto-compaction-retention=soon"}, {"snapshot-count=many"}, {"max-txn-ops=1"},
		{"heartbeat-interval=0"}, {"heartbeat-interval=-5"}, {"heartbeat-interval=1.5ms"}, {"heartbeat-interval=fast"},
		{"heartbeat-interval=100", "heartbeat-interval=200"},
	} {
		_, err := (&currentFlags{raw: bad}).values()
		var u *exitError
		if !errors.As(err, &u) || u.code != ExitError {
			t.Errorf("%q: error %v, want a usage error", bad, err)
		}
	}
}
