// Package lab starts the etcd a run measures when none is given: embedded
// members (in this process, or one child process per member, `etcdperf
// server`) on loopback ports with their data under a directory of the
// storage under test, and the faults of the fault lab on any of them: a
// slow fsync (a slow view of the data dir), a CPU limit, a cap on its
// writes, a volume of its own capped below it, a slow peer link.
//
// Commands reach etcd through a Target (Open): an external cluster given by
// endpoints (through package cluster), or embedded members that the Target
// owns and removes on Close, with every fault undone.
package lab
