package cli

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/etcdperf/etcdperf/internal/check"
	"github.com/etcdperf/etcdperf/internal/cluster"
	"github.com/etcdperf/etcdperf/internal/discover"
	"github.com/etcdperf/etcdperf/internal/kubescale"
	"github.com/etcdperf/etcdperf/internal/pipeline"
	"github.com/etcdperf/etcdperf/internal/scale"
)

func newScaleCmd() *cobra.Command {
	var (
		objects    string
		sizes      []string
		limits     []string
		mf         *memberFlags
		conn       *connFlags
		out        *outputFlag
		o          pipeline.ScaleOptions
		totalWrite int64
		ko         pipeline.KubeScaleOptions
		kubeNode   bool
		kubeRoot   string
	)
	cmd := &cobra.Command{
		Use:   "scale",
		Short: "Grow Kubernetes-shaped data in etcd step by step and record what grows with it",
		Long: `Grow etcd's data the way a Kubernetes cluster grows it, in --steps equal steps
up to --objects, and record after each step what published growth tests
(OpenStack performance-docs' etcd health tests, 430 nodes and about 40,000
pods) plotted against the number of objects: the database size (total and in
use), each member's resident memory, etcd's WAL fsync and backend commit p99 over the
step, the put p99, the time to list every resource whole, the watch event lag,
proposals pending, and the slow applies etcd counted and logged.

Keys follow kube-apiserver's layout under the run's prefix:
  <prefix>registry/pods/<namespace>/<name>           (and configmaps, secrets)
  <prefix>registry/services/specs/<namespace>/<name>
  <prefix>registry/events/<namespace>/<name>         with a lease (--event-ttl)
  <prefix>registry/minions/<name>                    (nodes)
Values start with the "k8s\x00" magic of the API server's protobuf objects;
their sizes are drawn from a distribution per kind (pods lognormal around
3 KiB, services around 1 KiB, events around 768 B; --value-size changes it):
  4KiB  uniform:1KiB:8KiB  normal:4KiB:1KiB  lognormal:3KiB:0.5 (median, sigma)

While each step writes, a control plane's background traffic runs, bounded
and paced: --update-rate status updates per second of existing objects, a
watch per resource (as the API server's watch cache), and --list-interval
paged lists of each resource. After the writes every resource is listed whole
--lists times, in pages of --page-limit at one revision, as a controller's
relist does.

The run stops after a step in which a request failed, or a figure broke a
limit: the put p99 put_p99 (1s, Kubernetes' SLO for writes), a whole list
list_all_p99 (30s, its SLO for lists), the database db_quota_used (80% of
etcd's backend quota, or what the next step would take it to). The finding
says at how many objects. --limit changes the limits; etcd's WAL fsync and
backend commit over the run are judged as in bench.

Without --endpoints (nor ETCDCTL_ENDPOINTS) it starts an embedded etcd in
its own process (so that its memory is its own) with its data in a new
folder inside --data-dir, and removes it afterwards. Against a cluster it writes only under --prefix
(default /etcdperf/<run id>/), refuses a prefix that holds keys, and deletes
its keys and revokes its leases at the end, also on Ctrl-C.

Through Kubernetes' API server (--kubeconfig, or --server and --token) the
same steps create real objects with client-go (pods, services, configmaps,
secrets, leases, events; default ` + kubescale.DefaultObjects + `)
in a namespace of its own, etcdperf-<run id>, deleted at the end and on
Ctrl-C. While a step creates, kubelets' traffic runs (pod status updates,
node lease renewals every 10s) with a controller's paged list of the pods and
watches; after it, objects are read one by one and each resource is listed.
Each call's latency is measured by etcdperf and taken from the API server's
apiserver_request_duration_seconds, and judged by Kubernetes' SLO on API call
latency (sig-scalability/slos/api_call_latency.md: mutating calls p99 <= 1s
per resource and verb, reads of one object <= 1s, lists of a namespace <= 5s;
cluster-wide lists are not made). With etcd's --endpoints, etcd's WAL fsync
and backend commit over each step say whether etcd explains a broken SLO.
Every call keeps to client-go's --qps and --burst (its wait is not counted).
The run's user needs to create those objects in a new namespace, and get on
/metrics for the API server's own histograms.`,
		Example: `  # 5000 pods in 5 steps on an embedded etcd in the current directory
  etcdperf scale --objects pods=5000 --steps 5

  # A large growth test on the disk under test, as CSV (one row per step)
  etcdperf scale --objects pods=100000,services=10000 --steps 20 --data-dir /mnt/ssd -o steps.csv

  # Larger pods, smaller services, against a test cluster
  etcdperf scale --endpoints 10.0.0.1:2379 --objects pods=20k,services=2k \
    --value-size pods=lognormal:8KiB:0.6 --value-size services=600

  # Stop as soon as a put p99 reaches 50ms; the report with the charts
  etcdperf scale --limit put_p99=50ms --html scale.html

  # Through the API server of a test cluster, with its etcd's figures beside
  etcdperf scale --kubeconfig ~/.kube/config --objects pods=5000,leases=500 \
    --endpoints https://10.0.0.1:2379 --cacert ca.crt --cert client.crt --key client.key`,
		Args: noArgs,
	}
	conn = addConnFlags(cmd)
	out = addOutputFlag(cmd)
	fl := cmd.Flags()
	fl.StringVar(&objects, "objects", scale.DefaultObjects, "objects to grow to, kind=count,... (kinds: "+strings.Join(scale.KindNames(), ", ")+"; 100k, 1m accepted)")
	fl.IntVar(&o.Steps, "steps", scale.DefaultSteps, "steps to grow in; etcd's figures are recorded after each (through the API server: 5 unless given)")
	fl.StringArrayVar(&sizes, "value-size", nil, "value size distribution for every kind (DIST) or one (KIND=DIST): 4KiB, uniform:1KiB:8KiB, normal:4KiB:1KiB, lognormal:3KiB:0.5 (repeatable)")
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
	mf = addMemberFlags(cmd)
	fl.BoolVar(&o.Target.KeepData, "keep-data", false, "embedded etcd: keep its data dir and logs")
	fl.StringArrayVar(&limits, "limit", nil, "override a limit: NAME=VALUE[,WARN], e.g. put_p99=50ms, list_all_p99=10s, db_quota_used=50%, api_mutating_p99=500ms (repeatable)")
	fl.StringVar(&ko.Conn.Kubeconfig, "kubeconfig", "", "through Kubernetes' API server: its kubeconfig file (the current context, or --context)")
	fl.StringVar(&ko.Conn.Context, "context", "", "with --kubeconfig: the context to use")
	fl.StringVar(&ko.Conn.Server, "server", "", "through Kubernetes' API server: its URL (with --token; overrides the kubeconfig's)")
	fl.StringVar(&ko.Conn.Token, "token", "", "with --server: a bearer token")
	fl.StringVar(&ko.Conn.CAFile, "certificate-authority", "", "with --server: the CA file that signed the API server's certificate")
	fl.BoolVar(&ko.Conn.Insecure, "kube-insecure-skip-tls-verify", false, "with --server or --kubeconfig: do not verify the API server's certificate (testing only)")
	fl.Float64Var(&ko.QPS, "qps", kubescale.DefaultQPS, "through the API server: client-go's queries per second for every call of the run")
	fl.IntVar(&ko.Burst, "burst", kubescale.DefaultBurst, "through the API server: client-go's burst")
	fl.DurationVar(&ko.LeaseRenew, "lease-renew", kubescale.DefaultLeaseRenew, "through the API server: how often each lease is renewed, as a kubelet renews its node's")
	fl.BoolVar(&kubeNode, "node", false, "through the API server: read the etcd that runs on this node (found as etcdperf discover finds it) beside the calls, in place of --endpoints")
	fl.StringVar(&kubeRoot, "root", "/", "with --node, read the node's files under this directory")
	fl.IntVar(&ko.Gets, "gets", kubescale.DefaultGets, "through the API server: reads of single objects of each resource after each step")

	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		sinks, err := out.sinks()
		if err != nil {
			return err
		}
		fl := cmd.Flags()
		if ko.Conn.Given() || fl.Changed("token") || fl.Changed("context") {
			return runKubeScale(cmd, sinks, conn, &ko, objects, limits, kubeNode, kubeRoot)
		}
		for _, f := range []string{"qps", "burst", "gets", "lease-renew", "certificate-authority", "kube-insecure-skip-tls-verify", "node", "root"} {
			if fl.Changed(f) {
				return usageError("--%s applies through the API server: give --kubeconfig or --server", f)
			}
		}
		if o.Counts, err = scale.ParseObjects(objects); err != nil {
			return usageError("%v", err)
		}
		if err := scale.ApplySizes(o.Counts, sizes); err != nil {
			return usageError("%v", err)
		}
		if o.Conns < 1 {
			return usageError("--conns must be at least 1, got %d", o.Conns)
		}
		if o.PageLimit < 1 {
			return usageError("--page-limit must be at least 1, got %d", o.PageLimit)
		}
		copts, err := conn.options(cmd)
		if err != nil {
			return err
		}
		o.Target.Conn = copts
		if len(copts.Endpoints) > 0 {
			for _, f := range []string{"data-dir", "keep-data"} {
				if fl.Changed(f) {
					return embeddedOnly("--"+f, copts)
				}
			}
		}
		if err := mf.options(cmd, copts, &o.Target); err != nil {
			return err
		}
		o.Target.Separate = true
		if o.Prefix != "" && !strings.HasSuffix(o.Prefix, "/") {
			o.Prefix += "/"
		}
		if err := o.Validate(); err != nil {
			return usageError("%v", err)
		}
		if o.Criteria, err = check.Override(check.Table, limits); err != nil {
			return usageError("%v", err)
		}
		for _, c := range o.Counts {
			totalWrite += c.N
		}
		conn.announceLoad(cmd, fmt.Sprintf("%d Kubernetes-shaped objects written in steps, read back in pages and watched", totalWrite))
		cluster.QuietGRPC()
		prog := &scale.Progress{}
		o.Progress = prog
		stop := startProgress(cmd, 0, func(el time.Duration) string {
			s := prog.Step.Load()
			if s == 0 {
				if len(copts.Endpoints) == 0 {
					return "starting the embedded etcd..."
				}
				return "connecting to etcd..."
			}
			return fmt.Sprintf("step %d/%d: %s", s, o.Steps, countProgress(prog.Puts.Done(), totalWrite, el, 0))
		})
		res, runErr := pipeline.Scale(cmd.Context(), o)
		stop()
		return finish(cmd, sinks, res, runErr)
	}
	return cmd
}

