package diagnose

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/etcdperf/etcdperf/internal/limits"
	"github.com/etcdperf/etcdperf/internal/result"
	"github.com/etcdperf/etcdperf/internal/units"
)

// clusterFinding is one entry of the table of what the cluster's own state
// (r.Cluster) can show: its finding's ID, what to do and the source.
type clusterFinding struct {
	id, remedy, source string
}

// The cluster-state findings, one entry each.
var (
	foreignEndpoint = clusterFinding{"cluster_foreign_endpoint",
		"This endpoint is a member of another cluster: requests sent to it read and write another cluster's data. Remove it from the endpoints " +
			"(--endpoints, ETCDCTL_ENDPOINTS, the API server's --etcd-servers), or check that the member was not started with a fresh data dir " +
			"and --initial-cluster-state new (it then forms a cluster of its own).",
		"etcd's Status (header.cluster_id) from each endpoint"}
	memberDown = clusterFinding{"cluster_member_unreachable",
		"A member that does not answer is down, cut off from here, or too busy to serve: check its process, its log (etcdperf logs) and " +
			"`etcdctl endpoint health`. A 3-member cluster without one member has no fault tolerance left.",
		"etcd's Status from each member"}
	leaderSplit = clusterFinding{"cluster_leader_split",
		"Members that disagree on the leader or the term are in an election, or cut off from each other (a member that sees no leader cannot serve " +
			"linearizable requests). Check the peer network between them (etcdperf metrics: peer round trips) and each member's log for " +
			"\"lost leader\" and \"elected leader\".",
		"etcd's Status (leader, raft_term) from each member"}
	memberBehind = clusterFinding{"cluster_member_behind",
		"A follower whose committed index stays behind the leader's does not receive or persist the log as fast as the cluster writes it: " +
			"its disk (WAL fsync), its CPU or its link to the leader; a member far enough behind is sent a snapshot instead. " +
			"Its WAL fsync and the peer round trips to it say which.",
		"etcd's Status (raft_index) from each member"}
	applyBehind = clusterFinding{"cluster_member_apply_behind",
		"The member applies committed entries slower than they arrive (its backend's commits: disk or CPU; its log says \"apply request took too long\"); " +
			"more than 5,000 behind, etcd rejects new proposals with \"etcdserver: too many requests\".",
		"etcd's Status (raft_index, raft_applied_index)"}
	versions = clusterFinding{"cluster_versions",
		"Run every member on the same, recommended release: etcd's minimum recommended versions for production are 3.4.22+ and 3.5.6+ " +
			"(etcd's CHANGELOG; Kubernetes' \"Operating etcd clusters\"). Mixed versions belong only to a rolling upgrade, one minor version apart.",
		"etcd's Status (version) from each member; etcd's announcements of data inconsistencies (etcd-io/etcd#13766, v3.5 data inconsistency postmortem; " +
			"https://groups.google.com/g/etcd-dev/c/8S7u6NqW6C4)"}
	alarmRaised = clusterFinding{"cluster_alarm",
		"NOSPACE: the database reached its quota (--quota-backend-bytes); the cluster serves only reads and deletes until you compact, defragment " +
			"and `etcdctl alarm disarm` (etcd maintenance guide, https://etcd.io/docs/v3.5/op-guide/maintenance/#space-quota). " +
			"CORRUPT: a member's data differs from the others'; follow etcd's data corruption guide (https://etcd.io/docs/v3.5/op-guide/data_corruption/).",
		"etcd's AlarmList"}
	hashDiffers = clusterFinding{"cluster_hash_differs",
		"The member's key-value store differs from the others' at the same revision: it has diverged (etcd-io/etcd#12535, #13766). Do not let clients " +
			"read from it; follow etcd's data corruption guide (https://etcd.io/docs/v3.5/op-guide/data_corruption/): remove the member, " +
			"wipe its data dir and add it back so that it receives the leader's snapshot. Keep a copy of its data dir for the bug report.",
		"etcd's HashKV of every member at one revision"}
	readIndexSlow = clusterFinding{"cluster_read_index_slow",
		"A linearizable read waits for the leader to confirm it leads (ReadIndex: a heartbeat round to a quorum), then for the member to apply " +
			"up to the leader's index; a serializable one is served from the member's own store at once. Slow only for the linearizable reads, " +
			"the time went to the leader's ReadIndex, the network to it, or the member's own apply catching up: the peer round trips and the " +
			"member's WAL fsync (etcdperf metrics) tell which.",
		"reads of one key (\"health\") from each member, serializable and linearizable"}
)

