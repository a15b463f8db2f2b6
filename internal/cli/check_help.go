package cli

// checkLong is check's help.
const checkLong = `Run etcdctl check perf's load against etcd and judge it: each profile puts
256-byte keys with 1 KiB values from a number of clients at a fixed rate:

  s   50 clients,   150 puts/s      m   200 clients, 1000 puts/s
  l   500 clients, 8000 puts/s      xl 1000 clients, 15000 puts/s

etcdctl's criteria (throughput at least 90% of the rate, slowest request at
most 0.5s, standard deviation at most 0.1s, no failed request) come with the
request p99 and with etcd's own view of the same run, from its /metrics: WAL
fsync p99 under 10ms, backend commit p99 under 25ms, no leader change, no
failed proposal. Each prints as one line PASS|WARN|FAIL name: observed (limit);
--limit changes a limit. Exit 0 when all pass, 1 when one fails.

The load is open loop on an absolute schedule: request i is due at start +
i/rate, and latency runs from that time. etcdctl paces with a token bucket
of one token, which drops every token it is late for, so it often sends less
than the profile asks at l and xl (etcd issues #13455, #10609: FAIL at l,
PASS at xl). Here a throughput under the rate means that the clients were all
waiting for etcd, or that this machine could not send on time; the output
says which, and does not blame etcd for the second.

Without --endpoints (nor etcdctl's ETCDCTL_ENDPOINTS, read as etcdctl does
with the other ETCDCTL_ variables of these flags; a flag wins) it starts an
embedded etcd in a process of its own, with its data in a new folder inside
--data-dir (the storage under test), and removes it afterwards. Keys live under --prefix (default /etcdperf/<run id>/):
the run refuses a prefix that holds keys and deletes its keys at the end,
also on Ctrl-C.`

// checkExample is check's examples.
const checkExample = `  # etcdctl check perf --load=s against an embedded etcd on the current directory
  etcdperf check

  # A running cluster, profile m, as JSON
  etcdperf check --endpoints=10.0.0.1:2379,10.0.0.2:2379 --load m -o json

  # How many puts/s does this cluster carry, and what breaks first?
  etcdperf check --endpoints=10.0.0.1:2379 --capacity

  # A quick look: 10 seconds, and a stricter WAL fsync limit
  etcdperf check --duration 10s --limit wal_fsync_p99=5ms

  # Rehearse a fault: 3 members, the third limited to 0.05 CPU
  etcdperf check --members 3 --fault 3:cpu-limit=0.05 --duration 20s

  # Memory growth for 10,000 keys of 1 KiB (etcdctl check datascale)
  etcdperf check datascale --load s

  # etcdctl's spelling works too
  etcdperf check perf --load m`
