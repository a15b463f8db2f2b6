package render

import (
	"encoding/csv"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/etcdperf/etcdperf/internal/result"
	"github.com/etcdperf/etcdperf/internal/units"
)

func init() {
	RegisterText("bench", benchText)
	RegisterCSV("bench", BenchCSV)
}

// benchText is the layout of etcd's benchmark tool (Summary, response time
// histogram, latency distribution, error distribution, in seconds with
// four decimals), followed by what etcd's own metrics said.
func benchText(w io.Writer, r *result.Result) error {
	b := r.Bench
	if b == nil {
		return nil
	}
	fmt.Fprintf(w, "etcdperf bench %s: %s\n", b.Workload, targetLine(r))
	if b.Description != "" {
		fmt.Fprintf(w, "  %s\n", b.Description)
	}
	fmt.Fprintf(w, "  %s\n", loadLine(r))
	if b.Latency != nil {
		summary(w, b.Seconds, b.Throughput, b.Latency)
		responseHistogram(w, b.Histogram)
		distribution(w, b.Percentiles)
	}
	if b.ServiceLatency != nil {
		l := b.ServiceLatency
		fmt.Fprintf(w, "\nLatency above runs from each request's intended send time at %g/s (open loop: a stalled\nserver cannot hide the requests it delayed). Service time, from the actual send:\n", b.Rate)
		fmt.Fprintf(w, "  p50 %s, p90 %s, p99 %s, p99.9 %s, max %s\n", secs(l.P50), secs(l.P90), secs(l.P99), secs(l.P999), secs(l.Max))
	}
	for _, p := range b.Parts {
		if p.Latency == nil {
			continue
		}
		noun := "requests"
		if p.Name == "watch" {
			noun = "events"
		}
		fmt.Fprintf(w, "\n%s summary: %d %s", partTitle(b.Workload, p.Name), p.Ops, noun)
		if p.Errors > 0 {
			fmt.Fprintf(w, ", %d failed", p.Errors)
		}
		l := p.Latency
		fmt.Fprintf(w, "\n  Slowest: %s. Fastest: %s. Average: %s. Stddev: %s.\n", secs(l.Max), secs(l.Min), secs(l.Mean), secs(l.Stddev))
		fmt.Fprintf(w, "  50%% in %s. 90%% in %s. 99%% in %s. 99.9%% in %s.\n", secs(l.P50), secs(l.P90), secs(l.P99), secs(l.P999))
	}
	errorDistribution(w, b.Errors)
	serverAndNotes(w, r.Server, b.Notes)
	return nil
}

// serverAndNotes ends the text of a run against etcd: etcd's own figures,
// then the notes.
func serverAndNotes(w io.Writer, s *result.Server, notes []string) {
	serverText(w, s)
	for _, n := range notes {
		fmt.Fprintf(w, "\nnote: %s", n)
	}
	if len(notes) > 0 {
		fmt.Fprintln(w)
	}
}

// stoppedText says why a run of steps stopped before its last.
func stoppedText(w io.Writer, done, planned int, why string) {
	if why != "" {
		fmt.Fprintf(w, "\nstopped after step %d of %d: %s\n", done, planned, why)
	}
}

func targetLine(r *result.Result) string {
	t := r.Target
	if t == nil {
		return ""
	}
	var s string
	if t.Kind == "embedded" {
		s = fmt.Sprintf("embedded etcd %s, %d member", t.Version, len(t.Members))
		if len(t.Members) != 1 {
			s += "s"
		}
		if r.Env != nil {
			s += ", data in " + where(r.Env)
		}
		return s
	}
	s = fmt.Sprintf("etcd %s at %s", t.Version, strings.Join(t.Endpoints, ","))
	var about []string
	if t.EndpointsFrom != "" {
		about = append(about, "from "+t.EndpointsFrom)
	}
	if n := len(t.Members); n > 0 {
		about = append(about, fmt.Sprintf("%d member%s", n, map[bool]string{true: "s"}[n != 1]))
	}
	if len(about) > 0 {
		s += " (" + strings.Join(about, ", ") + ")"
	}
	return s
}

// loadParams are r's load's params, or none.
func loadParams(r *result.Result) *result.BenchParams {
	if p := r.LoadParams(); p != nil {
		return p
	}
	return &result.BenchParams{}
}

func loadLine(r *result.Result) string {
	b := r.Bench
	if b.Workload == "watch-latency" {
		return watchLine(r)
	}
	p := loadParams(r)
	var parts []string
	if p.Total > 0 {
		parts = append(parts, fmt.Sprintf("%d requests", p.Total))
	}
	if p.Duration > 0 {
		parts = append(parts, "for "+units.Seconds(p.Duration))
	}
	conns := "connection"
	if b.Conns != 1 {
		conns += "s"
	}
	parts = append(parts, fmt.Sprintf("%s over %d %s", plural(int64(b.Clients), "client"), b.Conns, conns))
	if b.Rate > 0 {
		parts = append(parts, fmt.Sprintf("at %g/s", b.Rate))
	}
	if p.TargetLeader != nil && *p.TargetLeader {
		parts = append(parts, "to the leader")
	}
	if p.Prefix != "" {
		parts = append(parts, "keys under "+p.Prefix)
	}
	return strings.Join(parts, ", ")
}

func watchLine(r *result.Result) string {
	b := r.Bench
	p := loadParams(r)
	s := fmt.Sprintf("%d puts at %g/s", p.Total, b.Rate)
	if p.Duration > 0 {
		s = fmt.Sprintf("puts at %g/s for %s", b.Rate, units.Seconds(p.Duration))
	}
	s += fmt.Sprintf(", %d streams x %d watchers over %d connection", p.Streams, p.WatchersPerStream, b.Conns)
	if b.Conns != 1 {
		s += "s"
	}
	if p.Prefix != "" {
		s += ", keys under " + p.Prefix
	}
	return s
}

