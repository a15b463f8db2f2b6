// Package memberproc follows the etcd member processes that run on this
// host over a run: each one's CPU time and wait for a CPU, its cgroup's CPU
// quota and throttling, its memory and its limit, the device under its
// write-ahead log and the cap on its writes. It reads /proc, /sys/fs/cgroup
// and /proc/diskstats (procstats, cgroup, hoststats).
package memberproc
