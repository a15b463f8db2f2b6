package cli

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/etcdperf/etcdperf/internal/cluster"
	"github.com/etcdperf/etcdperf/internal/discover"
	"github.com/etcdperf/etcdperf/internal/kubescale"
	"github.com/etcdperf/etcdperf/internal/limits"
	"github.com/etcdperf/etcdperf/internal/pipeline"
	"github.com/etcdperf/etcdperf/internal/scale"
)

func newScaleCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:     "scale",
		Short:   "Grow Kubernetes-shaped data in etcd step by step and record what grows with it",
		Long:    scaleLong,
		Example: scaleExample,
		Args:    noArgs,
	}
	f := addScaleFlags(cmd)
	cmd.RunE = completeRun(f.out, f.complete, f.run)
	return cmd
}

// scaleFlags are scale's flags as given: o holds the options that flags
// set as they are, of either way (etcd itself, or through the API server
// in o.Kube).
type scaleFlags struct {
	conn      *connFlags
	out       *outputFlag
	members   *memberFlags
	objects   string
	sizes     []string
	overrides []string
	o         pipeline.ScaleOptions
	kubeNode  bool
	kubeRoot  string
}

func addScaleFlags(cmd *cobra.Command) *scaleFlags {
	f := &scaleFlags{conn: addConnFlags(cmd), out: addOutputFlag(cmd)}
	o, ko := &f.o, &f.o.Kube
	fl := cmd.Flags()
	fl.StringVar(&f.objects, "objects", scale.DefaultObjects, "objects to grow to, kind=count,... (kinds: "+strings.Join(scale.KindNames(), ", ")+"; 100k, 1m accepted)")
	fl.IntVar(&o.Steps, "steps", scale.DefaultSteps, "steps to grow in; etcd's figures are recorded after each (through the API server: 5 unless given)")
	fl.StringArrayVar(&f.sizes, "value-size", nil, "value size distribution for every kind (DIST) or one (KIND=DIST): 4KiB, uniform:1KiB:8KiB, normal:4KiB:1KiB, lognormal:3KiB:0.5 (repeatable)")
	fl.IntVar(&o.Clients, "clients", scale.DefaultClients, "concurrent writers of the objects (through the API server: 8 unless given)")
	fl.IntVar(&o.Conns, "conns", 1, "gRPC connections the writers share")
	fl.Float64Var(&o.Rate, "rate", 0, "objects written per second, on that schedule whatever etcd's latency (0: as fast as the writers go)")
	fl.Float64Var(&o.UpdateRate, "update-rate", 100, "status updates per second of existing objects during each step (0: none; through the API server: pod status PATCHes, 10 unless given)")
	fl.Int64Var(&o.PageLimit, "page-limit", scale.DefaultPageLimit, "keys per page of a list (the API server's limit)")
	fl.IntVar(&o.Lists, "lists", scale.DefaultLists, "lists of every resource, whole, after each step's writes")
	fl.DurationVar(&o.ListInterval, "list-interval", 5*time.Second, "pause between the background lists of each resource while a step writes (0: none)")
	fl.DurationVar(&o.EventTTL, "event-ttl", scale.DefaultEventTTL, "TTL of the leases events are written with (kube-apiserver --event-ttl; 1h there, short here so that they expire during the run)")
	fl.StringVar(&o.Prefix, "prefix", "", "key prefix of the run (default /etcdperf/<run id>/); it must hold no key")
	fl.StringVar(&o.Target.DataDir, "data-dir", ".", "embedded etcd: directory on the storage under test that receives its data")
	f.members = addMemberFlags(cmd)
	fl.BoolVar(&o.Target.KeepData, "keep-data", false, "embedded etcd: keep its data dir and logs")
	fl.StringArrayVar(&f.overrides, "limit", nil, "override a limit: NAME=VALUE[,WARN], e.g. put_p99=50ms, list_all_p99=10s, db_quota_used=50%, api_mutating_p99=500ms (repeatable)")
	fl.StringVar(&ko.Conn.Kubeconfig, "kubeconfig", "", "through Kubernetes' API server: its kubeconfig file (the current context, or --context)")
	fl.StringVar(&ko.Conn.Context, "context", "", "with --kubeconfig: the context to use")
	fl.StringVar(&ko.Conn.Server, "server", "", "through Kubernetes' API server: its URL (with --token; overrides the kubeconfig's)")
	fl.StringVar(&ko.Conn.Token, "token", "", "with --server: a bearer token")
	fl.StringVar(&ko.Conn.CAFile, "certificate-authority", "", "with --server: the CA file that signed the API server's certificate")
	fl.BoolVar(&ko.Conn.Insecure, "kube-insecure-skip-tls-verify", false, "with --server or --kubeconfig: do not verify the API server's certificate (testing only)")
	fl.Float64Var(&ko.QPS, "qps", kubescale.DefaultQPS, "through the API server: client-go's queries per second for every call of the run")
	fl.IntVar(&ko.Burst, "burst", kubescale.DefaultBurst, "through the API server: client-go's burst")
	fl.DurationVar(&ko.LeaseRenew, "lease-renew", kubescale.DefaultLeaseRenew, "through the API server: how often each lease is renewed, as a kubelet renews its node's")
	fl.BoolVar(&f.kubeNode, "node", false, "through the API server: read the etcd that runs on this node (found as etcdperf discover finds it) beside the calls, in place of --endpoints")
	fl.StringVar(&f.kubeRoot, "root", "/", "with --node, read the node's files under this directory")
	fl.IntVar(&ko.Gets, "gets", kubescale.DefaultGets, "through the API server: reads of single objects of each resource after each step")
	return f
}

