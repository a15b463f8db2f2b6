// Package kubescale grows Kubernetes objects through a real API server,
// step by step, with the background traffic of a control plane, and
// measures the latency of every call as the API server's users see it
// (client-go) and as the API server itself records it
// (apiserver_request_duration_seconds), with etcd's own figures beside.
package kubescale

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/etcdperf/etcdperf/internal/cluster"
	"github.com/etcdperf/etcdperf/internal/lab"
	"github.com/etcdperf/etcdperf/internal/scale"
)

// Resources are the objects a run can grow, by the API's plural name.
var Resources = []string{"pods", "services", "configmaps", "secrets", "leases", "events"}

// DefaultObjects is --objects' default through an API server: a few
// thousand pods with their services, configuration and events, and the
// leases of a hundred nodes' kubelets.
const DefaultObjects = "pods=3000,services=300,configmaps=300,secrets=300,leases=100,events=3000"

// Count is one resource and the number of objects the run grows it to.
type Count struct {
	Resource string
	N        int64
}

// Options configure a density run through an API server.
type Options struct {
	// Conn reaches the API server.
	Conn Conn
	// Etcd, when it has endpoints, is the etcd behind the API server,
	// whose metrics are read after each step.
	Etcd lab.TargetOptions
	// Namespace is the run's own; default etcdperf-<run id>.
	Namespace string
	// Counts are the resources and how many objects of each the run
	// grows to, in Steps equal steps.
	Counts []Count
	Steps  int
	// Clients create the objects concurrently.
	Clients int
	// QPS and Burst are client-go's rate limit for every call of the run.
	QPS   float64
	Burst int
	// UpdateRate is the pod status updates per second during each step.
	UpdateRate float64
	// LeaseRenew is how often each lease is renewed (a kubelet renews its
	// node lease every 10s).
	LeaseRenew time.Duration
	// PageLimit is the page size of lists; Lists the whole lists of every
	// resource after each step's writes; ListInterval the pause between
	// the background lists of pods while a step writes (0: none).
	PageLimit    int64
	Lists        int
	ListInterval time.Duration
	// Gets is the number of single-object reads of each resource after
	// each step's writes.
	Gets int
	// CallTimeout bounds one call (the API server's own default is 60s).
	CallTimeout time.Duration
	// Progress, when not nil, follows the run.
	Progress *Progress
}

// Defaults of Options' zero values.
const (
	DefaultSteps       = 5
	DefaultClients     = 8
	DefaultQPS         = 100
	DefaultBurst       = 200
	DefaultPageLimit   = 500
	DefaultLists       = 3
	DefaultGets        = 20
	DefaultLeaseRenew  = 10 * time.Second
	DefaultUpdateRate  = 10
	DefaultCallTimeout = time.Minute
)

// Defaults fills the zero values of o.
func (o *Options) Defaults() {
	if o.Etcd.RunID == "" {
		o.Etcd.RunID = cluster.NewRunID()
	}
	if o.Namespace == "" {
		o.Namespace = "etcdperf-" + o.Etcd.RunID
	}
	if o.Steps == 0 {
		o.Steps = DefaultSteps
	}
	if o.Clients == 0 {
		o.Clients = DefaultClients
	}
	if o.QPS == 0 {
		o.QPS = DefaultQPS
	}
	if o.Burst == 0 {
		o.Burst = DefaultBurst
	}
	if o.PageLimit == 0 {
		o.PageLimit = DefaultPageLimit
	}
	if o.Lists == 0 {
		o.Lists = DefaultLists
	}
	if o.Gets == 0 {
		o.Gets = DefaultGets
	}
	if o.LeaseRenew == 0 {
		o.LeaseRenew = DefaultLeaseRenew
	}
	if o.CallTimeout == 0 {
		o.CallTimeout = DefaultCallTimeout
	}
}

// Validate checks the options before anything starts.
func (o *Options) Validate() error {
	switch {
	case len(o.Counts) == 0:
		return errors.New("--objects names no object")
	case o.Steps < 1:
		return fmt.Errorf("--steps must be at least 1, got %d", o.Steps)
	case o.Clients < 1:
		return fmt.Errorf("--clients must be at least 1, got %d", o.Clients)
	case o.QPS <= 0 || o.Burst < 1:
		return fmt.Errorf("--qps must be over 0 and --burst at least 1, got %g and %d", o.QPS, o.Burst)
	case o.UpdateRate < 0:
		return fmt.Errorf("--update-rate must not be negative, got %g", o.UpdateRate)
	case o.PageLimit < 1:
		return fmt.Errorf("--page-limit must be at least 1, got %d", o.PageLimit)
	case o.LeaseRenew < 0:
		return fmt.Errorf("--lease-renew must not be negative, got %s", o.LeaseRenew)
	case o.Lists < 0 || o.ListInterval < 0:
		return errors.New("--lists and --list-interval must not be negative")
	}
	for _, c := range o.Counts {
		if c.N < int64(o.Steps) {
			return fmt.Errorf("--objects %s=%d: fewer objects than --steps %d", c.Resource, c.N, o.Steps)
		}
	}
	if err := o.Conn.validate(); err != nil {
		return err
	}
	return nil
}

// ParseObjects reads --objects through an API server: resource=count,...
func ParseObjects(s string) ([]Count, error) {
	pairs, err := scale.ParsePairs(s, func(name string) error {
		if !slices.Contains(Resources, name) {
			return fmt.Errorf("--objects: %q cannot be grown through the API server (one of %s)", name, strings.Join(Resources, ", "))
		}
		return nil
	})
	var out []Count
	for _, p := range pairs {
		out = append(out, Count{Resource: p.Name, N: p.N})
	}
	return out, err
}
