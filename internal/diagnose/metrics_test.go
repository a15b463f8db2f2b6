package diagnose

import (
	"fmt"
	"maps"
	"strings"
	"testing"

	"github.com/etcdperf/etcdperf/internal/result"
)

// metricsResult is a watched member whose answers are given by up (one
// per interval), with totals over the run.
func metricsResult(up []bool, overall *result.MetricsSignals) *result.Result {
	r := result.New("metrics")
	m := result.MetricsMember{Name: "etcd-1", MetricsURL: "https://10.0.0.1:2379/metrics", Overall: overall}
	for i, u := range up {
		s := result.MetricsSample{T: float64(i + 1)}
		if u {
			s.MetricsSignals = &result.MetricsSignals{Seconds: 1, HasLeader: 1}
		} else {
			s.Error = "connect: connection refused"
			m.Unreachable++
		}
		m.Series = append(m.Series, s)
	}
	r.Metrics = &result.Metrics{Interval: 1, Intervals: len(up), Members: []result.MetricsMember{m}}
	return r
}

func TestMetricsRules(t *testing.T) {
	ok := &result.MetricsSignals{Seconds: 3, HasLeader: 1, DBSize: 100 << 20, DBSizeInUse: 60 << 20, Quota: 2 << 30}
	with := func(f func(s *result.MetricsSignals)) *result.MetricsSignals {
		s := *ok
		f(&s)
		return &s
	}
	cases := []struct {
		name     string
		r        *result.Result
		want     map[string]result.Severity
		evidence string
	}{
		{"healthy", metricsResult([]bool{true, true, true}, ok), map[string]result.Severity{}, ""},
		{"missed one scrape", metricsResult([]bool{true, false, true}, ok), map[string]result.Severity{"metrics_unreachable": result.Warning},
			"did not answer 1 of 3 scrapes, the first at 2s; it came back (last answer at 3s)"},
		{"gone at the end", metricsResult([]bool{true, false, false}, ok), map[string]result.Severity{"metrics_unreachable": result.Critical},
			"its last answer was at 1s, none since"},
		{"never answered", metricsResult([]bool{false, false}, nil), map[string]result.Severity{"metrics_unreachable": result.Critical},
			"it never answered"},
		{"slow read indexes", metricsResult([]bool{true}, with(func(s *result.MetricsSignals) { s.SlowReadIndexes = 3 })),
			map[string]result.Severity{"metrics_slow_read_indexes": result.Warning}, "etcd-1: 3"},
		{"slow applies and late heartbeats", metricsResult([]bool{true}, with(func(s *result.MetricsSignals) { s.SlowApplies, s.HeartbeatFailures = 2, 1 })),
			map[string]result.Severity{"metrics_slow_applies": result.Warning, "metrics_heartbeat_failures": result.Info}, "etcd-1: 2"},
		{"one slow apply: a single stall", metricsResult([]bool{true}, with(func(s *result.MetricsSignals) { s.SlowApplies = 1 })),
			map[string]result.Severity{"metrics_slow_applies": result.Info}, "etcd-1: 1"},
		{"database near its quota", metricsResult([]bool{true}, with(func(s *result.MetricsSignals) { s.DBSize, s.DBSizeInUse = 1.7*(1<<30), 1<<30 })),
			map[string]result.Severity{"db_near_quota": result.Warning}, "1.7 GiB of its 2.0 GiB quota (85%), 1.0 GiB in use"},
		{"database at its quota", metricsResult([]bool{true}, with(func(s *result.MetricsSignals) { s.DBSize, s.DBSizeInUse = 1.95*(1<<30), 1.9*(1<<30) })),
			map[string]result.Severity{"db_near_quota": result.Critical}, "(98%)"},
		{"fragmented database", metricsResult([]bool{true}, with(func(s *result.MetricsSignals) { s.DBSize, s.DBSizeInUse = 800<<20, 100<<20 })),
			map[string]result.Severity{"db_fragmented": result.Info}, "database size in use of etcd-1"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fs := Run(c.r)
			if got := ids(fs); !maps.Equal(got, c.want) {
				t.Fatalf("findings %v, want %v", got, c.want)
			}
			var all []string
			for _, f := range fs {
				for _, e := range f.Evidence {
					all = append(all, e.What)
				}
			}
			if !strings.Contains(strings.Join(all, "\n"), c.evidence) {
				t.Errorf("evidence %q does not tell %q", all, c.evidence)
			}
		})
	}
}

// A leader stalled once sends one late heartbeat to each follower, and
// etcd counts each: up to that many is one stall; more recur.
func TestHeartbeatFailuresPerStall(t *testing.T) {
	members := func(failures ...float64) []Member {
		var ms []Member
		for i, f := range failures {
			ms = append(ms, Member{Name: fmt.Sprintf("m%d", i+1), HeartbeatFailures: f})
		}
		return ms
	}
	for _, c := range []struct {
		ms   []Member
		want result.Severity
	}{
		{members(2, 0, 0), result.Info},
		{members(1, 0, 0), result.Info},
		{members(3, 0, 0), result.Warning},
		{members(2, 1, 0), result.Warning},
		{members(2), result.Warning},
	} {
		fs := heartbeatFailures(c.ms, "x")
		if len(fs) != 1 || fs[0].Severity != c.want {
			t.Errorf("%+v: %+v, want one finding of severity %s", c.ms, fs, c.want)
		}
	}
	if fs := heartbeatFailures(members(0, 0, 0), "x"); len(fs) != 0 {
		t.Errorf("no failure, findings %+v", fs)
	}
}
