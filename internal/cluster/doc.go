// Package cluster is the one place that knows how to reach etcd: it
// connects to endpoints with etcdctl's options (TLS, auth, timeouts) and
// explains why a connection failed, discovers the members and the leader
// with their client and /metrics URLs, and starts embedded etcd members
// (in this process, or one child process per member) on loopback ports with
// their data under a directory of the storage under test.
//
// Commands reach etcd through a Target (Open): an external cluster given by
// endpoints, or embedded members that the Target owns and removes on Close.
//
// The package prints nothing: etcd's and gRPC's logs go to a file or are
// dropped (QuietGRPC), and every failure is an error that names the
// endpoint or directory and says what to do.
package cluster