func init() {
	Register(Rule{ID: "cluster_state", Apply: clusterState})
}

// find makes the finding of f.
func (f clusterFinding) find(sev result.Severity, title string, ev []result.Evidence) result.Finding {
	for i := range ev {
		if ev[i].Source == "" {
			ev[i].Source = f.source
		}
	}
	return result.Finding{ID: f.id, Severity: sev, Title: title, Evidence: ev, Recommendation: f.remedy}
}

// clusterState judges the cluster's own state.
func clusterState(r *result.Result) []result.Finding {
	st := r.Cluster
	if st == nil {
		return nil
	}
	lv := clusterLevels(r)
	var out []result.Finding
	for _, rule := range []func(*result.ClusterState, clusterLv, []Member) []result.Finding{
		foreignEndpoints, unreachableMembers, leaderSplits, membersBehind, serverVersions, alarms, hashes, slowReadIndexes,
	} {
		out = append(out, rule(st, lv, Members(r))...)
	}
	return out
}

// clusterLv are the levels the cluster-state rules judge by.
type clusterLv struct {
	behind, applyGap, readIndex float64
}

func clusterLevels(r *result.Result) clusterLv {
	return clusterLv{behind: LimitOf(r, limits.MemberBehind), applyGap: LimitOf(r, limits.MemberApplyGap), readIndex: LimitOf(r, limits.ReadIndexWait)}
}

// label names a member of the state: its name and endpoint.
func label(m result.ClusterMember) string {
	switch {
	case m.Name != "" && m.Endpoint != "":
		return fmt.Sprintf("%s (%s)", m.Name, m.Endpoint)
	case m.Name != "":
		return m.Name
	}
	return m.Endpoint
}

func foreignEndpoints(st *result.ClusterState, _ clusterLv, _ []Member) []result.Finding {
	var out []result.Finding
	for _, m := range st.Members {
		if m.ClusterID == "" || m.ClusterID == st.ClusterID {
			continue
		}
		var listed []string
		for _, o := range st.Members {
			if o.Listed && o.ClusterID == st.ClusterID {
				listed = append(listed, o.Name)
			}
		}
		out = append(out, foreignEndpoint.find(result.Critical,
			fmt.Sprintf("%s is not a member of this cluster: it answers for cluster %s, the others for cluster %s", m.Endpoint, m.ClusterID, st.ClusterID),
			[]result.Evidence{{What: fmt.Sprintf("%s answered as member %s of cluster %s (etcd %s, revision %d); cluster %s lists %s",
				m.Endpoint, m.ID, m.ClusterID, m.Version, m.Revision, st.ClusterID, strings.Join(listed, ", "))}}))
	}
	return out
}

func unreachableMembers(st *result.ClusterState, _ clusterLv, _ []Member) []result.Finding {
	var names []string
	var ev []result.Evidence
	for _, m := range st.Members {
		if m.Unreachable == "" || m.Endpoint == "" {
			continue
		}
		names = append(names, label(m))
		ev = append(ev, result.Evidence{What: fmt.Sprintf("%s answered none of %d status requests: %s", label(m), len(m.StatusRounds), m.Unreachable)})
	}
	if len(names) == 0 {
		return nil
	}
	return []result.Finding{memberDown.find(result.Critical, fmt.Sprintf("%s did not answer etcd's status requests", strings.Join(names, ", ")), ev)}
}

