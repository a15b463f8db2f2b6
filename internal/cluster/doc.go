// Package cluster is the one place that knows how to reach etcd: it
// connects to endpoints with etcdctl's options (TLS, auth, timeouts) and
// explains why a connection failed (ConnError, NotEtcdError), and
// discovers the members and the leader with their client and /metrics
// URLs (Discover, Client.Members). The etcd members this program starts
// itself, and their faults, are package lab's.
//
// The package prints nothing: etcd's and gRPC's logs go to a file or are
// dropped (QuietGRPC), and every failure is an error that names the
// endpoint and says what to do.
package cluster
