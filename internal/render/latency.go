package render

import (
	"github.com/etcdperf/etcdperf/internal/result"
	"github.com/etcdperf/etcdperf/internal/units"
)

// LatencyValue prints one quantile of l. A quantile of a Prometheus
// histogram at or below its lowest bucket reads "<= 1ms": etcd's histogram
// only says that it was below that bound, not by how much.
func LatencyValue(l result.Latency, v float64) string {
	return units.Quantile(v, l.Resolution, l.Bucketed)
}
