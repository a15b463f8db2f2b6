package render

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/etcdperf/etcdperf/internal/result"
	"github.com/etcdperf/etcdperf/internal/units"
)

func init() {
	RegisterText("metrics", metricsText)
	RegisterCSV("metrics", MetricsCSV)
}

// metricsText is the whole text view: the head, one line per member and
// interval, and the members over the run.
func metricsText(w io.Writer, r *result.Result) error {
	m := r.Metrics
	if m == nil {
		return nil
	}
	MetricsHead(w, r)
	for i := 0; i < m.Intervals; i++ {
		metricsRows(w, m, i)
	}
	MetricsTail(w, r)
	return nil
}

// metricsColumns are the columns of a line: a label and its width.
var metricsColumns = []struct {
	label string
	width int
}{
	{"role", 9}, {"fsyncs", 6}, {"wal p99", 8}, {"commit p99", 10}, {"pending", 7}, {"failed", 6}, {"leader chg", 10},
	{"db", 9}, {"in use", 9}, {"rss", 9}, {"peer p99", 8}, {"slow apply", 10}, {"slow read", 9}, {"hb fail", 7},
}

// MetricsHead writes what the run watches and the column headings. A
// watcher prints it once the members are known, then MetricsRows as each
// interval ends.
func MetricsHead(w io.Writer, r *result.Result) {
	m := r.Metrics
	fmt.Fprintf(w, "etcdperf metrics: %s\n", metricsTarget(r))
	span := "until interrupted"
	if m.Duration > 0 {
		span = "for " + units.Seconds(m.Duration)
	}
	fmt.Fprintf(w, "  every %s %s; latencies and counters are what happened in each interval, the rest its end\n", units.Seconds(m.Interval), span)
	fmt.Fprintf(w, "%8s  %-*s", "t", nameWidth(m), "member")
	for _, c := range metricsColumns {
		fmt.Fprintf(w, "  %*s", c.width, c.label)
	}
	fmt.Fprintln(w)
}

func metricsTarget(r *result.Result) string {
	m := r.Metrics
	s := fmt.Sprintf("%d member", len(m.Members))
	if len(m.Members) != 1 {
		s += "s"
	}
	if r.Target != nil {
		if r.Target.Version != "" {
			s += " of etcd " + r.Target.Version
		}
		s += " at " + strings.Join(r.Target.Endpoints, ",")
		if r.Target.EndpointsFrom != "" {
			s += " (from " + r.Target.EndpointsFrom + ")"
		}
	}
	return s
}

func nameWidth(m *result.Metrics) int {
	n := len("member")
	for _, mm := range m.Members {
		n = max(n, len(mm.Name))
	}
	return n
}

// MetricsRows writes the lines of the last interval of every member.
func MetricsRows(w io.Writer, r *result.Result) {
	if m := r.Metrics; m != nil && m.Intervals > 0 {
		metricsRows(w, m, m.Intervals-1)
	}
}

func metricsRows(w io.Writer, m *result.Metrics, i int) {
	for _, mm := range m.Members {
		if i >= len(mm.Series) {
			continue
		}
		s := mm.Series[i]
		fmt.Fprintf(w, "%7ss  %-*s", strconv.FormatFloat(s.T, 'f', 1, 64), nameWidth(m), mm.Name)
		if !s.Up() {
			fmt.Fprintf(w, "  NO ANSWER: %s\n", s.Error)
			continue
		}
		for j, v := range signalCells(s.MetricsSignals) {
			fmt.Fprintf(w, "  %*s", metricsColumns[j].width, v)
		}
		fmt.Fprintln(w)
	}
}

