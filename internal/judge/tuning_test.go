package judge

import (
	"strings"
	"testing"

	"github.com/etcdperf/etcdperf/internal/result"
)

// pairs are round trips of mean rtt (seconds) from every member of ms to
// every other, each recorded twice since start; slow overrides a pair.
func pairs(rtt float64, slow map[[2]string]float64, ms ...string) []result.PeerRTT {
	var out []result.PeerRTT
	for _, a := range ms {
		for _, b := range ms {
			if a == b {
				continue
			}
			m := rtt
			if v, ok := slow[[2]string{a, b}]; ok {
				m = v
			}
			out = append(out, result.PeerRTT{From: a, To: b, Scope: result.ScopeStart, Count: 2, Mean: m, Max: 2 * m})
		}
	}
	return out
}

func known(beat, elect float64) []result.FlagValue {
	var out []result.FlagValue
	if beat > 0 {
		out = append(out, result.FlagValue{Name: FlagHeartbeat, Value: beat, From: "--current-flag"})
	}
	if elect > 0 {
		out = append(out, result.FlagValue{Name: FlagElection, Value: elect, From: "--current-flag"})
	}
	return out
}

// The timers follow the slowest pair's mean round trip, per etcd's tuning
// guide: the heartbeat about the round trip (0.5-1.5x) and never under
// 100ms, the election timeout 10x it, never under 1s nor over 50s; a value
// in force within those bounds is kept, an unknown one is said as a floor.
func TestTuneTimers(t *testing.T) {
	to3 := func(rtt float64) map[[2]string]float64 {
		return map[[2]string]float64{{"m1", "m3"}: rtt, {"m3", "m1"}: rtt, {"m2", "m3"}: rtt, {"m3", "m2"}: rtt}
	}
	type want struct {
		action string
		value  float64
	}
	for _, c := range []struct {
		name         string
		pairs        []result.PeerRTT
		beat, elect  float64 // in force (0: unknown)
		hb, el       want
		note         string
		noTimerNotes bool
	}{
		{"a LAN, unknown flags: etcd's defaults as floors", pairs(0.002, nil, "m1", "m2", "m3"), 0, 0,
			want{result.TuneAtLeast, 100}, want{result.TuneAtLeast, 1000}, "", true},
		{"a LAN at the defaults: keep", pairs(0.002, nil, "m1", "m2", "m3"), 100, 1000,
			want{result.TuneKeep, 100}, want{result.TuneKeep, 1000}, "", true},
		// A heartbeat under the default but within the guide's band of
		// the round trip is the operator's choice.
		{"a LAN with a 25ms heartbeat: keep", pairs(0.002, nil, "m1", "m2", "m3"), 25, 250,
			want{result.TuneKeep, 25}, want{result.TuneKeep, 250}, "", true},
		{"a link of 50ms: still the defaults", pairs(0.002, to3(0.05), "m1", "m2", "m3"), 100, 1000,
			want{result.TuneKeep, 100}, want{result.TuneKeep, 1000}, "", true},
		// 100ms is 0.56x a round trip of 180ms, inside the guide's band,
		// but 1s is not 10x it.
		{"a link of 180ms at the defaults: the election timeout", pairs(0.002, to3(0.18), "m1", "m2", "m3"), 100, 1000,
			want{result.TuneKeep, 100}, want{result.TuneChange, 2000}, "", true},
		{"a link of 212ms at the defaults: both", pairs(0.002, to3(0.212), "m1", "m2", "m3"), 100, 1000,
			want{result.TuneChange, 250}, want{result.TuneChange, 2500}, "", true},
		{"a link of 212ms, timers already raised: keep", pairs(0.002, to3(0.212), "m1", "m2", "m3"), 300, 3000,
			want{result.TuneKeep, 300}, want{result.TuneKeep, 3000}, "", true},
		// etcd refuses an election timeout under 5x the heartbeat.
		{"a heartbeat kept, an election timeout under 5x it", pairs(0.002, to3(0.212), "m1", "m2", "m3"), 500, 2400,
			want{result.TuneKeep, 500}, want{result.TuneChange, 5000}, "", true},
		{"a link of 6s: no election timeout fits", pairs(0.002, to3(6), "m1", "m2", "m3"), 0, 0,
			want{result.TuneAtLeast, 6000}, want{result.TuneAtLeast, 50000}, "No election timeout fits", false},
		{"no round trip recorded", nil, 100, 1000, want{}, want{}, "The timers are not computed: no round trip", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			tu := &result.Tuning{Known: known(c.beat, c.elect)}
			tuneTimers(tu, timerFigures{pairs: c.pairs})
			if c.hb.action == "" {
				if len(tu.Flags) != 0 {
					t.Errorf("flags %+v, want none", tu.Flags)
				}
			} else {
				if len(tu.Flags) != 2 {
					t.Fatalf("flags %+v, want the two timers", tu.Flags)
				}
				for i, w := range []want{c.hb, c.el} {
					f := tu.Flags[i]
					if f.Action != w.action || f.Suggested != w.value || f.Why == "" || !strings.Contains(f.Source, "https://etcd.io/docs/") {
						t.Errorf("--%s: %s %g (%s; %s), want %s %g with its figure and source", f.Name, f.Action, f.Suggested, f.Why, f.Source, w.action, w.value)
					}
					if (f.Action == result.TuneAtLeast) != (f.CurrentFrom == "") {
						t.Errorf("--%s: %s, in force %g from %q", f.Name, f.Action, f.Current, f.CurrentFrom)
					}
				}
			}
			notes := strings.Join(tu.Notes, " ")
			if c.note != "" && !strings.Contains(notes, c.note) || c.noTimerNotes && notes != "" {
				t.Errorf("notes %q, want %q", notes, c.note)
			}
		})
	}
}