// leaderSplits: in a round where two or more members of the cluster
// answered, they saw different leaders or terms, or one saw none. Every
// such round: critical (not an election passing); some: a warning.
func leaderSplits(st *result.ClusterState, _ clusterLv, _ []Member) []result.Finding {
	split, asked := 0, 0
	var ev []result.Evidence
	for round := 0; round < st.Rounds; round++ {
		var seen []string
		at := 0.0
		leaders, terms := map[string]bool{}, map[uint64]bool{}
		for _, m := range st.Members {
			if !m.Listed || m.ClusterID != st.ClusterID || m.Learner || round >= len(m.StatusRounds) || m.StatusRounds[round].Error != "" {
				continue
			}
			sr := m.StatusRounds[round]
			leader := sr.Leader
			if leader == "" {
				leader = "none"
			}
			leaders[leader], terms[sr.Term], at = true, true, sr.T
			seen = append(seen, fmt.Sprintf("%s: leader %s, term %d", m.Name, leader, sr.Term))
		}
		if len(seen) < 2 {
			continue
		}
		asked++
		if len(leaders) > 1 || len(terms) > 1 || leaders["none"] {
			split++
			ev = append(ev, result.Evidence{What: fmt.Sprintf("round %d (at %s): %s", round+1, units.Seconds(at), strings.Join(seen, "; "))})
		}
	}
	if split == 0 {
		return nil
	}
	sev, title := result.Warning, fmt.Sprintf("The members disagreed on the leader or the term in %d of %d status rounds (an election, or members cut off from each other)", split, asked)
	if split == asked {
		sev, title = result.Critical, fmt.Sprintf("The members disagree on the leader or the term in all %d status rounds", asked)
	}
	return []result.Finding{leaderSplit.find(sev, title, ev)}
}

// membersBehind: a follower whose committed index trailed the leader's
// (the leader's at the time the follower answered, at the leader's rate)
// by member_behind of the cluster's writes or more (the leader's commits
// per second over the rounds; at least one entry, so that an idle
// cluster's member still behind counts), or whose applied index trailed
// its own committed index as far, in two or more rounds: a gap that
// grew every round is critical, one that stayed a warning, one that
// closed in the last round is said to have closed (a member that applies
// in bursts, each after a slow write); an applied index member_apply_gap
// behind is critical (etcd rejects proposals). Said beside its WAL fsync
// and backend commit where they were measured.
func membersBehind(st *result.ClusterState, lv clusterLv, views []Member) []result.Finding {
	// The leader's answer in each round (nil: no member answered as
	// leader), and its commits per second from its first answer to its
	// last.
	leaders := make([]*result.StatusRound, st.Rounds)
	for _, m := range st.Members {
		if !m.Listed || m.ClusterID != st.ClusterID {
			continue
		}
		for round := range min(st.Rounds, len(m.StatusRounds)) {
			if sr := &m.StatusRounds[round]; sr.Error == "" && sr.Leader == m.ID && leaders[round] == nil {
				leaders[round] = sr
			}
		}
	}
	leaderAt := func(round int) *result.StatusRound {
		if round < len(leaders) {
			return leaders[round]
		}
		return nil
	}
	var first, last *result.StatusRound
	for _, l := range leaders {
		if l != nil {
			first, last = cmp.Or(first, l), l
		}
	}
	rate := 0.0
	if first != nil && last.T > first.T {
		rate = (float64(last.RaftIndex) - float64(first.RaftIndex)) / (last.T - first.T)
	}
	floor := max(1, rate*lv.behind)
	trail := func(gaps []float64) string {
		if rate <= 0 {
			return ""
		}
		lo, hi := units.Seconds(slices.Min(gaps)/rate), units.Seconds(slices.Max(gaps)/rate)
		if lo != hi {
			lo += " to " + hi
		}
		return fmt.Sprintf(" (%s of the cluster's writes, at %s entries/s)", lo, units.Thousands(rate))
	}
	var out []result.Finding
	for _, m := range st.Members {
		if !m.Listed || m.ClusterID != st.ClusterID {
			continue
		}
		var gaps, applyGaps []float64
		for round, sr := range m.StatusRounds {
			if sr.Error != "" {
				continue
			}
			applyGaps = append(applyGaps, float64(sr.RaftIndex)-float64(sr.AppliedIndex))
			if l := leaderAt(round); l != nil && sr.Leader != m.ID {
				gaps = append(gaps, max(0, float64(l.RaftIndex)+rate*(sr.T-l.T)-float64(sr.RaftIndex)))
			}
		}
		side := memberSide(m.Name, views)
		if sev, how, n := behindIn(gaps, floor); n > 0 {
			out = append(out, memberBehind.find(sev,
				fmt.Sprintf("%s %s the leader: its committed index trailed by %s entries%s%s", m.Name, how, rangeOf(gaps), trail(gaps), side),
				[]result.Evidence{{What: fmt.Sprintf("entries between the leader's committed index (at the time %s answered) and %s's, most in %d of %d status rounds %s apart; the leader committed %s entries/s",
					m.Name, m.Name, n, len(gaps), units.Seconds(st.Interval), units.Thousands(rate)), Observed: slices.Max(gaps), Limit: floor, Unit: "count"}}))
		}
		if sev, how, n := behindIn(applyGaps, floor); n > 0 {
			if slices.Max(applyGaps) >= lv.applyGap {
				sev = result.Critical
			}
			out = append(out, applyBehind.find(sev,
				fmt.Sprintf("%s %s in applying what it committed: %s entries committed and not applied%s%s", m.Name, how, rangeOf(applyGaps), trail(applyGaps), side),
				[]result.Evidence{{What: fmt.Sprintf("entries between %s's committed and applied index, most in %d of %d status rounds %s apart; the leader committed %s entries/s; at %s etcd rejects proposals",
					m.Name, n, len(applyGaps), units.Seconds(st.Interval), units.Thousands(rate), units.Thousands(lv.applyGap)), Observed: slices.Max(applyGaps), Limit: floor, Unit: "count"}}))
		}
	}
	return out
}

