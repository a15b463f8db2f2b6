package promscrape

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/etcdperf/etcdperf/internal/cluster"
	"github.com/etcdperf/etcdperf/internal/result"
	"github.com/etcdperf/etcdperf/internal/units"
)

// etcd's metrics that the server section of a Result is made of.
const (
	MetricWALFsync        = "etcd_disk_wal_fsync_duration_seconds"
	MetricBackendCommit   = "etcd_disk_backend_commit_duration_seconds"
	MetricLeaderChanges   = "etcd_server_leader_changes_seen_total"
	MetricProposalsFailed = "etcd_server_proposals_failed_total"
)

// scrapeTimeout bounds one member's scrape.
const scrapeTimeout = 5 * time.Second

// MemberScrape is one member's /metrics, before or after the load.
type MemberScrape struct {
	Member cluster.Member
	Snap   Snapshot
	Err    error
	// At is when the scrape was asked for.
	At time.Time
}

// ScrapeMembers fetches every member's metrics in parallel.
func ScrapeMembers(ctx context.Context, client *http.Client, members []cluster.Member) []MemberScrape {
	out := make([]MemberScrape, len(members))
	var wg sync.WaitGroup
	for i, m := range members {
		out[i].Member, out[i].At = m, time.Now()
		if m.MetricsURL == "" {
			out[i].Err = fmt.Errorf("member %s advertises no client URL", m.Name)
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			sctx, cancel := context.WithTimeout(ctx, scrapeTimeout)
			defer cancel()
			out[i].Snap, out[i].Err = Scrape(sctx, client, m.MetricsURL)
		}()
	}
	wg.Wait()
	return out
}

// ServerSection turns the scrapes before and after the load into the
// server section: the deltas of etcd's disk histograms, leader changes and
// failed proposals, per member and over all members (histograms summed,
// leader changes the most any member saw, failed proposals summed). It
// returns notes on what could not be measured and on histograms that only
// say "below 1ms".
func ServerSection(before, after []MemberScrape) (*result.Server, []string) {
	var notes []string
	srv := &result.Server{}
	var wal, commit Histogram
	got := 0
	for i := range after {
		b, a := before[i], after[i]
		if b.Err != nil || a.Err != nil {
			err := b.Err
			if err == nil {
				err = a.Err
			}
			notes = append(notes, fmt.Sprintf("no server metrics from member %s: %v", a.Member.Name, err))
			continue
		}
		got++
		ms := result.MemberServer{Name: a.Member.Name, Endpoint: a.Member.ClientURL}
		if h, ok := HistDelta(b.Snap, a.Snap, MetricWALFsync); ok {
			l := h.Latency()
			ms.WALFsync = &l
			wal = AddHist(wal, h)
		}
		if h, ok := HistDelta(b.Snap, a.Snap, MetricBackendCommit); ok {
			l := h.Latency()
			ms.BackendCommit = &l
			commit = AddHist(commit, h)
		}
		ms.Demand = demandBetween(b, a)
		srv.Demand = maxDemand(srv.Demand, ms.Demand)
		ms.LeaderChanges = CounterDelta(b.Snap, a.Snap, MetricLeaderChanges)
		ms.ProposalsFailed = CounterDelta(b.Snap, a.Snap, MetricProposalsFailed)
		srv.LeaderChanges = max(srv.LeaderChanges, ms.LeaderChanges)
		srv.ProposalsFailed += ms.ProposalsFailed
		srv.Members = append(srv.Members, ms)
		if sig := a.Snap.EtcdSignals(); sig.Values["db_size"] > 0 {
			srv.Databases = append(srv.Databases, result.MemberDatabase{Name: a.Member.Name, Size: sig.Values["db_size"],
				InUse: sig.Values["db_size_in_use"], Quota: sig.Values["quota"]})
		}
	}
	if got == 0 {
		return nil, notes
	}
	if len(wal.Buckets) > 0 {
		l := wal.Latency()
		srv.WALFsync = &l
		if wal.AllAtFloor() {
			notes = append(notes, fmt.Sprintf("all %.0f WAL fsyncs took under %s, etcd's lowest histogram bucket: etcd cannot say how much under (tmpfs or a fast disk)",
				wal.Count, units.Seconds(wal.Buckets[0].UpperBound)))
		}
	}
	if len(commit.Buckets) > 0 {
		l := commit.Latency()
		srv.BackendCommit = &l
		if commit.AllAtFloor() {
			notes = append(notes, fmt.Sprintf("all %.0f backend commits took under %s, etcd's lowest histogram bucket", commit.Count, units.Seconds(commit.Buckets[0].UpperBound)))
		}
	}
	if len(srv.Members) == 1 {
		srv.Members = nil
	}
	return srv, notes
}

