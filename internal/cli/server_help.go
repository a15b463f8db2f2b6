package cli

import "github.com/etcdperf/etcdperf/internal/lab"

// serverLong is server's help.
const serverLong = `Run one embedded etcd member (the etcd built into etcdperf) until SIGTERM or
Ctrl-C. It prints "` + lab.ReadyLine + ` URL" on stdout once it serves clients.
etcd's log goes to --log-file, never to the terminal. The data dir is left in
place: remove it when done.

etcdperf bench --members N runs N of these as child processes, each with
--exit-with-parent so that none outlives etcdperf.

--slow-fsync 15ms runs etcd on a slow disk on purpose, to reproduce what a
slow disk does to etcd and to the controllers that use it: etcd's files live
in DATA-DIR/real, and etcd's data dir is DATA-DIR/slow, a view of them mounted
by 'etcdperf slowdisk' (a child process: FUSE served from inside etcd's process
can deadlock on the memory map of etcd's database file, bbolt) in which
every fsync and fdatasync takes that much longer. The view is unmounted when the member stops, also when it is
killed. It needs root and /dev/fuse. About 15ms fails etcd's WAL fsync limit
(10ms); about 100ms and more with 3 members gives "apply request took too
long" and "failed to send out heartbeat on time".

--cpu-limit 0.1 starves the member of CPU on purpose: its process moves into a
CPU cgroup of its own whose quota is 0.1 CPU (cgroup v1 cpu.cfs_quota_us or v2
cpu.max, whichever holds the cpu controller), and back out when it stops. The
slow view's server, started first, keeps its CPU. etcd's WAL fsync histogram
then shows a slow fsync on a fast disk: the wait for a CPU after each one.

--peer-latency 200ms[,20ms] puts the member's peer port behind a slow link:
etcd listens for its peers on another loopback port, and a proxy on the peer
URL delivers every chunk each way 100ms (+-5ms) late, so that every round trip
of the other members to it takes 200ms (+-10ms) longer, as etcd's own
functional tests delay one member's peer port. It models latency, not loss.

--iops-limit 200 caps the member's writes on the disk of --data-dir at 200
operations per second, as a cloud volume's IOPS limit does; --write-bps-limit
10m caps them at 10 MiB/s, as its throughput limit does. Its process moves into
a group of its own of the blkio controller (cgroup v1
blkio.throttle.write_iops_device and write_bps_device) or of the io controller
(cgroup v2 io.max), whichever this host has, on the whole disk that holds
--data-dir (a partition's disk), and back out when it stops. A write that is
synced costs a few write operations: under a 200-IOPS cap etcd's WAL pattern
(2300-byte writes, an fdatasync each) does about 58 writes a second, fdatasync
p99 96ms. The cap sits above the disk: the disk's own figures (iostat,
/proc/diskstats) show it fast and idle while etcd waits; the group's counters
(blkio.throttle.io_serviced, io.stat) show the cap. It needs root and a data
dir on a disk (not tmpfs or overlay), and cannot go with --slow-fsync.

--volume-iops-limit 1500 caps the member's writes below its device instead, where a
cloud volume's cap sits: a new ext4 file system (no journal, whose commits a
kernel thread would write past the cap) on a loop device (direct I/O)
over a sparse 1 GiB file beside --data-dir is mounted on --data-dir (which must
be empty or missing), and the process moves into a blkio/io group whose writes
to the disk under that file are capped; --volume-write-bps-limit 10m caps its bytes
likewise. The member's own device, the loop device, then shows the writes
queued: utilisation high, await rising, IOPS flat; and no cgroup caps the
member's writes to it, so only the device shows the cap. The volume is
unmounted, the loop device detached and the file removed when the member
stops. It needs root, loop devices, mkfs.ext4 and a data dir on a disk, and
cannot go with --slow-fsync, --iops-limit or --write-bps-limit.

The same faults on members that etcdperf starts: --fault on bench, check,
doctor and scale (e.g. --members 3 --fault 3:cpu-limit=0.1, --fault
all:iops-limit=200, --fault 1:volume-iops=1500).`

// serverExample is server's examples.
const serverExample = `  # A throw-away single-member etcd on tmpfs, for comparisons
  etcdperf server --data-dir /dev/shm/etcd --listen-client-url http://127.0.0.1:2379 \
    --listen-peer-url http://127.0.0.1:2380 --log-file /dev/shm/etcd.log

  # An etcd on a disk whose fsyncs take 15ms more: point your controller at it
  etcdperf server --data-dir /tmp/slow-etcd --slow-fsync 15ms \
    --listen-client-url http://127.0.0.1:2379 --listen-peer-url http://127.0.0.1:2380

  # An etcd that may use a tenth of a CPU
  etcdperf server --data-dir /tmp/starved-etcd --cpu-limit 0.1 \
    --listen-client-url http://127.0.0.1:2379 --listen-peer-url http://127.0.0.1:2380

  # An etcd on a volume capped at 200 write IOPS and 10 MiB/s
  etcdperf server --data-dir /var/tmp/capped-etcd --iops-limit 200 --write-bps-limit 10m \
    --listen-client-url http://127.0.0.1:2379 --listen-peer-url http://127.0.0.1:2380

  # An etcd on a volume of its own capped at 1,500 write IOPS below it
  etcdperf server --data-dir /var/tmp/volume-etcd --volume-iops-limit 1500 \
    --listen-client-url http://127.0.0.1:2379 --listen-peer-url http://127.0.0.1:2380

  # The third member of a cluster behind a 200ms link (start the other two alike)
  etcdperf server --name m3 --data-dir /tmp/m3 --peer-latency 200ms \
    --listen-client-url http://127.0.0.1:2379 --listen-peer-url http://127.0.0.1:2380 \
    --initial-cluster m1=http://127.0.0.1:12380,m2=http://127.0.0.1:22380,m3=http://127.0.0.1:2380`