// behindIn reads a member's gaps, one per round: behind by floor or more
// in two or more rounds (n, 0 when not), critical when the gap grew every
// round, how it moved in words.
func behindIn(gaps []float64, floor float64) (sev result.Severity, how string, n int) {
	for _, g := range gaps {
		if g >= floor {
			n++
		}
	}
	if n < 2 {
		return "", "", 0
	}
	last := gaps[len(gaps)-1]
	switch {
	case n == len(gaps) && slices.IsSorted(gaps) && last > gaps[0]:
		return result.Critical, "fell further behind", n
	case last < floor:
		return result.Warning, fmt.Sprintf("was behind in %d of %d status rounds, then caught up,", n, len(gaps)), n
	}
	return result.Warning, "stayed behind", n
}

// memberSide says what the member's own latencies were where the run
// measured them (", while its WAL fsync p99 was 80ms"), so that a member
// behind reads as one story with its disk.
func memberSide(name string, views []Member) string {
	for _, v := range views {
		if v.Name != name || v.WALFsync == nil || v.WALFsync.Count == 0 {
			continue
		}
		s := fmt.Sprintf(", while its WAL fsync p99 was %s", units.P99(v.WALFsync.P99, v.WALFsync.AtFloor()))
		if v.BackendCommit != nil && v.BackendCommit.Count > 0 {
			s += fmt.Sprintf(" and its backend commit p99 %s", units.P99(v.BackendCommit.P99, v.BackendCommit.AtFloor()))
		}
		return s
	}
	return ""
}

// rangeOf says a few counts as "1,200" or "1,200 to 3,400".
func rangeOf(xs []float64) string {
	lo, hi := slices.Min(xs), slices.Max(xs)
	if lo == hi {
		return units.Thousands(lo)
	}
	return units.Thousands(lo) + " to " + units.Thousands(hi)
}

// knownBad names the releases with a known data inconsistency, by etcd's
// announcements: critical where etcd says not to run them in production.
func knownBad(v string) (result.Severity, string) {
	parts := strings.SplitN(strings.TrimPrefix(v, "v"), ".", 3)
	if len(parts) < 3 {
		return "", ""
	}
	major, err1 := strconv.Atoi(parts[0])
	minor, err2 := strconv.Atoi(parts[1])
	patch, err3 := strconv.Atoi(strings.FieldsFunc(parts[2], func(r rune) bool { return r == '-' || r == '+' })[0])
	if err1 != nil || err2 != nil || err3 != nil || major != 3 {
		return "", ""
	}
	switch {
	case minor == 5 && patch <= 2:
		return result.Critical, "etcd 3.5.0-3.5.2 can lose writes on a member killed under load and then serve data that differs from the other members' (etcd-io/etcd#13766); etcd says not to run them in production"
	case minor == 5 && patch <= 5:
		return result.Warning, "etcd 3.5.0-3.5.5 can diverge when it crashes during a defragmentation, and 3.5.5 when auth is on and a member is added; etcd's minimum for production is 3.5.6"
	case minor == 4 && (patch == 20 || patch == 21):
		return result.Warning, "etcd 3.4.20-3.4.21 can diverge when auth is on and a member is added; etcd's minimum for production is 3.4.22"
	}
	return "", ""
}

