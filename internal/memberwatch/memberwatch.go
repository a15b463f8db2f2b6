// Package memberwatch observes a set of etcd members over a window of
// time, the one way every command does: Start scrapes every member's
// /metrics and takes the baselines of the member processes on this host
// (CPU, run-queue wait, I/O), of the host's CPUs and device, and of this
// process's CPU; Mark scrapes again and gives the deltas of a step or an
// interval; Stop (or End, at the last mark) returns what the window saw: the
// server section with the member processes and the peers' round trips, a
// row per member, the host, and etcdperf's own CPU. Watch is the one loop
// that marks a window at every interval: metrics' series (Series, which
// returns the per-interval signals for pipeline to put in the Result), the
// live probe's guard and scale's proposals-pending poll run on it.
//
// One window is one scrape per member at each boundary: a command that
// needs figures at the start, at each step and at the end asks this
// package, never the members again.
package memberwatch

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/etcdperf/etcdperf/internal/cluster"
	"github.com/etcdperf/etcdperf/internal/hoststats"
	"github.com/etcdperf/etcdperf/internal/lab"
	"github.com/etcdperf/etcdperf/internal/memberproc"
	"github.com/etcdperf/etcdperf/internal/promscrape"
	"github.com/etcdperf/etcdperf/internal/result"
	"github.com/etcdperf/etcdperf/internal/sysinfo"
)

// metricCPU is the Go and Prometheus process collector's CPU counter, which
// every etcd member exposes.
const metricCPU = "process_cpu_seconds_total"

// Options shape a window.
type Options struct {
	// Host samples the host's CPUs, and Device when set (a block device
	// name of /proc/diskstats), every second over the window.
	Host   bool
	Device string
}

// Window is an observation of members under way. Its methods may be
// called from one goroutine at a time.
type Window struct {
	client  *http.Client
	members []cluster.Member
	// first is the scrape at Start, last the latest mark's.
	first, last []promscrape.MemberScrape
	procs       *memberproc.Watcher
	sampler     *hoststats.Sampler
	// hostErr is why the host could not be sampled (Options.Host).
	hostErr error
	cpu0    time.Duration
	t0      time.Time
	// self is true when a member runs in this process.
	self  bool
	once  sync.Once
	ended *Observation
}

// Start opens a window on members, whose /metrics client reads: it
// scrapes every member once, and takes the baselines of the processes of
// the members that run on this host, of the host (o.Host) and of this
// process's CPU.
func Start(ctx context.Context, client *http.Client, members []cluster.Member, o Options) *Window {
	w := &Window{client: client, members: members}
	w.first = promscrape.ScrapeMembers(ctx, client, members)
	w.last = w.first
	w.procs = memberproc.Watch(members)
	if o.Host {
		w.sampler, w.hostErr = hoststats.Start(o.Device, time.Second)
	}
	for _, m := range members {
		w.self = w.self || m.PID == os.Getpid()
	}
	w.cpu0 = selfCPU()
	w.t0 = time.Now()
	return w
}

// StartTarget opens a window on the members of t (Start).
func StartTarget(ctx context.Context, t *lab.Target, o Options) *Window {
	return Start(ctx, t.Client().HTTPClient(), t.Members(), o)
}

// First is the scrape of every member at Start, in the members' order.
func (w *Window) First() []promscrape.MemberScrape { return w.first }

// Mark is the span between two scrapes of every member: Before is the
// previous mark's (or Start's), After this one's, in the members' order.
type Mark struct {
	Before, After []promscrape.MemberScrape
}

// Mark scrapes every member now and returns the span since the previous
// mark; the window's end (End) moves to it.
func (w *Window) Mark(ctx context.Context) Mark {
	m := Mark{Before: w.last, After: promscrape.ScrapeMembers(ctx, w.client, w.members)}
	w.last = m.After
	return m
}

// Hist is the histogram name over the mark, summed over the members that
// answered both scrapes (empty when none has it).
func (m Mark) Hist(name string) promscrape.Histogram {
	var sum promscrape.Histogram
	for i, a := range m.After {
		if a.Err != nil || i >= len(m.Before) || m.Before[i].Err != nil {
			continue
		}
		if h, ok := promscrape.HistDelta(m.Before[i].Snap, a.Snap, name); ok {
			sum = promscrape.AddHist(sum, h)
		}
	}
	return sum
}

