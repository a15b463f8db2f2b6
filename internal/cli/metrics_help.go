package cli

// metricsLong is metrics's help.
const metricsLong = `Scrape the /metrics of every member of a running cluster at each --interval
and show, per member and interval, etcd's health signals: WAL fsync and backend
commit p99 (from the deltas of etcd's histograms), proposals pending and
failed, leader changes, whether it has a leader and is the leader, the
database size (total and in use), its RSS, the p99 round trip to its peers,
slow applies, slow read indexes and heartbeats the leader failed to send.

The members are found from --endpoints (one answering is enough; a member that
is down is what one watches for). /metrics is fetched with the same TLS as the
gRPC connection (--cacert, --cert, --key), and needs no user. A member that
does not answer a scrape is reported for that interval, and the run goes on.

Beside the first intervals it reads the cluster's own state, as etcdctl
endpoint status, alarm list and endpoint hashkv do: each member's ID, cluster
ID, version, the leader it sees, its raft term, committed and applied index
and revision (three status rounds a second apart), the alarms raised, five
serializable and five linearizable reads of the key "health" per member, and
every member's HashKV at one revision they all have. It names an endpoint of
another cluster, members that disagree on the leader, a member behind the
leader or behind in its applies, a member whose key-value store differs from
the others', linearizable reads that wait at the leader, mixed or known-bad
etcd versions and a raised alarm. It only reads (at most 20 requests per
member, each bounded by --command-timeout).

The p99s come from etcd's histograms, whose lowest bucket is 1ms: below it
etcd cannot tell, and the value reads "<= 1ms". Each interval, and the whole
run per member, is judged against the limits of 'etcdperf prom check'
(wal_fsync_p99 < 10ms, backend_commit_p99 < 25ms, no leader change, no failed
proposal; --limit changes them); a member without a leader, or one that
stopped answering, fails the verdict (exit 1).

In text mode each interval's lines are printed as it ends; -o json and -o csv
(one row per member and interval) are written at the end. Ctrl-C ends the run
early and still writes the Result of what was collected (exit 2 when a
--duration was cut short; with --duration 0, Ctrl-C is how the run ends).

After the verdict it says which of etcd's timers the round trips between
members call for (etcd tuning guide): --heartbeat-interval about the slowest
pair's mean round trip, --election-timeout 10x it. Nothing is changed on the
cluster. State the values in force with --current-flag to have them kept or
changed; a member whose CPU or disk was named is left out, as raising the
timers would only hide it.

There is no embedded etcd here: an etcd started for the run would have nothing
to say. 'etcdperf bench' reports etcd's metrics of its own load.`

// metricsExample is metrics's examples.
const metricsExample = `  # Watch a cluster for a minute, every 5s
  etcdperf metrics --endpoints 10.0.0.1:2379,10.0.0.2:2379,10.0.0.3:2379

  # With TLS (as etcdctl), every second until Ctrl-C, the series to a CSV file too
  etcdperf metrics --endpoints https://10.0.0.1:2379 --cacert ca.pem --cert client.pem --key client-key.pem \
    --interval 1s --duration 0 -o metrics.csv -o text

  # Members far apart: the timers for their round trips, against the values in force
  etcdperf metrics --endpoints 10.0.0.1:2379 --current-flag heartbeat-interval=100 --current-flag election-timeout=1000

  # A stricter fsync limit, the Result as JSON and the HTML report
  etcdperf metrics --endpoints 127.0.0.1:2379 --limit wal_fsync_p99=5ms -o run.json --html run.html`