func serverVersions(st *result.ClusterState, _ clusterLv, _ []Member) []result.Finding {
	byVersion := map[string][]string{}
	var order []string
	for _, m := range st.Members {
		if !m.Listed || m.ClusterID != st.ClusterID || m.Version == "" {
			continue
		}
		if _, ok := byVersion[m.Version]; !ok {
			order = append(order, m.Version)
		}
		byVersion[m.Version] = append(byVersion[m.Version], m.Name)
	}
	var out []result.Finding
	if len(order) > 1 {
		var parts []string
		for _, v := range order {
			parts = append(parts, fmt.Sprintf("%s on %s", v, strings.Join(byVersion[v], ", ")))
		}
		out = append(out, versions.find(result.Warning, "The members run different etcd versions: "+strings.Join(parts, "; "),
			[]result.Evidence{{What: "server version of each member: " + strings.Join(parts, "; ")}}))
	}
	for _, v := range order {
		if sev, why := knownBad(v); sev != "" {
			out = append(out, versions.find(sev, fmt.Sprintf("%s run%s etcd %s, a release with a known data inconsistency", strings.Join(byVersion[v], ", "), verbS(len(byVersion[v])), v),
				[]result.Evidence{{What: why}}))
		}
	}
	return out
}

// verbS is the verb's "s" for a subject of n names.
func verbS(n int) string {
	if n == 1 {
		return "s"
	}
	return ""
}

func alarms(st *result.ClusterState, _ clusterLv, _ []Member) []result.Finding {
	var out []result.Finding
	for _, a := range st.Alarms {
		who := a.Member
		if who == "" {
			who = "member " + a.MemberID
		}
		what := "its database reached its quota: the cluster accepts only reads and deletes"
		if a.Alarm == "CORRUPT" {
			what = "its data was found to differ from the other members'"
		}
		out = append(out, alarmRaised.find(result.Critical, fmt.Sprintf("Alarm %s raised on %s: %s", a.Alarm, who, what),
			[]result.Evidence{{What: fmt.Sprintf("etcdctl alarm list: memberID:%s alarm:%s", a.MemberID, a.Alarm)}}))
	}
	return out
}

// hashes names the members whose HashKV differs from the majority's at
// the shared revision; with no majority, every member is named.
func hashes(st *result.ClusterState, _ clusterLv, _ []Member) []result.Finding {
	var hs []uint32
	for _, m := range st.Members {
		if m.Hashed {
			hs = append(hs, m.Hash)
		}
	}
	majority, agreed, differ := majorityHash(hs)
	if !differ {
		return nil
	}
	var ev []result.Evidence
	var odd []string
	for _, m := range st.Members {
		if !m.Hashed {
			continue
		}
		ev = append(ev, result.Evidence{What: fmt.Sprintf("HashKV of %s at revision %d (from compaction %d): %d", m.Name, st.HashRevision, st.CompactRevision, m.Hash)})
		if m.Hash != majority || !agreed {
			odd = append(odd, m.Name)
		}
	}
	title := fmt.Sprintf("The key-value store of %s differs from the other members' at revision %d", strings.Join(odd, ", "), st.HashRevision)
	if !agreed {
		title = fmt.Sprintf("The members' key-value stores differ at revision %d and no majority agrees: %s", st.HashRevision, strings.Join(odd, ", "))
	}
	return []result.Finding{hashDiffers.find(result.Critical, title, ev)}
}

