package report

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/etcdperf/etcdperf/internal/result"
	"github.com/etcdperf/etcdperf/internal/units"
)

// The cluster section: the members as they tell it (etcd's Status,
// AlarmList, HashKV and a few reads), one table per run.
func init() {
	Register(Section{
		ID: "cluster", Title: "Cluster: do the members agree", Order: 33,
		Has: func(r *result.Result) bool { return r.Cluster != nil },
		Metrics: []Metric{{Label: "members that did not answer (cluster)", Unit: "count", Better: Lower, Get: func(r *result.Result) (Value, bool) {
			n := 0
			for _, m := range r.Cluster.Members {
				if !m.Answered() {
					n++
				}
			}
			return Value{V: float64(n)}, true
		}}},
		Build: clusterBlock,
	})
}

func clusterBlock(runs []Run) Block {
	var b Block
	for _, r := range runs {
		st := r.Result.Cluster
		t := Table{Title: fmt.Sprintf("%s: cluster %s, %d status rounds %s apart", r.Label, st.ClusterID, st.Rounds, units.Seconds(st.Interval)),
			Header: []string{"member", "endpoint", "id", "cluster", "version", "leader seen", "term", "raft index", "applied", "revision", "db", "in use",
				"serializable read", "linearizable read", "hash", "requests"}}
		for _, m := range st.Members {
			if !m.Answered() {
				t.Rows = append(t.Rows, []string{m.Name, m.Endpoint, m.ID, "did not answer: " + m.Unreachable, "", "", "", "", "", "", "", "", "", "", "", strconv.Itoa(m.Requests)})
				continue
			}
			hash := m.HashError
			if m.Hashed {
				hash = strconv.FormatUint(uint64(m.Hash), 10)
			}
			leader := m.Leader
			if leader != "" && leader == m.ID {
				leader = "itself"
			}
			t.Rows = append(t.Rows, []string{m.Name, m.Endpoint, m.ID, m.ClusterID, m.Version, leader, strconv.FormatUint(m.Term, 10),
				strconv.FormatUint(m.RaftIndex, 10), strconv.FormatUint(m.AppliedIndex, 10), strconv.FormatInt(m.Revision, 10),
				units.Bytes(float64(m.DBSize)), units.Bytes(float64(m.DBSizeInUse)), readCell(m.Serializable), readCell(m.Linearizable), hash, strconv.Itoa(m.Requests)})
		}
		b.Tables = append(b.Tables, t)
		if st.HashRevision > 0 {
			b.Notes = append(b.Notes, fmt.Sprintf("%s: the key-value stores hashed at revision %d.", r.Label, st.HashRevision))
		}
		var alarms []string
		for _, a := range st.Alarms {
			alarms = append(alarms, a.Alarm+" on "+strings.TrimSpace(a.Member+" "+a.MemberID))
		}
		switch {
		case st.AlarmsError != "":
			b.Notes = append(b.Notes, fmt.Sprintf("%s: the alarms could not be read (%s).", r.Label, st.AlarmsError))
		case len(alarms) > 0:
			b.Notes = append(b.Notes, fmt.Sprintf("%s: alarms raised: %s.", r.Label, strings.Join(alarms, ", ")))
		default:
			b.Notes = append(b.Notes, r.Label+": no alarm raised.")
		}
		for _, n := range st.Notes {
			b.Notes = append(b.Notes, r.Label+": "+n+".")
		}
	}
	return b
}

// readCell is the fastest and the median of a member's reads.
func readCell(rt *result.ReadTimes) string {
	if rt == nil || rt.Min <= 0 {
		if rt != nil && rt.Error != "" {
			return "failed: " + rt.Error
		}
		return ""
	}
	return fmt.Sprintf("%s (median %s)", units.Seconds(rt.Min), units.Seconds(rt.Median))
}
