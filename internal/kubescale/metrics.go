package kubescale

import (
	"context"
	"sort"
	"strings"
	"time"

	"github.com/etcdperf/etcdperf/internal/memberwatch"
	"github.com/etcdperf/etcdperf/internal/promscrape"
	"github.com/etcdperf/etcdperf/internal/result"
)

// The API server's histograms: of its requests (what the SLO on API call
// latency is measured by), and of its own requests to etcd.
const (
	MetricRequestDuration = "apiserver_request_duration_seconds"
	MetricEtcdRequest     = "etcd_request_duration_seconds"
)

// scrapeAPIServer reads the API server's /metrics as the run's user (it
// needs get on the non-resource URL /metrics).
func (r *Run) scrapeAPIServer(ctx context.Context) (promscrape.Snapshot, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	return promscrape.Scrape(ctx, r.httpc, strings.TrimSuffix(r.cfg.Host, "/")+"/metrics")
}

// serverLatencies adds the API server's histogram over the step to each
// call of the step, and its etcd requests.
func serverLatencies(st *result.KubeStep, before, after promscrape.Snapshot) {
	for i := range st.Calls {
		sel := labelsOf(st.Calls[i])
		a, ok := after.Histogram(MetricRequestDuration, sel)
		if !ok {
			continue
		}
		if b, ok := before.Histogram(MetricRequestDuration, sel); ok {
			a = a.Sub(b)
		}
		if a.Count > 0 {
			l := a.Latency()
			st.Calls[i].Server = &l
		}
	}
	st.Etcd = etcdRequests(before, after)
}

// etcdRequests is the API server's etcd_request_duration_seconds over the
// step, by operation and type (the resource, in the labels of the
// release: "type" or "resource").
func etcdRequests(before, after promscrape.Snapshot) []result.KubeEtcdCall {
	fam, ok := after[MetricEtcdRequest]
	if !ok {
		return nil
	}
	seen := map[[2]string]bool{}
	var out []result.KubeEtcdCall
	for _, m := range fam.GetMetric() {
		var op, typ, typLabel string
		for _, l := range m.GetLabel() {
			switch l.GetName() {
			case "operation":
				op = l.GetValue()
			case "type", "resource":
				typ, typLabel = l.GetValue(), l.GetName()
			}
		}
		k := [2]string{op, typ}
		if op == "" || seen[k] {
			continue
		}
		seen[k] = true
		sel := promscrape.Labels{"operation": op, typLabel: typ}
		a, _ := after.Histogram(MetricEtcdRequest, sel)
		if b, ok := before.Histogram(MetricEtcdRequest, sel); ok {
			a = a.Sub(b)
		}
		if a.Count == 0 {
			continue
		}
		l := a.Latency()
		out = append(out, result.KubeEtcdCall{Operation: op, Type: typ, Latency: &l})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Type != out[j].Type {
			return out[i].Type < out[j].Type
		}
		return out[i].Operation < out[j].Operation
	})
	return out
}

// etcdFigures adds etcd's WAL fsync and backend commit histograms over the
// step, summed over the members.
func etcdFigures(st *result.KubeStep, step memberwatch.Mark) {
	if wal := step.Hist(promscrape.MetricWALFsync); wal.Count > 0 {
		l := wal.Latency()
		st.WALFsync = &l
	}
	if commit := step.Hist(promscrape.MetricBackendCommit); commit.Count > 0 {
		l := commit.Latency()
		st.BackendCommit = &l
	}
}