// slowReadIndexes: a member that waited read_index_wait or more for its
// linearizable reads, measured on the fastest read of each kind (a wait
// every read pays, not a busy moment's): its linearizable read beyond its
// serializable one; for a follower, less the leader's own such wait, which
// CPUs busy for every member inflate alike. A member whose linearizable
// reads all failed while its serializable ones (and the leader's
// linearizable ones) were answered waited past the command's timeout. On
// the leader, the time went to its heartbeat round to a quorum; on a
// follower, between it and the leader: the network to it, or its own
// raft loop applying up to the leader's index (a follower on a slow disk
// applies in bursts, after each of its writes), which its WAL fsync and
// the peer round trips tell apart (or, with the leader's own reads not
// measured, the leader too).
func slowReadIndexes(st *result.ClusterState, lv clusterLv, views []Member) []result.Finding {
	wait := func(m result.ClusterMember) (float64, bool) {
		if m.Serializable == nil || m.Linearizable == nil || m.Serializable.Min <= 0 || m.Linearizable.Min <= 0 {
			return 0, false
		}
		return max(0, m.Linearizable.Min-m.Serializable.Min), true
	}
	// failed: every linearizable read at m failed, its serializable ones
	// answered.
	failed := func(m result.ClusterMember) bool {
		return m.Serializable != nil && m.Serializable.Min > 0 && m.Linearizable != nil && m.Linearizable.Count > 0 && m.Linearizable.Errors == m.Linearizable.Count
	}
	var leader *result.ClusterMember
	for i, m := range st.Members {
		if m.Listed && m.ID != "" && m.Leader == m.ID {
			leader = &st.Members[i]
		}
	}
	lw, lok := 0.0, false
	if leader != nil {
		lw, lok = wait(*leader)
	}
	var out []result.Finding
	for _, m := range st.Members {
		w, ok := wait(m)
		if !m.Listed || !ok && !failed(m) {
			continue
		}
		var where string
		beyond := w
		own := fmt.Sprintf("or %s's own raft loop applying up to the leader's index (its disk or its CPU: a follower on a slow disk applies after each of its writes); "+
			"its WAL fsync and the peer round trips to it tell which", m.Name)
		switch {
		case leader != nil && leader.ID == m.ID:
			where = "it is the leader: the time went to its heartbeat round to a quorum of followers (the network to them, or its own CPU)"
		case lok:
			beyond = w - lw
			where = fmt.Sprintf("the leader %s waited %s itself: the time went between %s and the leader: the network to it, %s", leader.Name, units.Seconds(lw), m.Name, own)
		default:
			where = "the leader's own reads were not measured: the time went to the leader, the network to it, " + own
		}
		where += memberSide(m.Name, views)
		if !ok {
			if leader == nil || leader.ID == m.ID || !lok {
				continue // the leader's own reads failed too: the cluster's, said elsewhere
			}
			out = append(out, readIndexSlow.find(result.Warning,
				fmt.Sprintf("Linearizable reads at %s failed (%d of %d: %s) while serializable ones took %s", m.Name,
					m.Linearizable.Errors, m.Linearizable.Count, m.Linearizable.Error, units.Seconds(m.Serializable.Min)),
				[]result.Evidence{{What: fmt.Sprintf("%d linearizable reads at %s, none answered, against the fastest of %d serializable ones; %s",
					m.Linearizable.Count, m.Name, m.Serializable.Count, where), Observed: float64(m.Linearizable.Errors), Limit: 0, Unit: "count"}}))
			continue
		}
		if beyond < lv.readIndex {
			continue
		}
		out = append(out, readIndexSlow.find(result.Warning,
			fmt.Sprintf("Linearizable reads at %s took at least %s against %s serializable", m.Name,
				units.Seconds(m.Linearizable.Min), units.Seconds(m.Serializable.Min)),
			[]result.Evidence{{What: fmt.Sprintf("fastest of %d linearizable reads at %s, beyond the fastest of %d serializable ones, less the leader's own wait; %s",
				m.Linearizable.Count, m.Name, m.Serializable.Count, where),
				Observed: beyond, Limit: lv.readIndex, Unit: "s"}}))
	}
	return out
}

// majorityHash is the hash most of hs hold (the lowest among equals),
// whether more than half hold it (agreed), and whether hs differ at all.
func majorityHash(hs []uint32) (majority uint32, agreed, differ bool) {
	count := map[uint32]int{}
	for _, h := range hs {
		count[h]++
	}
	best := 0
	for h, n := range count {
		if n > best || n == best && h < majority {
			majority, best = h, n
		}
	}
	return majority, 2*best > len(hs), len(count) > 1
}
