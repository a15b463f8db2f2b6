package render

import (
	"encoding/csv"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/etcdperf/etcdperf/internal/limits"
	"github.com/etcdperf/etcdperf/internal/result"
	"github.com/etcdperf/etcdperf/internal/units"
)

// kubeText is a density run through the API server: its setting, then
// per step the p99 of each call (the API server's, and etcdperf's), the
// API server's etcd requests and etcd's own histograms.
func kubeText(w io.Writer, r *result.Result) error {
	k := r.Kube
	fmt.Fprintf(w, "etcdperf scale through the API server %s", k.Server)
	if k.Version != "" {
		fmt.Fprintf(w, " (Kubernetes %s)", k.Version)
	}
	fmt.Fprintf(w, ", namespace %s\n", k.Namespace)
	var kinds []string
	for _, kk := range k.Kinds {
		kinds = append(kinds, fmt.Sprintf("%s=%d", kk.Resource, kk.Target))
	}
	fmt.Fprintf(w, "  objects %s in %d steps, %d clients, client-go QPS %g and burst %d\n", strings.Join(kinds, ","), k.Planned, k.Clients, k.QPS, k.Burst)
	if len(k.Steps) == 0 {
		fmt.Fprintln(w, "\nno step completed")
	}
	for _, st := range k.Steps {
		fmt.Fprintf(w, "\nstep %d: %d objects, %s, %d watch events", st.Step, st.Objects, units.Seconds(st.Seconds), st.WatchEvents)
		if st.WALFsync != nil && st.WALFsync.Count > 0 {
			fmt.Fprintf(w, "; etcd's WAL fsync p99 %s", LatencyValue(*st.WALFsync, st.WALFsync.P99))
		}
		if st.BackendCommit != nil && st.BackendCommit.Count > 0 {
			fmt.Fprintf(w, ", backend commit p99 %s", LatencyValue(*st.BackendCommit, st.BackendCommit.P99))
		}
		fmt.Fprintln(w)
		rows := [][]string{{"call", "scope", "calls", "p99 (API server)", "p99 (etcdperf)", "p50 (etcdperf)", "failed"}}
		for _, c := range st.Calls {
			row := []string{c.Verb + " " + c.Resource, c.Scope, "", "-", "-", "-", ""}
			if c.Client != nil {
				row[2] = strconv.FormatInt(c.Client.Count, 10)
				row[4], row[5] = units.Seconds(c.Client.P99), units.Seconds(c.Client.P50)
			}
			if c.Server != nil && c.Server.Count > 0 {
				row[3] = LatencyValue(*c.Server, c.Server.P99)
			}
			if n := result.ErrorTotal(c.Errors); n > 0 {
				top, _ := result.TopError(c.Errors)
				row[6] = fmt.Sprintf("%d (%s)", n, top)
			}
			rows = append(rows, row)
		}
		writeColumns(w, rows)
		if line := slowestEtcdRequests(st.Etcd, 5); line != "" {
			fmt.Fprintf(w, "  the API server's slowest etcd requests, p99: %s\n", line)
		}
	}
	stoppedText(w, len(k.Steps), k.Planned, k.Stopped)
	serverAndNotes(w, r.Server, k.Notes)
	return nil
}

// kubeCSV is one row per step and call.
func kubeCSV(w io.Writer, r *result.Result) error {
	cw := csv.NewWriter(w)
	exact := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	p99 := func(l *result.Latency) string {
		if l == nil || l.Count == 0 {
			return ""
		}
		return exact(l.P99)
	}
	_ = cw.Write([]string{"step", "t", "objects", "verb", "resource", "scope", "slo", "calls", "client_p50", "client_p99", "server_p99", "failed", "wal_fsync_p99", "backend_commit_p99"})
	for _, st := range r.Kube.Steps {
		for _, c := range st.Calls {
			var n int64
			var p50 string
			if c.Client != nil {
				n, p50 = c.Client.Count, exact(c.Client.P50)
			}
			_ = cw.Write([]string{strconv.Itoa(st.Step), exact(st.T), strconv.FormatInt(st.Objects, 10), c.Verb, c.Resource, c.Scope,
				limits.KubeCallCriterion(c), strconv.FormatInt(n, 10), p50, p99(c.Client), p99(c.Server),
				strconv.FormatInt(result.ErrorTotal(c.Errors), 10), p99(st.WALFsync), p99(st.BackendCommit)})
		}
	}
	cw.Flush()
	return cw.Error()
}

// slowestEtcdRequests names the n etcd requests of the API server with the
// highest p99 over a step, those above the histogram's lowest bucket.
func slowestEtcdRequests(calls []result.KubeEtcdCall, n int) string {
	var slow []result.KubeEtcdCall
	for _, e := range calls {
		if l := e.Latency; l != nil && l.Count > 0 && l.P99 > l.Resolution {
			slow = append(slow, e)
		}
	}
	sort.SliceStable(slow, func(i, j int) bool { return slow[i].Latency.P99 > slow[j].Latency.P99 })
	var parts []string
	for _, e := range slow[:min(n, len(slow))] {
		parts = append(parts, fmt.Sprintf("%s %s %s", e.Operation, e.Type, units.Seconds(e.Latency.P99)))
	}
	return strings.Join(parts, ", ")
}
