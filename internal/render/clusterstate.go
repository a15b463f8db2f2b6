package render

import (
	"fmt"
	"io"
	"strings"

	"github.com/etcdperf/etcdperf/internal/result"
	"github.com/etcdperf/etcdperf/internal/units"
)

// ClusterStateText writes the cluster's own state: one line per member as
// it answered its last status round, the gaps over the rounds, the reads,
// the hashes and the alarms.
func ClusterStateText(w io.Writer, st *result.ClusterState) {
	if st == nil {
		return
	}
	fmt.Fprintf(w, "\ncluster %s as its members tell it (%d status rounds %s apart):\n", orDash(st.ClusterID), st.Rounds, units.Seconds(st.Interval))
	width := len("member")
	for _, m := range st.Members {
		width = max(width, len(stateName(m)))
	}
	fmt.Fprintf(w, "  %-*s  %-16s  %-16s  %-8s  %-7s  %-16s  %5s  %10s  %10s  %9s  %9s  %9s  %17s  %8s\n", width, "member", "id", "cluster", "version", "storage", "leader seen",
		"term", "raft idx", "applied", "revision", "db", "in use", "reads ser/lin min", "requests")
	for _, m := range st.Members {
		if !m.Answered() {
			why := m.Unreachable
			if why == "" {
				why = "not asked"
			}
			fmt.Fprintf(w, "  %-*s  did not answer: %s (%d requests)\n", width, stateName(m), why, m.Requests)
			continue
		}
		leader := orDash(m.Leader)
		if m.Leader != "" && m.Leader == m.ID {
			leader = "itself"
		}
		fmt.Fprintf(w, "  %-*s  %-16s  %-16s  %-8s  %-7s  %-16s  %5d  %10d  %10d  %9d  %9s  %9s  %17s  %8d\n", width, stateName(m), m.ID, m.ClusterID, m.Version, orDash(m.StorageVersion), leader,
			m.Term, m.RaftIndex, m.AppliedIndex, m.Revision, units.Bytes(float64(m.DBSize)), units.Bytes(float64(m.DBSizeInUse)), readsCell(m), m.Requests)
	}
	for _, m := range st.Members {
		if len(m.Errors) > 0 {
			fmt.Fprintf(w, "  %s reports: %s\n", stateName(m), strings.Join(m.Errors, "; "))
		}
		for _, rt := range []*result.ReadTimes{m.Serializable, m.Linearizable} {
			if rt != nil && rt.Error != "" {
				fmt.Fprintf(w, "  %s: %d of %d reads failed: %s\n", stateName(m), rt.Errors, rt.Count, rt.Error)
			}
		}
	}
	switch {
	case st.HashRevision > 0:
		var parts []string
		for _, m := range st.Members {
			switch {
			case m.Hashed:
				parts = append(parts, fmt.Sprintf("%s %d", stateName(m), m.Hash))
			case m.HashError != "":
				parts = append(parts, fmt.Sprintf("%s: %s", stateName(m), m.HashError))
			}
		}
		fmt.Fprintf(w, "  key-value hashes at revision %d (%s): %s\n", st.HashRevision, compactedText(st.CompactRevision), strings.Join(parts, ", "))
	}
	switch {
	case st.AlarmsError != "":
		fmt.Fprintf(w, "  alarms: could not be read (%s)\n", st.AlarmsError)
	case len(st.Alarms) == 0:
		fmt.Fprintf(w, "  alarms: none\n")
	default:
		for _, a := range st.Alarms {
			fmt.Fprintf(w, "  alarm %s on %s\n", a.Alarm, orDash(a.Member+" "+a.MemberID))
		}
	}
	for _, n := range st.Notes {
		fmt.Fprintf(w, "  note: %s\n", n)
	}
}

// stateName is a member's name, or the endpoint of one the member list
// does not name.
func stateName(m result.ClusterMember) string {
	if m.Name != "" {
		return m.Name
	}
	return m.Endpoint
}

// compactedText says from which compaction the hashes start.
func compactedText(rev int64) string {
	if rev <= 0 {
		return "nothing compacted yet"
	}
	return fmt.Sprintf("from compaction %d", rev)
}

// readsCell is the fastest serializable and linearizable read times.
func readsCell(m result.ClusterMember) string {
	cell := func(rt *result.ReadTimes) string {
		if rt == nil || rt.Min <= 0 {
			return "-"
		}
		return units.Seconds(rt.Min)
	}
	return cell(m.Serializable) + "/" + cell(m.Linearizable)
}

func orDash(s string) string {
	if strings.TrimSpace(s) == "" {
		return "-"
	}
	return strings.TrimSpace(s)
}
