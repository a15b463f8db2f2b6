package cli

import "github.com/etcdperf/etcdperf/internal/kubescale"

// scaleLong is scale's help.
const scaleLong = `Grow etcd's data the way a Kubernetes cluster grows it, in --steps equal steps
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
/metrics for the API server's own histograms.`

// scaleExample is scale's examples.
const scaleExample = `  # 5000 pods in 5 steps on an embedded etcd in the current directory
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
    --endpoints https://10.0.0.1:2379 --cacert ca.crt --cert client.crt --key client.key`