// kube says whether the run goes through Kubernetes' API server.
func (f *scaleFlags) kube(given func(string) bool) bool {
	return f.o.Kube.Conn.Given() || given("token") || given("context")
}

// validate checks the flags by their values alone (given says which were
// given by name) and sets the objects to write, either way: on etcd, the
// API server's flags are refused; through the API server, etcd's own.
func (f *scaleFlags) validate(given func(string) bool) error {
	if f.kube(given) {
		return f.validateKube(given)
	}
	for _, name := range []string{"qps", "burst", "gets", "lease-renew", "certificate-authority", "kube-insecure-skip-tls-verify", "node", "root"} {
		if given(name) {
			return usageError("--%s applies through the API server: give --kubeconfig or --server", name)
		}
	}
	var err error
	if f.o.Counts, err = scale.ParseObjects(f.objects); err != nil {
		return usageError("%v", err)
	}
	if err := scale.ApplySizes(f.o.Counts, f.sizes); err != nil {
		return usageError("%v", err)
	}
	switch {
	case f.o.Conns < 1:
		return usageError("--conns must be at least 1, got %d", f.o.Conns)
	case f.o.PageLimit < 1:
		return usageError("--page-limit must be at least 1, got %d", f.o.PageLimit)
	}
	return nil
}

// validateKube is validate through the API server: the flags shared with
// a run on etcd are copied to o.Kube, with the API server's defaults
// where they were not given by name.
func (f *scaleFlags) validateKube(given func(string) bool) error {
	ko := &f.o.Kube
	for _, name := range []string{"value-size", "conns", "rate", "prefix", "data-dir", "keep-data", "event-ttl", "members", "fault"} {
		if given(name) {
			return usageError("--%s does not apply through the API server (--kubeconfig, --server)", name)
		}
	}
	if (given("qps") && ko.QPS <= 0) || (given("burst") && ko.Burst < 1) {
		return usageError("--qps must be over 0 and --burst at least 1, got %g and %d", ko.QPS, ko.Burst)
	}
	if given("root") && !f.kubeNode {
		return usageError("--root is for --node: etcdperf scale --kubeconfig ... --node --root %s", f.kubeRoot)
	}
	objects := kubescale.DefaultObjects
	if given("objects") {
		objects = f.objects
	}
	var err error
	if ko.Counts, err = kubescale.ParseObjects(objects); err != nil {
		return usageError("%v", err)
	}
	ko.Steps, ko.Clients, ko.UpdateRate = kubescale.DefaultSteps, kubescale.DefaultClients, kubescale.DefaultUpdateRate
	if given("steps") {
		ko.Steps = f.o.Steps
	}
	if given("clients") {
		ko.Clients = f.o.Clients
	}
	if given("update-rate") {
		ko.UpdateRate = f.o.UpdateRate
	}
	ko.PageLimit, ko.Lists, ko.ListInterval = f.o.PageLimit, f.o.Lists, f.o.ListInterval
	return nil
}