// secs prints seconds as etcd's benchmark does (%4.4f secs).
func secs(v float64) string { return strconv.FormatFloat(v, 'f', 4, 64) + " secs" }

func summary(w io.Writer, total, rps float64, l *result.Latency) {
	fmt.Fprintf(w, "\nSummary:\n")
	fmt.Fprintf(w, "  Total:\t%s.\n", secs(total))
	fmt.Fprintf(w, "  Slowest:\t%s.\n", secs(l.Max))
	fmt.Fprintf(w, "  Fastest:\t%s.\n", secs(l.Min))
	fmt.Fprintf(w, "  Average:\t%s.\n", secs(l.Mean))
	fmt.Fprintf(w, "  Stddev:\t%s.\n", secs(l.Stddev))
	fmt.Fprintf(w, "  Requests/sec:\t%.4f\n", rps)
}

func responseHistogram(w io.Writer, bs []result.HistogramBucket) {
	if len(bs) == 0 {
		return
	}
	var most int64
	for _, b := range bs {
		most = max(most, b.Count)
	}
	fmt.Fprintf(w, "\nResponse time histogram:\n")
	for _, b := range bs {
		bar := 0
		if most > 0 {
			bar = int(b.Count * 40 / most)
		}
		fmt.Fprintf(w, "  %.4f [%d]\t|%s\n", b.LE, b.Count, strings.Repeat("∎", bar))
	}
}

func distribution(w io.Writer, ps []result.Percentile) {
	if len(ps) == 0 {
		return
	}
	fmt.Fprintf(w, "\nLatency distribution:\n")
	for _, p := range ps {
		if p.Value > 0 {
			fmt.Fprintf(w, "  %s%% in %s.\n", strconv.FormatFloat(p.P, 'f', -1, 64), secs(p.Value))
		}
	}
}

func errorDistribution(w io.Writer, errs map[string]int64) {
	if len(errs) == 0 {
		return
	}
	keys := make([]string, 0, len(errs))
	for k := range errs {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if errs[keys[i]] != errs[keys[j]] {
			return errs[keys[i]] > errs[keys[j]]
		}
		return keys[i] < keys[j]
	})
	fmt.Fprintf(w, "\nError distribution:\n")
	for _, k := range keys {
		fmt.Fprintf(w, "  [%d]\t%s\n", errs[k], k)
	}
}

func partTitle(workload, name string) string {
	switch {
	case workload == "watch-latency" && name == "put":
		return "Put"
	case workload == "watch-latency" && name == "watch":
		return "Watch events"
	}
	return strings.ToUpper(name[:1]) + name[1:]
}

// serverText prints the server section: etcd's view of the same run.
func serverText(w io.Writer, s *result.Server) {
	if s == nil {
		return
	}
	fmt.Fprintf(w, "\nServer (etcd's /metrics, change over the run):\n")
	serverLatency(w, "  WAL fsync:     ", s.WALFsync)
	serverLatency(w, "  backend commit:", s.BackendCommit)
	fmt.Fprintf(w, "  leader changes: %.0f, failed proposals: %.0f\n", s.LeaderChanges, s.ProposalsFailed)
	if d := s.Demand; d != nil {
		fmt.Fprintf(w, "  write demand: %s\n", DemandText(d))
	}
	for _, m := range s.Members {
		fmt.Fprintf(w, "  member %s:", m.Name)
		if m.WALFsync != nil && m.WALFsync.Count > 0 {
			fmt.Fprintf(w, " WAL fsync p99 %s,", LatencyValue(*m.WALFsync, m.WALFsync.P99))
		}
		if m.BackendCommit != nil && m.BackendCommit.Count > 0 {
			fmt.Fprintf(w, " backend commit p99 %s,", LatencyValue(*m.BackendCommit, m.BackendCommit.P99))
		}
		fmt.Fprintf(w, " leader changes %.0f, failed proposals %.0f\n", m.LeaderChanges, m.ProposalsFailed)
	}
	processesText(w, s.Processes)
	peerRTTsText(w, s.PeerRTTs)
}

// DemandText says a write demand in one line.
func DemandText(d *result.Demand) string {
	return fmt.Sprintf("%.0f proposals committed/s (%.0f puts, %.0f deletes, %.0f txns), %.0f WAL fsyncs/s over %s",
		d.ProposalsCommitted, d.Puts, d.Deletes, d.Txns, d.WALFsyncs, units.Seconds(d.Seconds))
}

func serverLatency(w io.Writer, name string, l *result.Latency) {
	if l == nil {
		return
	}
	if l.Count == 0 {
		fmt.Fprintf(w, "%s none during the run\n", name)
		return
	}
	fmt.Fprintf(w, "%s %d, p50 %s, p90 %s, p99 %s, mean %s\n", name, l.Count,
		LatencyValue(*l, l.P50), LatencyValue(*l, l.P90), LatencyValue(*l, l.P99), units.Seconds(l.Mean))
}

// BenchCSV writes the per-second series: the end of each interval in
// seconds since the start, the requests completed in it, their p50, p99
// and max latency in seconds, and the failed requests.
func BenchCSV(w io.Writer, r *result.Result) error {
	cw := csv.NewWriter(w)
	_ = cw.Write([]string{"t", "ops", "p50", "p99", "max", "errors"})
	if r.Bench != nil {
		for _, s := range r.Bench.Series {
			_ = cw.Write([]string{ff(s.T), strconv.FormatInt(s.Ops, 10), ff(s.P50), ff(s.P99), ff(s.Max), strconv.FormatInt(s.Err, 10)})
		}
	}
	cw.Flush()
	return cw.Error()
}

func ff(v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) }