// runKubeScale is `etcdperf scale` through Kubernetes' API server.
func runKubeScale(cmd *cobra.Command, sinks []sink, conn *connFlags, ko *pipeline.KubeScaleOptions, objects string, limits []string, node bool, root string) error {
	fl := cmd.Flags()
	for _, f := range []string{"value-size", "conns", "rate", "prefix", "data-dir", "keep-data", "event-ttl", "members", "fault"} {
		if fl.Changed(f) {
			return usageError("--%s does not apply through the API server (--kubeconfig, --server)", f)
		}
	}
	var err error
	if (fl.Changed("qps") && ko.QPS <= 0) || (fl.Changed("burst") && ko.Burst < 1) {
		return usageError("--qps must be over 0 and --burst at least 1, got %g and %d", ko.QPS, ko.Burst)
	}
	if !fl.Changed("objects") {
		objects = kubescale.DefaultObjects
	}
	if ko.Counts, err = kubescale.ParseObjects(objects); err != nil {
		return usageError("%v", err)
	}
	ko.Steps, _ = fl.GetInt("steps")
	if !fl.Changed("steps") {
		ko.Steps = kubescale.DefaultSteps
	}
	ko.Clients, _ = fl.GetInt("clients")
	if !fl.Changed("clients") {
		ko.Clients = kubescale.DefaultClients
	}
	ko.UpdateRate, _ = fl.GetFloat64("update-rate")
	if !fl.Changed("update-rate") {
		ko.UpdateRate = kubescale.DefaultUpdateRate
	}
	ko.PageLimit, _ = fl.GetInt64("page-limit")
	ko.Lists, _ = fl.GetInt("lists")
	ko.ListInterval, _ = fl.GetDuration("list-interval")
	if ko.Criteria, err = check.Override(check.Table, limits); err != nil {
		return usageError("%v", err)
	}
	copts, err := conn.options(cmd)
	if err != nil {
		return err
	}
	if fl.Changed("root") && !node {
		return usageError("--root is for --node: etcdperf scale --kubeconfig ... --node --root %s", root)
	}
	if node {
		n, err := discover.Resolve(root, copts)
		if err != nil {
			return usageError("--node: %v", err)
		}
		copts = n.Conn
		if !quiet(cmd) {
			fmt.Fprintf(cmd.ErrOrStderr(), "etcdperf: reading etcd %s at %s beside the API server's calls\n", n.Name(), strings.Join(copts.Endpoints, ","))
		}
	}
	ko.Etcd.Conn = copts
	ko.Defaults()
	if err := ko.Validate(); err != nil {
		return usageError("%v", err)
	}
	var total int64
	for _, c := range ko.Counts {
		total += c.N
	}
	cluster.QuietGRPC()
	prog := &kubescale.Progress{}
	ko.Progress = prog
	stop := startProgress(cmd, 0, func(el time.Duration) string {
		s := prog.Step.Load()
		if s == 0 {
			return "connecting to the API server..."
		}
		return fmt.Sprintf("step %d/%d: %s", s, ko.Steps, countProgress(prog.Created.Load(), total, el, 0))
	})
	res, runErr := pipeline.KubeScale(cmd.Context(), *ko)
	stop()
	return finish(cmd, sinks, res, runErr)
}