// A member whose disk the findings named answers its peers late for its
// own reasons: its round trips are left out, and with the heartbeats late
// the note says larger timers would only hide the disk.
func TestTuneTimersSlowDisk(t *testing.T) {
	slow3 := map[[2]string]float64{{"m1", "m3"}: 0.3, {"m3", "m1"}: 0.3, {"m2", "m3"}: 0.3, {"m3", "m2"}: 0.3}
	tu := &result.Tuning{Known: known(100, 1000)}
	tuneTimers(tu, timerFigures{pairs: pairs(0.002, slow3, "m1", "m2", "m3"), late: []string{"4 heartbeats the leader failed to send"},
		blamed: map[string][]result.Cause{"m3": {result.CauseDisk}}})
	if len(tu.Flags) != 2 || tu.Flags[0].Action != result.TuneKeep || tu.Flags[1].Action != result.TuneKeep {
		t.Errorf("flags %+v, want both timers kept", tu.Flags)
	}
	notes := strings.Join(tu.Notes, " ")
	for _, w := range []string{"m3 (the disk)", "4 heartbeats the leader failed to send", "would only slow failover and hide the cause"} {
		if !strings.Contains(notes, w) {
			t.Errorf("notes %q, want %q", notes, w)
		}
	}
	// Without late heartbeats, the disk is named and nothing more said.
	tu = &result.Tuning{}
	tuneTimers(tu, timerFigures{pairs: pairs(0.002, slow3, "m1", "m2", "m3"), blamed: map[string][]result.Cause{"m3": {result.CauseDisk}}})
	if notes := strings.Join(tu.Notes, " "); !strings.Contains(notes, "m3 (the disk)") || strings.Contains(notes, "hide") {
		t.Errorf("notes %q: want m3's disk named, nothing said of hiding it", notes)
	}
	// Every pair through blamed members: nothing to compute from.
	tu = &result.Tuning{}
	tuneTimers(tu, timerFigures{pairs: pairs(0.3, nil, "m1", "m3"), blamed: map[string][]result.Cause{"m3": {result.CauseCPU}}})
	if len(tu.Flags) != 0 || !strings.Contains(strings.Join(tu.Notes, " "), "every round trip recorded involves a member") {
		t.Errorf("flags %+v, notes %q: want none computed, and why", tu.Flags, tu.Notes)
	}
}

