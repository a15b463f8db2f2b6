package loadrun

import (
	"time"

	"github.com/etcdperf/etcdperf/internal/memberwatch"
	"github.com/etcdperf/etcdperf/internal/profile"
	"github.com/etcdperf/etcdperf/internal/result"
)

// Perf works out from the load's figures and the window's on the
// members whether the load generator kept its schedule and who used the
// CPU. dur is the time the load sent for: the run lasts longer by its
// slowest answers.
func Perf(b *result.Bench, p profile.Profile, obs *memberwatch.Observation, dur time.Duration) *result.Perf {
	pf := &result.Perf{
		Profile: p.Name, Clients: p.Clients, TargetRate: p.Rate, CPUs: obs.CPUs,
		ClientCPU: obs.ClientCPU, ClientOnly: obs.ClientOnly, Members: obs.Members,
	}
	if obs.HasServerCPU {
		pf.ServerCPU = obs.ServerCPU
	}
	if b == nil {
		return pf
	}
	// Requests were sent during dur at most; the run went on while the
	// last answers came (up to the command timeout from a stuck member):
	// the rate at which they were sent is over the sending time.
	if secs := min(b.Seconds, dur.Seconds()); secs > 0 {
		pf.SentRate = float64(b.Ops+result.ErrorTotal(b.Errors)) / secs
	}
	if p.Rate > 0 {
		pf.Reached = b.Throughput / p.Rate
	}
	if b.Latency != nil && b.ServiceLatency != nil {
		pf.ScheduleLag = max(0, b.Latency.Mean-b.ServiceLatency.Mean)
		pf.InFlight = b.Throughput * b.ServiceLatency.Mean
	}
	if b.SendLag != nil && b.SendLag.Count > 0 {
		pf.ScheduleLag = b.SendLag.Mean // every send, answered or not
		pf.BusyLag = b.SendLagBusy
	}
	return pf
}
