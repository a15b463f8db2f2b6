package diagnose

import (
	"strings"
	"testing"

	"github.com/etcdperf/etcdperf/internal/result"
)

// stateOf is a 3-member cluster whose members answered rounds of Status
// as given: per member, per round, its leader, term and committed and
// applied index.
func stateOf(rounds [][3]result.StatusRound) *result.ClusterState {
	st := &result.ClusterState{ClusterID: "c1", Rounds: len(rounds), Interval: 1}
	for i, name := range []string{"m1", "m2", "m3"} {
		m := result.ClusterMember{Name: name, ID: name, ClusterID: "c1", Listed: true, Version: "3.6.4"}
		for r, round := range rounds {
			sr := round[i]
			sr.T = float64(r)
			m.StatusRounds = append(m.StatusRounds, sr)
			m.Leader, m.Term, m.RaftIndex, m.AppliedIndex = sr.Leader, sr.Term, sr.RaftIndex, sr.AppliedIndex
		}
		st.Members = append(st.Members, m)
	}
	return st
}

func sr(leader string, term, raft, applied uint64) result.StatusRound {
	return result.StatusRound{Leader: leader, Term: term, RaftIndex: raft, AppliedIndex: applied}
}

func clusterFindings(st *result.ClusterState, r *result.Result) []result.Finding {
	if r == nil {
		r = &result.Result{Kind: result.KindMetrics}
	}
	r.Cluster = st
	return clusterState(r)
}