// The defragmentation plan: a file of at least 100 MiB with under half of
// it in use is due; the followers first, the leader last after moving its
// leadership to a follower; nothing due says so; no sizes, no plan.
func TestMetricsDefrag(t *testing.T) {
	const mib = 1 << 20
	member := func(name, id string, leader bool, size, inUse float64) result.MetricsMember {
		o := &result.MetricsSignals{Seconds: 10, DBSize: size, DBSizeInUse: inUse}
		if leader {
			o.IsLeader = 1
		}
		return result.MetricsMember{Name: name, ID: id, Overall: o}
	}
	r := result.New(result.KindMetrics)
	r.Target = &result.Target{Members: []result.TargetMember{{Name: "m1", ClientURL: "https://10.0.0.1:2379"},
		{Name: "m2", ClientURL: "https://10.0.0.2:2379"}, {Name: "m3", ClientURL: "https://10.0.0.3:2379"}}}
	r.Metrics = &result.Metrics{Members: []result.MetricsMember{
		member("m1", "a1", true, 800*mib, 100*mib), member("m2", "b2", false, 800*mib, 120*mib), member("m3", "c3", false, 90*mib, 10*mib)},
		Defrags: []result.Defrags{{Member: "m3", Count: 1, Longest: 0.8}}}
	p := metricsDefrag(r)
	if p == nil || !p.Due || len(p.Members) != 2 || p.Members[0].Name != "m2" || p.Members[1].Name != "m1" || !p.Members[1].Leader || p.Took != 0.8 || p.TookOn != "m3" {
		t.Fatalf("plan %+v: want m2 then the leader m1 (m3's file is under 100 MiB), m3's 0.8s seen", p)
	}
	if got := strings.Join(p.Members[0].Commands, "; "); got != "etcdctl --endpoints=https://10.0.0.2:2379 defrag" {
		t.Errorf("m2: %s", got)
	}
	if got := strings.Join(p.Members[1].Commands, "; "); got != "etcdctl --endpoints=https://10.0.0.1:2379 move-leader b2; etcdctl --endpoints=https://10.0.0.1:2379 defrag" {
		t.Errorf("the leader m1: %s", got)
	}
	// Half of a file in use is not due; nor is a small file.
	r.Metrics.Members[0].Overall.DBSizeInUse, r.Metrics.Members[1].Overall.DBSizeInUse = 400*mib, 500*mib
	if p := metricsDefrag(r); p == nil || p.Due || len(p.Members) != 0 || !strings.Contains(p.Rule, "100.0 MiB") {
		t.Errorf("plan %+v: want none due, and the rule said", p)
	}
	for i := range r.Metrics.Members {
		r.Metrics.Members[i].Overall.DBSize = 0
	}
	if p := metricsDefrag(r); p != nil {
		t.Errorf("plan %+v without any size, want none", p)
	}
}

// doctor --node plans from every member's gauges, with the stall its
// member's prediction gives and a placeholder for a follower's ID; prom
// check plans from the history's databases, each stall from that
// member's own defragmentations, and says that it does not know which
// member leads.
func TestNodeAndPromDefrag(t *testing.T) {
	const mib = 1 << 20
	r := result.New(result.KindDoctor)
	r.Target = &result.Target{Members: []result.TargetMember{{Name: "cp-1", ClientURL: "https://10.0.0.1:2379", Leader: true}, {Name: "cp-2", ClientURL: "https://10.0.0.2:2379"}}}
	r.Server = &result.Server{Databases: []result.MemberDatabase{{Name: "cp-1", Size: 900 * mib, InUse: 200 * mib}, {Name: "cp-2", Size: 900 * mib, InUse: 210 * mib}}}
	r.ExpectedDefrag = &result.ExpectedDefrag{Member: "cp-1", Seconds: 4, Rate: 50 * mib, RateFrom: "its own defragmentations"}
	p := nodeDefrag(r)
	if p == nil || len(p.Members) != 2 || p.Members[0].Name != "cp-2" || p.Members[0].Stall != 0 || p.Members[1].Name != "cp-1" || p.Members[1].Stall != 4 ||
		strings.Join(p.Members[1].Commands, "; ") != "etcdctl --endpoints=https://10.0.0.1:2379 move-leader <a follower's ID: etcdctl member list>; etcdctl --endpoints=https://10.0.0.1:2379 defrag" {
		t.Errorf("node plan %+v", p)
	}
	pr := result.New(result.KindPromCheck)
	pr.Prom = &result.Prom{Databases: []result.PromDatabase{{Instance: "10.0.0.1:2379", Size: 900 * mib, InUse: 200 * mib}, {Instance: "10.0.0.2:2379", Size: 90 * mib, InUse: 20 * mib}},
		Defrags: []result.Defrags{{Member: "10.0.0.1:2379", Count: 2, Seconds: 8}}}
	p = promDefrag(pr)
	if p == nil || len(p.Members) != 1 || p.Members[0].Stall != 4 || !strings.Contains(p.Rule, "which member leads is not known here") ||
		strings.Join(p.Members[0].Commands, "; ") != "etcdctl --endpoints=<10.0.0.1:2379's client URL> defrag" {
		t.Errorf("prom plan %+v", p)
	}
}

