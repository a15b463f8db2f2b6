package diagnose

import (
	"fmt"
	"strings"
	"testing"

	"github.com/etcdperf/etcdperf/internal/result"
)

// logsResult builds a logs Result with the given class counts; durations
// are given as a p99/max for the classes that report one.
func logsResult(classes map[string]int64, took map[string]float64, prefixes []result.LogKeyPrefix, changes15m int) *result.Result {
	r := result.New("logs")
	l := &result.Logs{Lines: 1000, Classes: classes, TopPrefixes: prefixes,
		Members: []result.LogMember{{Name: "etcd-0", MaxLeaderChanges15m: changes15m}}}
	for id, n := range classes {
		st := result.LogClassStats{Class: id, Title: id, Count: n, Members: map[string]int64{"etcd-0": n}}
		if v, ok := took[id]; ok {
			st.Took = &result.Latency{Count: n, P99: v, Max: v}
		}
		l.Stats = append(l.Stats, st)
	}
	r.Logs = l
	return r
}

// withMembers gives a logs Result n members (the files of n members).
func withMembers(r *result.Result, n int) *result.Result {
	for i := len(r.Logs.Members); i < n; i++ {
		r.Logs.Members = append(r.Logs.Members, result.LogMember{Name: fmt.Sprintf("etcd-%d", i)})
	}
	return r
}

func TestLogsRules(t *testing.T) {
	type sev = map[string]result.Severity
	pods := []result.LogKeyPrefix{{Prefix: "/registry/pods/", Count: 40, Took: 30, Max: 2, MaxCount: 5000}}
	cases := []struct {
		name    string
		r       *result.Result
		want    sev
		verdict result.Verdict
		title   string // a word the first finding's title must hold
	}{
		{"quiet", logsResult(map[string]int64{"compaction": 12, "leader_elected": 1}, nil, nil, 1), sev{}, result.Pass, ""},
		{"slow disk", logsResult(map[string]int64{"slow_fdatasync": 3, "heartbeat_late": 20, "server_overloaded": 20, "slow_apply": 50},
			map[string]float64{"slow_fdatasync": 2.5}, nil, 0), sev{"logs_disk": result.Critical}, result.Fail, "disk"},
		{"raft loop blocked, no fdatasync warning", logsResult(map[string]int64{"heartbeat_late": 8, "slow_apply": 4}, nil, nil, 0),
			sev{"logs_raft_loop_blocked": result.Warning}, result.Warn, "CPU"},
		{"network", logsResult(map[string]int64{"peer_unhealthy": 30, "message_dropped": 200}, nil, nil, 0),
			sev{"logs_network": result.Warning}, result.Warn, "network"},
		{"large ranges", logsResult(map[string]int64{"slow_read_only_range": 40}, map[string]float64{"slow_read_only_range": 2}, pods, 0),
			sev{"logs_slow_requests": result.Warning}, result.Warn, "/registry/pods/"},
		{"slow requests, small", logsResult(map[string]int64{"slow_apply": 40}, map[string]float64{"slow_apply": 0.3}, nil, 0),
			sev{"logs_slow_requests": result.Warning}, result.Warn, "CPU, a disk slower than 10ms but faster than 1s per fdatasync (etcd logs only slower ones), large requests, or a member's slow link"},
		{"one slow request: a single stall", logsResult(map[string]int64{"slow_apply": 1}, map[string]float64{"slow_apply": 0.15}, nil, 0),
			sev{"logs_slow_requests": result.Info}, result.Pass, "single stall"},
		{"one stall of a 3-member cluster's leader: a late heartbeat to each follower", withMembers(logsResult(map[string]int64{"heartbeat_late": 2}, nil, nil, 0), 3),
			sev{"logs_raft_loop_blocked": result.Info}, result.Pass, "single stall"},
		{"the same leader stalled twice", withMembers(logsResult(map[string]int64{"heartbeat_late": 4}, nil, nil, 0), 3),
			sev{"logs_raft_loop_blocked": result.Warning}, result.Warn, "4 times"},
		{"leader churn", logsResult(map[string]int64{"leader_lost": 2, "leader_elected": 3}, nil, nil, 2),
			sev{"logs_leader_churn": result.Warning}, result.Warn, "leader"},
		{"frequent elections", logsResult(map[string]int64{"leader_changed": 6, "election_started": 6}, nil, nil, 5),
			sev{"logs_leader_churn": result.Critical}, result.Fail, "15 minutes"},
		{"timeouts", logsResult(map[string]int64{"request_timeout": 2}, nil, nil, 0),
			sev{"logs_request_timeouts": result.Critical}, result.Fail, "timed out"},
		{"quota", logsResult(map[string]int64{"db_space_exceeded": 1}, nil, nil, 0),
			sev{"logs_db_space_exceeded": result.Critical}, result.Fail, "quota"},
		{"clock", logsResult(map[string]int64{"clock_drift": 5}, map[string]float64{"clock_drift": 11}, nil, 0),
			sev{"logs_clock_drift": result.Warning}, result.Warn, "clocks"},
		{"failed maintenance", logsResult(map[string]int64{"compaction_failed": 1}, nil, nil, 0),
			sev{"logs_maintenance_failed": result.Warning}, result.Warn, "failed"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fs := Run(c.r)
			got := ids(fs)
			if len(got) != len(c.want) {
				t.Errorf("findings %v, want %v", got, c.want)
			}
			for id, s := range c.want {
				if got[id] != s {
					t.Errorf("finding %s: %q, want %q (all: %v)", id, got[id], s, got)
				}
			}
			for _, f := range fs {
				if f.Title == "" || f.Recommendation == "" || len(f.Evidence) == 0 {
					t.Errorf("finding %s lacks a title, evidence or recommendation", f.ID)
				}
			}
			if c.title != "" && !strings.Contains(fs[0].Title, c.title) {
				t.Errorf("title %q does not say %q", fs[0].Title, c.title)
			}
			if v := Verdict(nil, fs); v != c.verdict {
				t.Errorf("verdict %s, want %s", v, c.verdict)
			}
		})
	}
}

func TestLogsUnparsedIsInfo(t *testing.T) {
	r := logsResult(map[string]int64{}, nil, nil, 0)
	r.Logs.Unparsed = 10
	fs := Run(r)
	if got := ids(fs); len(got) != 1 || got["logs_unparsed"] != result.Info || Verdict(nil, fs) != result.Pass {
		t.Errorf("findings %v", got)
	}
}