// complete validates the flags and turns them into the run's options.
func (f *scaleFlags) complete(cmd *cobra.Command) (pipeline.ScaleOptions, error) {
	given := cmd.Flags().Changed
	if err := f.validate(given); err != nil {
		return pipeline.ScaleOptions{}, err
	}
	o := f.o
	copts, err := f.conn.options(cmd)
	if err != nil {
		return o, err
	}
	if o.Criteria, err = limits.Override(limits.Table, f.overrides); err != nil {
		return o, usageError("%v", err)
	}
	if f.kube(given) {
		return o, f.completeKube(cmd, &o, copts)
	}
	o.Target.Conn = copts
	if len(copts.Endpoints) > 0 {
		for _, name := range []string{"data-dir", "keep-data"} {
			if given(name) {
				return o, embeddedOnly("--"+name, copts)
			}
		}
	}
	if err := f.members.options(cmd, copts, &o.Target); err != nil {
		return o, err
	}
	o.Target.Separate = true
	if o.Prefix != "" && !strings.HasSuffix(o.Prefix, "/") {
		o.Prefix += "/"
	}
	if err := o.Validate(); err != nil {
		return o, usageError("%v", err)
	}
	return o, nil
}

// completeKube completes a run through the API server: the etcd behind it
// (--endpoints, or the one on this node with --node) is read beside the
// calls.
func (f *scaleFlags) completeKube(cmd *cobra.Command, o *pipeline.ScaleOptions, copts cluster.ConnOptions) error {
	if f.kubeNode {
		n, err := discover.Resolve(f.kubeRoot, copts)
		if err != nil {
			return usageError("--node: %v", err)
		}
		copts = n.Conn
		if !quiet(cmd) {
			fmt.Fprintf(cmd.ErrOrStderr(), "etcdperf: reading etcd %s at %s beside the API server's calls\n", n.Name(), strings.Join(copts.Endpoints, ","))
		}
	}
	o.Kube.Etcd.Conn = copts
	o.Kube.Defaults()
	if err := o.Kube.Validate(); err != nil {
		return usageError("%v", err)
	}
	return nil
}

// run grows the objects, either way, with a progress line.
func (f *scaleFlags) run(cmd *cobra.Command, sinks []sink, o pipeline.ScaleOptions) error {
	var total int64
	starting := "connecting to the API server..."
	if o.Through() {
		for _, c := range o.Kube.Counts {
			total += c.N
		}
	} else {
		for _, c := range o.Counts {
			total += c.N
		}
		f.conn.announceLoad(cmd, fmt.Sprintf("%d Kubernetes-shaped objects written in steps, read back in pages and watched", total))
		starting = "connecting to etcd..."
		if len(o.Target.Conn.Endpoints) == 0 {
			starting = "starting the embedded etcd..."
		}
	}
	steps := o.Steps
	if o.Through() {
		steps = o.Kube.Steps
	}
	cluster.QuietGRPC()
	prog := &pipeline.ScaleProgress{}
	o.Follow = prog
	stop := startProgress(cmd, 0, func(el time.Duration) string {
		s := prog.Step()
		if s == 0 {
			return starting
		}
		return fmt.Sprintf("step %d/%d: %s", s, steps, countProgress(prog.Objects(), total, el, 0))
	})
	res, runErr := pipeline.Scale(cmd.Context(), o)
	stop()
	return finish(cmd, sinks, res, runErr)
}