// The cluster-state rules on states as members report them: each fault
// is named with its member, and a cluster that agrees gets no finding.
func TestClusterStateRules(t *testing.T) {
	agree := stateOf([][3]result.StatusRound{
		{sr("m1", 2, 1000, 1000), sr("m1", 2, 998, 998), sr("m1", 2, 999, 999)},
		{sr("m1", 2, 1500, 1500), sr("m1", 2, 1495, 1494), sr("m1", 2, 1500, 1499)},
		{sr("m1", 2, 2000, 2000), sr("m1", 2, 2000, 2000), sr("m1", 2, 1990, 1990)},
	})
	// m3 trails by 600 to 1,000 entries at 500 entries/s: 1.2s of the
	// cluster's writes or more, and further each round.
	behind := stateOf([][3]result.StatusRound{
		{sr("m1", 2, 1000, 1000), sr("m1", 2, 1000, 1000), sr("m1", 2, 400, 400)},
		{sr("m1", 2, 1500, 1500), sr("m1", 2, 1500, 1500), sr("m1", 2, 800, 800)},
		{sr("m1", 2, 2000, 2000), sr("m1", 2, 2000, 2000), sr("m1", 2, 1000, 1000)},
	})
	// m3 trailed 0.8s of the writes at most (400 entries at 500/s): a
	// follower a heartbeat or two behind.
	near := stateOf([][3]result.StatusRound{
		{sr("m1", 2, 1000, 1000), sr("m1", 2, 1000, 1000), sr("m1", 2, 600, 600)},
		{sr("m1", 2, 1500, 1500), sr("m1", 2, 1500, 1500), sr("m1", 2, 1100, 1100)},
		{sr("m1", 2, 2000, 2000), sr("m1", 2, 2000, 2000), sr("m1", 2, 1600, 1600)},
	})
	// m3 trailed in one round only: it caught up.
	caughtUp := stateOf([][3]result.StatusRound{
		{sr("m1", 2, 1000, 1000), sr("m1", 2, 1000, 1000), sr("m1", 2, 100, 100)},
		{sr("m1", 2, 1500, 1500), sr("m1", 2, 1500, 1500), sr("m1", 2, 1500, 1500)},
		{sr("m1", 2, 2000, 2000), sr("m1", 2, 2000, 2000), sr("m1", 2, 2000, 2000)},
	})
	// An idle cluster: m3 one entry behind, in every round.
	idleBehind := stateOf([][3]result.StatusRound{
		{sr("m1", 2, 50, 50), sr("m1", 2, 50, 50), sr("m1", 2, 49, 49)},
		{sr("m1", 2, 50, 50), sr("m1", 2, 50, 50), sr("m1", 2, 49, 49)},
	})
	// m2 committed 6,000 entries it has not applied, in every round.
	applyGap := stateOf([][3]result.StatusRound{
		{sr("m1", 2, 9000, 9000), sr("m1", 2, 9000, 3000), sr("m1", 2, 9000, 9000)},
		{sr("m1", 2, 9000, 9000), sr("m1", 2, 9000, 2900), sr("m1", 2, 9000, 9000)},
	})
	// m2 on a slow disk under 100 entries/s: it applies 160 to 320
	// entries behind what it committed (1.6s of the writes or more), its
	// gap not growing every round.
	applyLag := stateOf([][3]result.StatusRound{
		{sr("m1", 2, 1000, 1000), sr("m1", 2, 1000, 800), sr("m1", 2, 1000, 1000)},
		{sr("m1", 2, 1100, 1100), sr("m1", 2, 1100, 780), sr("m1", 2, 1100, 1100)},
		{sr("m1", 2, 1200, 1200), sr("m1", 2, 1200, 1040), sr("m1", 2, 1200, 1200)},
	})
	// m2 on a slow disk applies in bursts, a write of 1.5s each: far
	// behind in two rounds, caught up in the third (as etcd 3.6 and
	// later apply what a quorum committed before their own write ends).
	applyBursts := stateOf([][3]result.StatusRound{
		{sr("m1", 2, 1000, 1000), sr("m1", 2, 1000, 561), sr("m1", 2, 1000, 1000)},
		{sr("m1", 2, 1100, 1100), sr("m1", 2, 1100, 792), sr("m1", 2, 1100, 1100)},
		{sr("m1", 2, 1200, 1200), sr("m1", 2, 1200, 1200), sr("m1", 2, 1200, 1200)},
	})
	// A leader slow to answer (1.5s after the round began, the followers
	// at once): the followers' committed index is the leader's of then,
	// not behind.
	lateAnswer := stateOf([][3]result.StatusRound{
		{sr("m1", 2, 1150, 1150), sr("m1", 2, 1000, 1000), sr("m1", 2, 1000, 1000)},
		{sr("m1", 2, 1250, 1250), sr("m1", 2, 1100, 1100), sr("m1", 2, 1100, 1100)},
		{sr("m1", 2, 1350, 1350), sr("m1", 2, 1200, 1200), sr("m1", 2, 1200, 1200)},
	})
	for r := range lateAnswer.Members[0].StatusRounds {
		lateAnswer.Members[0].StatusRounds[r].T += 1.5
	}
	// m2 applies 50 entries behind at 100 entries/s: half a second, a
	// backend commit's batch.
	applyNear := stateOf([][3]result.StatusRound{
		{sr("m1", 2, 1000, 1000), sr("m1", 2, 1000, 950), sr("m1", 2, 1000, 1000)},
		{sr("m1", 2, 1100, 1100), sr("m1", 2, 1100, 1050), sr("m1", 2, 1100, 1100)},
	})
	// m3 sees another leader in another term, in every round.
	split := stateOf([][3]result.StatusRound{
		{sr("m1", 2, 50, 50), sr("m1", 2, 50, 50), sr("m3", 3, 50, 50)},
		{sr("m1", 2, 50, 50), sr("m1", 2, 50, 50), sr("m3", 3, 50, 50)},
	})
	// The same with a member added but not started listed first: it has
	// no client URL and answered no round.
	splitUnstarted := stateOf([][3]result.StatusRound{
		{sr("m1", 2, 50, 50), sr("m1", 2, 50, 50), sr("m3", 3, 50, 50)},
		{sr("m1", 2, 50, 50), sr("m1", 2, 50, 50), sr("m3", 3, 50, 50)},
	})
	splitUnstarted.Members = append([]result.ClusterMember{{Name: "m0", Listed: true, Unreachable: "it advertises no client URL"}}, splitUnstarted.Members...)
	// An election in the middle round only.
	election := stateOf([][3]result.StatusRound{
		{sr("m1", 2, 50, 50), sr("m1", 2, 50, 50), sr("m1", 2, 50, 50)},
		{sr("", 3, 51, 51), sr("m2", 3, 51, 51), sr("m1", 2, 50, 50)},
		{sr("m2", 3, 52, 52), sr("m2", 3, 52, 52), sr("m2", 3, 52, 52)},
	})
	// Reads: the fastest serializable and linearizable read of each
	// member (m1 leads).
	reads := func(ser, lin [3]float64) *result.ClusterState {
		st := stateOf([][3]result.StatusRound{{sr("m1", 2, 50, 50), sr("m1", 2, 50, 50), sr("m1", 2, 50, 50)}})
		for i := range st.Members {
			st.Members[i].Serializable = &result.ReadTimes{Count: 5, Min: ser[i]}
			st.Members[i].Linearizable = &result.ReadTimes{Count: 5, Min: lin[i]}
		}
		return st
	}
	// CPUs busy for every member, as measured on a loaded CI machine:
	// every linearizable read slower, the follower's by 11.6ms, the
	// leader's own by 4.3ms.
	busy := reads([3]float64{0.0026, 0.0041, 0.0042}, [3]float64{0.0069, 0.0157, 0.0135})
	// m3 behind a link 200ms slower per round trip.
	slowLink := reads([3]float64{0.0004, 0.0005, 0.0004}, [3]float64{0.0012, 0.0011, 0.1012})
	// The leader itself slow to confirm it leads: every member waits.
	slowLeader := reads([3]float64{0.0004, 0.0005, 0.0004}, [3]float64{0.0812, 0.0831, 0.0829})
	// m3 on a slow disk: every linearizable read timed out, its
	// serializable ones answered at once.
	readsFailed := reads([3]float64{0.0004, 0.0005, 0.0004}, [3]float64{0.0012, 0.0011, 0})
	readsFailed.Members[2].Linearizable = &result.ReadTimes{Count: 5, Errors: 5, Error: "no answer in time"}
	// Every member's linearizable reads failed (no leader): not one
	// member's wait.
	allFailed := reads([3]float64{0.0004, 0.0005, 0.0004}, [3]float64{0, 0, 0})
	for i := range allFailed.Members {
		allFailed.Members[i].Linearizable = &result.ReadTimes{Count: 5, Errors: 5, Error: "no answer in time"}
	}
	mixed := stateOf([][3]result.StatusRound{{sr("m1", 2, 50, 50), sr("m1", 2, 50, 50), sr("m1", 2, 50, 50)}})
	mixed.Members[2].Version = "3.5.1"
	// A member behind on a run that measured its WAL fsyncs: said beside
	// them.
	withDisk := &result.Result{Kind: result.KindMetrics, Metrics: &result.Metrics{Members: []result.MetricsMember{
		{Name: "m3", Overall: &result.MetricsSignals{WALFsync: &result.Latency{Count: 400, P99: 0.08}}},
	}}}
	for _, c := range []struct {
		name string
		st   *result.ClusterState
		r    *result.Result
		// want: the findings' IDs, severities and what their titles say.
		want []string
	}{
		{"agree", agree, nil, nil},
		{"behind", behind, nil, []string{"cluster_member_behind critical m3 fell further behind the leader: its committed index trailed by 600 to 1,000 entries (1.2s to 2s of the cluster's writes, at 500 entries/s)"}},
		{"a heartbeat behind", near, nil, nil},
		{"behind, beside its disk", behind, withDisk, []string{"cluster_member_behind critical m3 fell further behind the leader: its committed index trailed by 600 to 1,000 entries (1.2s to 2s of the cluster's writes, at 500 entries/s), while its WAL fsync p99 was 80ms"}},
		{"caught up", caughtUp, nil, nil},
		{"idle, one entry behind", idleBehind, nil, []string{"cluster_member_behind warn m3 stayed behind the leader: its committed index trailed by 1 entries"}},
		{"apply gap", applyGap, nil, []string{"cluster_member_apply_behind critical m2 fell further behind in applying what it committed: 6,000 to 6,100 entries committed and not applied"}},
		{"applying behind under load", applyLag, nil, []string{"cluster_member_apply_behind warn m2 stayed behind in applying what it committed: 160 to 320 entries committed and not applied (1.6s to 3.2s of the cluster's writes, at 100 entries/s)"}},
		{"applying half a second behind", applyNear, nil, nil},
		{"applying in bursts", applyBursts, nil, []string{"cluster_member_apply_behind warn m2 was behind in 2 of 3 status rounds, then caught up, in applying what it committed: 0 to 439 entries committed and not applied"}},
		{"a leader slow to answer", lateAnswer, nil, nil},
		{"split", split, nil, []string{"cluster_leader_split critical The members disagree on the leader or the term in all 2 status rounds"}},
		{"split, a member not started", splitUnstarted, nil, []string{"cluster_leader_split critical The members disagree on the leader or the term in all 2 status rounds"}},
		{"election", election, nil, []string{"cluster_leader_split warn The members disagreed on the leader or the term in 1 of 3 status rounds"}},
		{"reads on busy CPUs", busy, nil, nil},
		{"reads behind a slow link", slowLink, nil, []string{"cluster_read_index_slow warn Linearizable reads at m3 took at least 101ms against 400µs serializable"}},
		{"reads at a slow leader", slowLeader, nil, []string{"cluster_read_index_slow warn Linearizable reads at m1 took at least 81.2ms against 400µs serializable"}},
		{"linearizable reads failed at a follower", readsFailed, nil, []string{"cluster_read_index_slow warn Linearizable reads at m3 failed (5 of 5: no answer in time) while serializable ones took 400µs"}},
		{"linearizable reads failed everywhere", allFailed, nil, nil},
		{"mixed versions", mixed, nil, []string{"cluster_versions warn The members run different etcd versions: 3.6.4 on m1, m2; 3.5.1 on m3",
			"cluster_versions critical m3 runs etcd 3.5.1, a release with a known data inconsistency"}},
	} {
		var got []string
		for _, f := range clusterFindings(c.st, c.r) {
			got = append(got, f.ID+" "+string(f.Severity)+" "+f.Title)
		}
		if len(got) != len(c.want) {
			t.Errorf("%s: findings\n  %s\nwant\n  %s", c.name, strings.Join(got, "\n  "), strings.Join(c.want, "\n  "))
			continue
		}
		for i := range got {
			if !strings.HasPrefix(got[i], c.want[i]) {
				t.Errorf("%s: finding %q, want it to start %q", c.name, got[i], c.want[i])
			}
		}
	}
}

// The releases with a known data inconsistency, by etcd's announcements.
func TestKnownBadVersions(t *testing.T) {
	for v, want := range map[string]result.Severity{
		"3.5.0": result.Critical, "3.5.2": result.Critical, "v3.5.1": result.Critical, "3.5.3": result.Warning, "3.5.5": result.Warning,
		"3.5.6": "", "3.4.21": result.Warning, "3.4.22": "", "3.4.23": "", "3.6.0": "", "3.5.0-rc.1": result.Critical, "garbage": "",
	} {
		if got, _ := knownBad(v); got != want {
			t.Errorf("%s: %q, want %q", v, got, want)
		}
	}
}