// etcd's logs carry the timers in force and the late heartbeats, no round
// trip: late heartbeats beside fdatasyncs over 1s on the same member keep
// the timers and name the disk; without them, or without late heartbeats,
// nothing is computed and the note says what would.
func TestLogsTuning(t *testing.T) {
	logs := func(late, slow map[string]int64, ms ...result.LogMember) *result.Result {
		r := result.New(result.KindLogs)
		r.Logs = &result.Logs{Members: ms}
		for id, per := range map[string]map[string]int64{"heartbeat_late": late, "slow_fdatasync": slow} {
			var n int64
			for _, c := range per {
				n += c
			}
			if n > 0 {
				r.Logs.Stats = append(r.Logs.Stats, result.LogClassStats{Class: id, Count: n, Members: per})
			}
		}
		return r
	}
	m := func(name string, beat, elect float64) result.LogMember {
		return result.LogMember{Name: name, HeartbeatInterval: beat, ElectionTimeout: elect, TimersAtStart: elect > 0}
	}
	// The leader's disk: keep both timers, the disk named.
	r := logs(map[string]int64{"m1": 4}, map[string]int64{"m1": 2}, m("m1", 0.1, 1), m("m2", 0.1, 1))
	logsTuning(r)
	tu := r.Tuning
	if len(tu.Flags) != 2 || tu.Flags[0].Action != result.TuneKeep || tu.Flags[0].Current != 100 || tu.Flags[1].Current != 1000 ||
		!strings.Contains(tu.Flags[0].Why, "m1 logged 4 late heartbeats and 2 fdatasyncs over 1s") || !strings.Contains(tu.Flags[0].Why, "hide the disk") ||
		tu.Flags[0].CurrentFrom != "etcd's log of m1, m2" {
		t.Errorf("the leader's disk: %+v", tu)
	}
	// Late heartbeats on one member, slow fdatasyncs on another: not lined up.
	r = logs(map[string]int64{"m1": 4}, map[string]int64{"m2": 2}, m("m1", 0.1, 1))
	logsTuning(r)
	if len(r.Tuning.Flags) != 0 || !strings.Contains(strings.Join(r.Tuning.Notes, " "), "4 late heartbeats") || len(r.Tuning.Known) != 2 {
		t.Errorf("not lined up: %+v", r.Tuning)
	}
	// No late heartbeat: metrics is what computes the timers.
	r = logs(nil, nil, m("m1", 0.1, 1))
	logsTuning(r)
	if len(r.Tuning.Flags) != 0 || !strings.Contains(strings.Join(r.Tuning.Notes, " "), "etcdperf metrics --endpoints") {
		t.Errorf("no late heartbeat: %+v", r.Tuning)
	}
	// Members that disagree: said, and no value taken as in force.
	r = logs(nil, nil, m("m1", 0.1, 1), m("m2", 0.3, 1))
	logsTuning(r)
	if len(r.Tuning.Known) != 1 || r.Tuning.Known[0].Name != FlagElection || !strings.Contains(strings.Join(r.Tuning.Notes, " "), "different heartbeat intervals: m1 100ms, m2 300ms") {
		t.Errorf("members that disagree: %+v", r.Tuning)
	}
}

// doctor --node's member: the timers in force are the node's; its late
// heartbeats beside slow fdatasyncs in its log keep them, else its peers'
// round trips compute them.
func TestNodeTuning(t *testing.T) {
	node := func() *result.Result {
		r := result.New(result.KindDoctor)
		r.Tuning = &result.Tuning{Known: known(100, 1000)}
		r.Server = &result.Server{PeerRTTs: pairs(0.002, map[[2]string]float64{{"m1", "m3"}: 0.3, {"m3", "m1"}: 0.3}, "m1", "m2", "m3")}
		return r
	}
	r := node()
	nodeTuning(r)
	if len(r.Tuning.Flags) != 2 || r.Tuning.Flags[0].Action != result.TuneChange || r.Tuning.Flags[0].Suggested != 300 || r.Tuning.Flags[1].Suggested != 3000 {
		t.Errorf("round trips of 300ms: %+v", r.Tuning.Flags)
	}
	r = node()
	r.Logs = &result.Logs{Stats: []result.LogClassStats{{Class: "heartbeat_late", Count: 3, Members: map[string]int64{"m1": 3}},
		{Class: "slow_fdatasync", Count: 1, Members: map[string]int64{"m1": 1}}}}
	nodeTuning(r)
	if len(r.Tuning.Flags) != 2 || r.Tuning.Flags[0].Action != result.TuneKeep || !strings.Contains(r.Tuning.Flags[0].Why, "hide the disk") {
		t.Errorf("late heartbeats beside slow fdatasyncs: %+v", r.Tuning.Flags)
	}
	r = result.New(result.KindDoctor)
	nodeTuning(r)
	if r.Tuning != nil {
		t.Errorf("a doctor run that is not a node's: tuning %+v", r.Tuning)
	}
}
