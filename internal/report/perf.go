package report

import (
	"fmt"

	"github.com/etcdperf/etcdperf/internal/result"
	"github.com/etcdperf/etcdperf/internal/units"
)

// The perf section of check and doctor: whether the load generator kept
// the profile's schedule, and who used the CPU (etcd or the client); and
// the datascale section: etcd's memory per key.
func init() {
	perf := func(label, unit string, better Better, get func(p *result.Perf) (float64, bool)) Metric {
		return Metric{Label: label, Unit: unit, Better: better, Get: func(r *result.Result) (Value, bool) {
			v, ok := get(r.Perf)
			return Value{V: v}, ok
		}}
	}
	share := func(cores float64, p *result.Perf) float64 { return cores / float64(max(p.CPUs, 1)) }
	Register(Section{
		ID: "perf", Title: "Load check: the profile's schedule and who used the CPU", Order: 25,
		Has: func(r *result.Result) bool { return r.Perf != nil },
		Metrics: []Metric{
			perf("share of the profile's rate", "ratio", Higher, func(p *result.Perf) (float64, bool) { return p.Reached, p.TargetRate > 0 }),
			perf("send delay behind schedule", "s", Lower, func(p *result.Perf) (float64, bool) { return p.ScheduleLag, true }),
			perf("etcd CPU (share of the CPUs)", "ratio", Lower, func(p *result.Perf) (float64, bool) { return share(p.ServerCPU, p), p.ServerCPU > 0 }),
			perf("client CPU (share of the CPUs)", "ratio", Lower, func(p *result.Perf) (float64, bool) { return share(p.ClientCPU, p), p.ClientOnly }),
		},
		Build: perfBlock,
	})
	Register(Section{
		ID: "datascale", Title: "etcd's memory per key (check datascale)", Order: 26,
		Has: func(r *result.Result) bool { return r.Datascale != nil },
		Metrics: []Metric{
			{Label: "etcd RSS growth", Unit: "bytes", Better: Lower, Get: func(r *result.Result) (Value, bool) {
				return Value{V: r.Datascale.Growth}, len(r.Datascale.Members) > 0
			}},
			{Label: "etcd RSS per key", Unit: "bytes", Better: Lower, Get: func(r *result.Result) (Value, bool) {
				return Value{V: r.Datascale.PerKey}, len(r.Datascale.Members) > 0
			}},
		},
		Build: datascaleBlock,
	})
}

func perfBlock(runs []Run) Block {
	t := Table{Title: "the load and its pace",
		Header: []string{"", "profile", "clients", "rate", "sent", "waiting for etcd", "limited by", "etcd CPU", "client CPU"}}
	for _, r := range runs {
		p := r.Result.Perf
		limited := string(p.LimitedBy)
		if limited == "" {
			limited = "-"
		}
		client := fmt.Sprintf("%.2f of %d", p.ClientCPU, p.CPUs)
		if !p.ClientOnly {
			client += " (with etcd)"
		}
		t.Rows = append(t.Rows, []string{r.Label, p.Profile, fmt.Sprint(p.Clients), fmt.Sprintf("%g/s", p.TargetRate),
			fmt.Sprintf("%.0f/s", p.SentRate), fmt.Sprintf("%.1f", p.InFlight), limited, fmt.Sprintf("%.2f of %d", p.ServerCPU, p.CPUs), client})
	}
	return Block{Tables: []Table{t}, Notes: []string{
		"The load is open loop: request i is due at i/rate. \"waiting for etcd\" is the mean number of requests in flight " +
			"(throughput x mean service time): near the clients, etcd set the pace; well under it with a throughput short of the rate, the client could not send on time.",
	}}
}

func datascaleBlock(runs []Run) Block {
	t := Table{Title: "resident memory (process_resident_memory_bytes)", Header: []string{"", "keys", "bytes per key-value", "before", "after", "growth", "per key"}}
	for _, r := range runs {
		d := r.Result.Datascale
		t.Rows = append(t.Rows, []string{r.Label, fmt.Sprint(d.Keys), fmt.Sprint(d.KVSize), units.Bytes(d.RSSBefore), units.Bytes(d.RSSAfter),
			units.Bytes(d.Growth), units.Bytes(d.PerKey)})
	}
	return Block{Tables: []Table{t}}
}
