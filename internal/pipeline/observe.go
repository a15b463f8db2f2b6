package pipeline

import (
	"context"
	"os"
	"syscall"
	"time"

	"github.com/etcdperf/etcdperf/internal/cluster"
	"github.com/etcdperf/etcdperf/internal/hoststats"
	"github.com/etcdperf/etcdperf/internal/promscrape"
	"github.com/etcdperf/etcdperf/internal/result"
)

// metricCPU is the Go and Prometheus process collector's CPU counter, which
// every etcd member exposes.
const metricCPU = "process_cpu_seconds_total"

// observation is what one load run's observer saw: etcdperf's own CPU, each
// member's CPU, memory and database, and the host's disk and CPU.
type observation struct {
	elapsed time.Duration
	// clientCPU is etcdperf's CPU seconds per second over the load.
	clientCPU float64
	// clientOnly is true when no member ran in this process.
	clientOnly bool
	members    []result.PerfMember
	// serverCPU sums the members' CPU; hasServerCPU says whether any
	// member reported it.
	serverCPU    float64
	hasServerCPU bool
	host         *result.Host
}

// observer measures a load run through BenchOptions.Observe. device is the
// block device of the storage under test ("" for none: the host's CPU is
// still sampled).
type observer struct {
	ctx    context.Context
	device string
	out    observation
}

// observe is BenchOptions.Observe: it takes the "before" side now and
// returns the function that takes the "after" side.
func (ob *observer) observe(t *cluster.Target) func() {
	members := t.Members()
	httpc := t.Client().HTTPClient()
	before := promscrape.ScrapeMembers(ob.ctx, httpc, members)
	sampler, _ := hoststats.Start(ob.device, time.Second)
	var ru0 syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru0)
	t0 := time.Now()
	self := false
	for _, m := range members {
		self = self || (t.Kind() == cluster.Embedded && m.PID == os.Getpid())
	}
	return func() {
		el := time.Since(t0)
		var ru1 syscall.Rusage
		_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru1)
		o := &ob.out
		o.elapsed = el
		o.clientOnly = !self
		if el > 0 {
			o.clientCPU = (rusageTime(ru1) - rusageTime(ru0)).Seconds() / el.Seconds()
		}
		if sampler != nil {
			o.host, _ = sampler.Stop()
		}
		after := promscrape.ScrapeMembers(context.WithoutCancel(ob.ctx), httpc, members)
		o.members, o.serverCPU, o.hasServerCPU = memberFigures(before, after, el)
	}
}

func rusageTime(r syscall.Rusage) time.Duration {
	tv := func(t syscall.Timeval) time.Duration {
		return time.Duration(t.Sec)*time.Second + time.Duration(t.Usec)*time.Microsecond
	}
	return tv(r.Utime) + tv(r.Stime)
}

// memberFigures turns two scrapes of each member into its CPU, memory,
// database and peer figures.
func memberFigures(before, after []promscrape.MemberScrape, el time.Duration) (ms []result.PerfMember, cpu float64, hasCPU bool) {
	for i := range after {
		b, a := before[i], after[i]
		if b.Err != nil || a.Err != nil {
			continue
		}
		m := result.PerfMember{Name: a.Member.Name, Endpoint: a.Member.ClientURL}
		eb, ea := b.Snap.EtcdSignals(), a.Snap.EtcdSignals()
		if c1, ok := a.Snap.Value(metricCPU, nil); ok && el > 0 {
			c0, _ := b.Snap.Value(metricCPU, nil)
			m.CPU = max(0, c1-c0) / el.Seconds()
			cpu += m.CPU
			hasCPU = true
		}
		m.RSSBefore, m.RSSAfter = eb.Values["rss"], ea.Values["rss"]
		m.DBSize, m.DBSizeInUse, m.Quota = ea.Values["db_size"], ea.Values["db_size_in_use"], ea.Values["quota"]
		m.HeartbeatFailures = max(0, ea.Values["heartbeat_failures"]-eb.Values["heartbeat_failures"])
		if h, ok := ea.Histograms["peer_rtt"]; ok {
			d := h.Sub(eb.Histograms["peer_rtt"])
			if d.Count > 0 {
				m.PeerRTT, _, _ = d.Quantile(0.99)
			}
		}
		ms = append(ms, m)
	}
	return ms, cpu, hasCPU
}