// HostSeries is the host's per-second samples so far (Options.Host; nil
// without), each one's T its end in seconds since Start.
func (w *Window) HostSeries() []result.HostSample {
	if w.sampler == nil {
		return nil
	}
	return w.sampler.Series()
}

// Processes is each member process's figures on this host from Start to
// now.
func (w *Window) Processes() []result.MemberProcess { return w.procs.Since() }

// Observation is what a window saw from Start to its end.
type Observation struct {
	Elapsed time.Duration
	// First and Last are the scrapes at the window's two ends.
	First, Last []promscrape.MemberScrape
	// Server is etcd's server section between them, with the member
	// processes and the peers' round trips; nil when no member answered
	// both. Notes say what could not be measured.
	Server *result.Server
	Notes  []string
	// Members are the members' rows: CPU, memory, database and peers.
	Members []result.PerfMember
	// ServerCPU sums the members' CPU (seconds per second); HasServerCPU
	// says whether any member reported it.
	ServerCPU    float64
	HasServerCPU bool
	// Host is the host's CPUs and device over the window (Options.Host).
	Host *result.Host
	// ClientCPU is this process's CPU seconds per second; ClientOnly is
	// true when no member ran in this process (then it is etcdperf's
	// alone); CPUs is the host's.
	ClientCPU  float64
	ClientOnly bool
	CPUs       int
}

// ClientShare is the share of the host's CPUs this process used.
func (o *Observation) ClientShare() float64 {
	if o.CPUs == 0 {
		return 0
	}
	return o.ClientCPU / float64(o.CPUs)
}

// Stop ends the window now: this process's CPU, the host and the member
// processes are read, then every member is scraped a last time (under
// ctx). A window ends once: later calls return the same Observation.
func (w *Window) Stop(ctx context.Context) *Observation {
	return w.end(func() { w.Mark(ctx) })
}

// End ends the window at its last mark, without scraping again (a run
// whose every step was marked), as Stop does otherwise.
func (w *Window) End() *Observation { return w.end(func() {}) }

func (w *Window) end(mark func()) *Observation {
	w.once.Do(func() {
		o := &Observation{Elapsed: time.Since(w.t0), ClientOnly: !w.self, CPUs: sysinfo.HostEnv().CPUs}
		if o.Elapsed > 0 {
			o.ClientCPU = (selfCPU() - w.cpu0).Seconds() / o.Elapsed.Seconds()
		}
		if w.sampler != nil {
			o.Host, w.hostErr = w.sampler.Stop()
		}
		processes := w.Processes()
		mark()
		o.First, o.Last = w.first, w.last
		o.Server, o.Notes = promscrape.ServerSection(w.first, w.last)
		if w.hostErr != nil {
			o.Notes = append(o.Notes, hostNote(w.hostErr))
		}
		if o.Server != nil {
			o.Server.Processes, o.Server.PeerRTTs = processes, promscrape.PeerRTTsBetween(w.first, w.last)
		}
		o.Members, o.ServerCPU, o.HasServerCPU = memberRows(w.first, w.last, o.Elapsed)
		w.ended = o
	})
	return w.ended
}

// hostNote says that this host's CPUs and device could not be read, so
// that no rule's silence about them reads as health.
func hostNote(err error) string {
	return fmt.Sprintf("this host's CPUs and device could not be read (%v): nothing here judges them", err)
}

// selfCPU is the CPU time this process used so far.
func selfCPU() time.Duration {
	var r syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &r)
	tv := func(t syscall.Timeval) time.Duration {
		return time.Duration(t.Sec)*time.Second + time.Duration(t.Usec)*time.Microsecond
	}
	return tv(r.Utime) + tv(r.Stime)
}

// memberRows turns two scrapes of each member into its CPU, memory,
// database and peer figures.
func memberRows(before, after []promscrape.MemberScrape, el time.Duration) (ms []result.PerfMember, cpu float64, hasCPU bool) {
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
