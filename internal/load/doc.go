// Package load generates etcd's client load the way etcd's benchmark tool
// does (its workloads and flag names), in constant memory: every worker
// records into its own HDR histograms, merged at the end, and a sampler
// folds one-second intervals into a series.
//
// With a rate the pacer is open-loop: request i is due at start + i/rate,
// and its latency is measured from that intended time, so a server that
// stalls cannot hide the requests it delayed (no coordinated omission);
// the service time, from the actual send, is reported beside it.
//
// The request loop is the hot path: request and response messages are
// reused per worker, and the load's own state (pacer, recorders) shares no
// lock or channel between workers per request. Put, range and txn go over
// the lean gRPC client of package grpcwire where the endpoint allows it
// (Dial decides), else, and for requests too large for it, through etcd's
// gRPC connection; watches and leases always use etcd's client.
//
// Design: Options (options.go) -> Dial (dial.go) -> Run (run.go) ->
// Stats (stats.go). The workloads are ops.go (unary requests, lease
// keep-alive) and watch.go (watch latency); a unary request reaches its
// connection through the invoker of invoke.go; pacer.go schedules the
// sends, recorder.go measures them, stall.go ends a run etcd stopped
// answering. What belongs here is generating and timing requests; what
// the numbers mean for etcd is package judge's, and the wire protocol
// package grpcwire's.
package load
