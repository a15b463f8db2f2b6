package kubescale

import (
	"fmt"
	"strings"

	"github.com/etcdperf/etcdperf/internal/loadrun"
	"github.com/etcdperf/etcdperf/internal/result"
)

// Params are the run's options in a Result's params (the kubeconfig and
// server, never a token).
func (o Options) Params() *result.KubeScaleParams {
	var objects []string
	for _, c := range o.Counts {
		objects = append(objects, fmt.Sprintf("%s=%d", c.Resource, c.N))
	}
	return &result.KubeScaleParams{
		Objects:      strings.Join(objects, ","),
		Steps:        o.Steps,
		Clients:      o.Clients,
		QPS:          o.QPS,
		Burst:        o.Burst,
		Namespace:    o.Namespace,
		UpdateRate:   o.UpdateRate,
		LeaseRenew:   o.LeaseRenew.Seconds(),
		PageLimit:    o.PageLimit,
		Lists:        o.Lists,
		Gets:         o.Gets,
		ListInterval: o.ListInterval.Seconds(),
		Kubeconfig:   o.Conn.Kubeconfig,
		Server:       o.Conn.Server, // never the token
		ConnParams:   loadrun.ConnParams(o.Etcd.Conn),
	}
}