// signalCells formats a member's signals in the order of metricsColumns.
func signalCells(s *result.MetricsSignals) []string {
	deltas := s.Seconds > 0
	count := func(v float64) string {
		if !deltas {
			return "-"
		}
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	fsyncs := "-"
	if s.WALFsync != nil && deltas {
		fsyncs = strconv.FormatInt(s.WALFsync.Count, 10)
	}
	return []string{
		roleOf(s), fsyncs, p99Of(s.WALFsync), p99Of(s.BackendCommit),
		strconv.FormatFloat(s.ProposalsPending, 'f', -1, 64), count(s.ProposalsFailed), count(s.LeaderChanges),
		units.Bytes(s.DBSize), units.Bytes(s.DBSizeInUse), units.Bytes(s.RSS), p99Of(s.PeerRTT),
		count(s.SlowApplies), count(s.SlowReadIndexes), count(s.HeartbeatFailures),
	}
}

func roleOf(s *result.MetricsSignals) string {
	switch {
	case s.HasLeader == 0:
		return "NO LEADER"
	case s.IsLeader == 1:
		return "leader"
	}
	return "follower"
}

// p99Of prints an interval's p99: "-" when nothing was observed, "<= 1ms"
// when it fell in etcd's lowest bucket.
func p99Of(l *result.Latency) string {
	if l == nil || l.Count == 0 {
		return "-"
	}
	return LatencyValue(*l, l.P99)
}

// MetricsTail writes each member over the whole run and the notes; the
// judgement follows (Text adds it).
func MetricsTail(w io.Writer, r *result.Result) {
	m := r.Metrics
	if m == nil {
		return
	}
	fmt.Fprintf(w, "\nover %s (%d intervals):\n", units.Seconds(m.Seconds), m.Intervals)
	fmt.Fprintf(w, "  %-*s  %9s", nameWidth(m), "member", "answered")
	for _, c := range metricsColumns {
		fmt.Fprintf(w, "  %*s", c.width, c.label)
	}
	fmt.Fprintln(w)
	for _, mm := range m.Members {
		answered := fmt.Sprintf("%d/%d", len(mm.Series)-mm.Unreachable, len(mm.Series))
		fmt.Fprintf(w, "  %-*s  %9s", nameWidth(m), mm.Name, answered)
		if mm.Overall == nil {
			fmt.Fprintf(w, "  never answered (%s)\n", mm.MetricsURL)
			continue
		}
		for j, v := range signalCells(mm.Overall) {
			fmt.Fprintf(w, "  %*s", metricsColumns[j].width, v)
		}
		fmt.Fprintln(w)
	}
	var procs []result.MemberProcess
	for _, mm := range m.Members {
		if mm.Process != nil {
			procs = append(procs, *mm.Process)
		}
	}
	processesText(w, procs)
	peerRTTsText(w, m.PeerRTTs)
	if len(m.Breaches) > 0 {
		fmt.Fprintf(w, "  limits passed (each point judges the interval before it):\n")
		for _, b := range m.Breaches {
			fmt.Fprintf(w, "    %s on %s: %d of %d intervals (%.0f%%), worst %s\n",
				b.Check, b.Instance, b.Points, b.Total, b.Fraction*100, formatValue(b.Worst, b.Unit))
		}
	}
	upkeepText(w, m.Compactions, m.Defrags)
	for _, n := range m.Notes {
		fmt.Fprintf(w, "  note: %s\n", n)
	}
	ClusterStateText(w, r.Cluster)
}

// MetricsCSV writes one row per member and interval: the time (seconds
// since the first scrape and RFC3339 UTC), the member, whether it answered
// (and why not), then its signals. A p99 in etcd's lowest bucket is written
// as "<=" and the bucket's bound (e.g. <=0.001): etcd cannot tell how much
// lower it was. Cells without a value (a member that did not answer,
// nothing observed) are empty.
func MetricsCSV(w io.Writer, r *result.Result) error {
	m := r.Metrics
	if m == nil {
		return fmt.Errorf("this %s result holds no metrics section", r.Kind)
	}
	cw := csv.NewWriter(w)
	header := []string{"t", "time", "member", "up", "error", "seconds",
		"wal_fsync_count", "wal_fsync_p99", "backend_commit_count", "backend_commit_p99", "peer_rtt_count", "peer_rtt_p99",
		"has_leader", "is_leader", "leader_changes", "proposals_committed", "proposals_failed", "proposals_pending",
		"slow_applies", "slow_read_indexes", "heartbeat_failures", "db_size", "db_size_in_use", "quota", "rss"}
	if err := cw.Write(header); err != nil {
		return err
	}
	for i := 0; i < m.Intervals; i++ {
		for _, mm := range m.Members {
			if i >= len(mm.Series) {
				continue
			}
			s := mm.Series[i]
			at := m.Start.Add(time.Duration(s.T * float64(time.Second))).UTC()
			rec := []string{exact(s.T), at.Format(time.RFC3339Nano), mm.Name, strconv.FormatBool(s.Up()), s.Error}
			if sg := s.MetricsSignals; sg != nil {
				rec = append(rec, signalRecord(sg)...)
			} else {
				rec = append(rec, make([]string, len(header)-len(rec))...)
			}
			if err := cw.Write(rec); err != nil {
				return err
			}
		}
	}
	cw.Flush()
	return cw.Error()
}

// exact prints a number as the shortest exact decimal.
func exact(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// signalRecord is the CSV cells of a member's signals, from "seconds" on.
func signalRecord(s *result.MetricsSignals) []string {
	deltas := s.Seconds > 0
	counter := func(v float64) string {
		if !deltas {
			return ""
		}
		return exact(v)
	}
	lat := func(l *result.Latency) (string, string) {
		if l == nil || !deltas {
			return "", ""
		}
		if l.Count == 0 {
			return "0", ""
		}
		p99 := exact(l.P99)
		if l.Bucketed && l.Resolution > 0 && l.P99 <= l.Resolution {
			p99 = "<=" + exact(l.Resolution)
		}
		return strconv.FormatInt(l.Count, 10), p99
	}
	walN, walP := lat(s.WALFsync)
	commitN, commitP := lat(s.BackendCommit)
	rttN, rttP := lat(s.PeerRTT)
	return []string{exact(s.Seconds), walN, walP, commitN, commitP, rttN, rttP,
		exact(s.HasLeader), exact(s.IsLeader), counter(s.LeaderChanges), counter(s.ProposalsCommitted), counter(s.ProposalsFailed), exact(s.ProposalsPending),
		counter(s.SlowApplies), counter(s.SlowReadIndexes), counter(s.HeartbeatFailures),
		exact(s.DBSize), exact(s.DBSizeInUse), exact(s.Quota), exact(s.RSS)}
}