// etcd's write counters (3.5 on; 3.4 has them as etcd_debugging_mvcc_*).
var (
	metricProposalsCommitted = []string{"etcd_server_proposals_committed_total"}
	metricPuts               = []string{"etcd_mvcc_put_total", "etcd_debugging_mvcc_put_total"}
	metricDeletes            = []string{"etcd_mvcc_delete_total", "etcd_debugging_mvcc_delete_total"}
	metricTxns               = []string{"etcd_mvcc_txn_total", "etcd_debugging_mvcc_txn_total"}
	metricWALBytes           = []string{"etcd_disk_wal_write_bytes_total"}
)

// demandBetween is a member's write demand between two scrapes: its
// counters' rates; nil when the scrapes have no time between them.
func demandBetween(b, a MemberScrape) *result.Demand {
	secs := a.At.Sub(b.At).Seconds()
	if secs <= 0 || b.At.IsZero() {
		return nil
	}
	rate := func(names []string) float64 {
		for _, n := range names {
			if _, ok := a.Snap[n]; ok {
				return CounterDelta(b.Snap, a.Snap, n) / secs
			}
		}
		return 0
	}
	d := &result.Demand{Seconds: secs, ProposalsCommitted: rate(metricProposalsCommitted), Puts: rate(metricPuts),
		Deletes: rate(metricDeletes), Txns: rate(metricTxns), WALBytes: rate(metricWALBytes)}
	if h, ok := HistDelta(b.Snap, a.Snap, MetricWALFsync); ok {
		d.WALFsyncs = h.Count / secs
	}
	return d
}

// maxDemand is the cluster's demand: each figure the most any member saw
// (every member commits and applies the same writes).
func maxDemand(sum, d *result.Demand) *result.Demand {
	if d == nil {
		return sum
	}
	if sum == nil {
		c := *d
		return &c
	}
	sum.Seconds = max(sum.Seconds, d.Seconds)
	sum.ProposalsCommitted = max(sum.ProposalsCommitted, d.ProposalsCommitted)
	sum.Puts, sum.Deletes, sum.Txns = max(sum.Puts, d.Puts), max(sum.Deletes, d.Deletes), max(sum.Txns, d.Txns)
	sum.WALFsyncs = max(sum.WALFsyncs, d.WALFsyncs)
	sum.WALBytes = max(sum.WALBytes, d.WALBytes)
	return sum
}

// HistDelta is the histogram name in after less the one in before.
func HistDelta(before, after Snapshot, name string) (Histogram, bool) {
	a, ok := after.Histogram(name, nil)
	if !ok {
		return Histogram{}, false
	}
	b, _ := before.Histogram(name, nil)
	return a.Sub(b), true
}

// CounterDelta is the growth of the counter name from before to after
// (its value after, when the member restarted in between).
func CounterDelta(before, after Snapshot, name string) float64 {
	a, _ := after.Value(name, nil)
	b, _ := before.Value(name, nil)
	if a < b { // the member restarted
		return a
	}
	return a - b
}

// AddHist sums two histograms bucket by bucket (same bounds, as etcd's
// members all have).
func AddHist(sum, h Histogram) Histogram {
	if len(sum.Buckets) == 0 {
		out := Histogram{Count: h.Count, Sum: h.Sum}
		out.Buckets = append(out.Buckets, h.Buckets...)
		return out
	}
	sum.Count += h.Count
	sum.Sum += h.Sum
	for i := range sum.Buckets {
		if i < len(h.Buckets) && h.Buckets[i].UpperBound == sum.Buckets[i].UpperBound {
			sum.Buckets[i].Count += h.Buckets[i].Count
		}
	}
	return sum
}

// PeerRTTsBetween returns every member's round trips to its peers, from the
// scrapes before and after a run.
func PeerRTTsBetween(before, after []MemberScrape) []result.PeerRTT {
	names := map[string]string{}
	for _, s := range after {
		if s.Member.ID != 0 {
			names[fmt.Sprintf("%x", s.Member.ID)] = s.Member.Name
		}
	}
	var out []result.PeerRTT
	for i, a := range after {
		if a.Err != nil {
			continue
		}
		var b Snapshot
		if i < len(before) && before[i].Err == nil {
			b = before[i].Snap
		}
		out = append(out, PeerRTTs(a.Member.Name, b, a.Snap, names)...)
	}
	return out
}
