package cli

// doctorLong is doctor's help.
const doctorLong = `Judge the storage under the current directory (or each --data-dir) for etcd,
in about a minute per location (most of it the capacity sweep):

 1. the disk probe: etcd's WAL pattern (2300-byte writes, fdatasync after
    each) for up to --disk-runtime;
 2. an embedded etcd, in a process of its own, with its data on that storage,
    under etcdctl check perf's load (--load, default s: 50 clients, 150 puts/s
    of 1 KiB) for --duration;
 3. etcd's own metrics of the run (WAL fsync, backend commit, leader changes,
    CPU), the device's utilisation and latency (/proc/diskstats) and the CPUs
    (/proc/stat), and etcdperf's own CPU (the client's);

then a capacity sweep (--capacity, on by default): the offered write rate
raised step by step (check perf's m, l and xl rates and 4,000 between,
--capacity-step each) until a step breaks one of etcd's limits, to say how
many puts/s the storage carries and what breaks first: the disk's latency,
the volume's IOPS cap, etcd's CPU or the load generator. With the sweep it
also rehearses a defragmentation there (a 64 MiB bbolt database copied as
etcd defragments, in files of its own, removed at once) and states the stall
a defragmentation of a database of --db-size (default: etcd's 2 GiB quota)
would cause, against a Kubernetes controller's 10s lease renew deadline.

Then a verdict per location: is it fast enough, with how much headroom (fsync
p99 against 10ms, throughput against the rate, how busy the device was), and
what limits etcd there: the disk, the CPU, or the load generator itself.
Findings carry their evidence and what to change.

Several --data-dir are measured one after the other and shown side by side
with the ratios between them (a RAM disk against a disk in one command); a
tmpfs is flagged as fast but not durable. --noise measures again while a
neighbour writes bulk data on the same device (as image pulls and builds do).
--simulate-fsync-delay 15ms runs everything on a slow view of the directory
(etcdperf slowdisk; root and /dev/fuse) to show what a slow disk does.
--endpoints judges an existing cluster instead, under load (the disk probe
runs only on a --data-dir given with --endpoints); keys stay under
/etcdperf/<run id>/ and are deleted at the end. Only a cluster named with
--endpoints is loaded: etcdctl's ETCDCTL_ENDPOINTS, often exported on
control-plane nodes, is ignored (and said so) unless --node is given. For each member that runs on this host (an endpoint on a
loopback address) doctor also reads its process: its threads' wait for a CPU,
its cgroup's CPU throttling, the device under its WAL; that is what tells a
starved CPU from a slow disk. Of a member elsewhere it says "its disk or its
CPU" and how to tell. --members N and --fault make a faulty embedded cluster
on purpose (see etcdperf server --help).

--node is the on-call command on a control-plane node: it finds the etcd
member that runs there as etcdperf discover does (kubeadm, k3s, RKE2,
OpenShift, systemd; --root reads the node's files under another directory)
and reaches it with the node's endpoints and certificates (unless --endpoints,
--cacert, --cert, --key or ETCDCTL_* say otherwise). Without load, since the
member is in production: for --duration it watches the member's /metrics (WAL
fsync, backend commit, leader changes, peer round trips), its process (CPU,
wait for a CPU, throttling, the device under its WAL) and this host's CPUs and
device. The member's own WAL fsyncs are the disk probe: when it made at least
300 during the window (--limit member_fsyncs_enough), nothing is written
beside it. Only a member too idle to judge gets a probe of ours, after the
window, in a folder of its own beside the data dir on the same file system
(in the data dir beside member/ when the data dir is a disk of its own, never
inside member/): paced (--disk-rate, 50 fdatasyncs/s) for at most
--disk-runtime, and stopped at once when the member's WAL fsync p99 over the
last 3 seconds passes 10ms or the device is over 90% busy (--limit
wal_fsync_p99, probe_device_busy). --disk-runtime or --disk-rate given by name
runs the probe even on a busy member (still paced and guarded); --disk-runtime 0 never
runs it. The same holds for --endpoints with --data-dir. Then it reads the member's log written
during the run (kubelet's pod log found on the node, its systemd unit's
journal, or --log-file) as etcdperf logs does. The stall a
defragmentation of the member would cause comes from its database size and
its own past defragmentations, without writing anything. --load s adds check perf's
load, as with --endpoints. It ends with etcd's flags computed from what it
measured (the timers from the round trips, the quota from the database and
the defragmentation's stall, the auto-compaction from the compactions seen),
each against the value the node's configuration sets; --tuning-out FILE
writes the changes as the node's layout takes them (a kubeadm
ClusterConfiguration, k3s' config.yaml, a systemd environment file or
etcd's config file). Nothing is changed on the node.

The Result is written to etcdperf-report.json in the current directory
(--report FILE, --no-report); -o and --html as every command. Everything the
run creates (keys, etcd's data, probe and noise files, mounts) is removed,
also on Ctrl-C, and an interrupted run still writes its partial Result.
Exit codes: 0 pass or warn, 1 a location failed, 2 the run could not be done.`

// doctorExample is doctor's examples.
const doctorExample = `  # Is the storage under the current directory fast enough for etcd?
  etcdperf doctor

  # A disk against a RAM disk, side by side
  etcdperf doctor --data-dir /var/lib/etcd-test --data-dir /dev/shm/etcd-test

  # The same disk while a neighbour writes bulk data on it
  etcdperf doctor --data-dir /var/lib/etcd-test --noise

  # What a disk 15ms slower per fsync does to etcd (root, /dev/fuse)
  etcdperf doctor --simulate-fsync-delay 15ms

  # How much write load does this volume carry, against a cluster whose
  # peak is 1,200 writes/s (a warning under 2x headroom)?
  etcdperf doctor --data-dir /var/lib/etcd-test --demand 1200

  # The same, against the cluster as its Prometheus saw it over 7 days: its
  # peak write demand, its database's size and its mean write
  etcdperf doctor --data-dir /var/lib/etcd-test --demand-from http://prometheus:9090 \
    --db-size from-prometheus --value-size from-prometheus

  # Rehearse a slow link: 3 members, the second behind 200ms more per round trip
  etcdperf doctor --members 3 --fault 2:peer-latency=200ms --duration 20s

  # On call, on a control-plane node: judge the etcd member running here,
  # without load (its metrics, its process, its device; no write beside a
  # busy member)
  sudo etcdperf doctor --node

  # The same, from a copy of a node's files, over 20 seconds
  etcdperf doctor --node --root /mnt/node1 --duration 20s

  # And the flags to change, as a kubeadm ClusterConfiguration to merge
  sudo etcdperf doctor --node --tuning-out etcd-flags.yaml

  # An existing cluster, profile m, with its disk on this host probed too
  etcdperf doctor --endpoints=10.0.0.1:2379 --load m --data-dir /var/lib/etcd`
