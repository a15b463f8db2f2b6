package pipeline

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/etcdperf/etcdperf/internal/cluster"
	"github.com/etcdperf/etcdperf/internal/promscrape"
	"github.com/etcdperf/etcdperf/internal/result"
	"github.com/etcdperf/etcdperf/internal/units"
)

// etcd's metrics that the server section is made of.
const (
	metricWALFsync        = "etcd_disk_wal_fsync_duration_seconds"
	metricBackendCommit   = "etcd_disk_backend_commit_duration_seconds"
	metricLeaderChanges   = "etcd_server_leader_changes_seen_total"
	metricProposalsFailed = "etcd_server_proposals_failed_total"
)

// scrapeTimeout bounds one member's scrape.
const scrapeTimeout = 5 * time.Second

// memberScrape is one member's /metrics, before or after the load.
type memberScrape struct {
	member cluster.Member
	snap   promscrape.Snapshot
	err    error
}

// scrapeMembers fetches every member's metrics in parallel.
func scrapeMembers(ctx context.Context, client *http.Client, members []cluster.Member) []memberScrape {
	out := make([]memberScrape, len(members))
	var wg sync.WaitGroup
	for i, m := range members {
		out[i].member = m
		if m.MetricsURL == "" {
			out[i].err = fmt.Errorf("member %s advertises no client URL", m.Name)
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			sctx, cancel := context.WithTimeout(ctx, scrapeTimeout)
			defer cancel()
			out[i].snap, out[i].err = promscrape.Scrape(sctx, client, m.MetricsURL)
		}()
	}
	wg.Wait()
	return out
}

// serverSection turns the scrapes before and after the load into the
// server section: the deltas of etcd's disk histograms, leader changes and
// failed proposals, per member and over all members (histograms summed,
// leader changes the most any member saw, failed proposals summed). It
// returns notes on what could not be measured and on histograms that only
// say "below 1ms".
func serverSection(before, after []memberScrape) (*result.Server, []string) {
	var notes []string
	srv := &result.Server{}
	var wal, commit promscrape.Histogram
	got := 0
	for i := range after {
		b, a := before[i], after[i]
		if b.err != nil || a.err != nil {
			err := b.err
			if err == nil {
				err = a.err
			}
			notes = append(notes, fmt.Sprintf("no server metrics from member %s: %v", a.member.Name, err))
			continue
		}
		got++
		ms := result.MemberServer{Name: a.member.Name, Endpoint: a.member.ClientURL}
		if h, ok := histDelta(b.snap, a.snap, metricWALFsync); ok {
			l := h.Latency()
			ms.WALFsync = &l
			wal = addHist(wal, h)
		}
		if h, ok := histDelta(b.snap, a.snap, metricBackendCommit); ok {
			l := h.Latency()
			ms.BackendCommit = &l
			commit = addHist(commit, h)
		}
		ms.LeaderChanges = counterDelta(b.snap, a.snap, metricLeaderChanges)
		ms.ProposalsFailed = counterDelta(b.snap, a.snap, metricProposalsFailed)
		srv.LeaderChanges = max(srv.LeaderChanges, ms.LeaderChanges)
		srv.ProposalsFailed += ms.ProposalsFailed
		srv.Members = append(srv.Members, ms)
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

func histDelta(before, after promscrape.Snapshot, name string) (promscrape.Histogram, bool) {
	a, ok := after.Histogram(name, nil)
	if !ok {
		return promscrape.Histogram{}, false
	}
	b, _ := before.Histogram(name, nil)
	return a.Sub(b), true
}

func counterDelta(before, after promscrape.Snapshot, name string) float64 {
	a, _ := after.Value(name, nil)
	b, _ := before.Value(name, nil)
	if a < b { // the member restarted
		return a
	}
	return a - b
}

// addHist sums two histograms bucket by bucket (same bounds, as etcd's
// members all have).
func addHist(sum, h promscrape.Histogram) promscrape.Histogram {
	if len(sum.Buckets) == 0 {
		out := promscrape.Histogram{Count: h.Count, Sum: h.Sum}
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
