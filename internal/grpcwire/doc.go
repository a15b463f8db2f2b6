// Package grpcwire is a lean client of gRPC's unary calls: it speaks
// HTTP/2 (RFC 9113 framing, HPACK header blocks) and gRPC's wire protocol
// (length-prefixed messages, grpc-status and grpc-message trailers)
// directly, for the load generator's put, range and txn requests.
//
// Why not grpc-go for these: etcd's gRPC client spends most of a small
// request's CPU outside the request itself (a writer goroutine per
// connection that each request wakes, per-stream objects, interceptors,
// header encoding), so one client host would measure itself rather than
// etcd. Here a worker encodes its request into its own buffer and writes
// it with one system call, one reader goroutine per connection hands each
// response to its worker (none when the connection has one worker, which
// reads its own responses), and the request headers are encoded once per
// method: a request allocates nothing.
//
// What it does not do: streams (watch, lease keep-alive), auth tokens,
// compression, decoding responses (the outcome is the status; the
// message's framing is checked, not its content), and requests larger
// than one frame of the server's limits (Call returns ErrTooLarge). The
// caller (package load) sends those through etcd's client instead.
//
// Layout: frame.go (frame headers, padding, the request header block),
// status.go (a response's outcome as a gRPC status error), conn.go (one
// HTTP/2 connection: flow control, stream limits, GOAWAY, control frames
// sent along with the next request), link.go (Link and Caller: the
// connection of one endpoint, dialled again with a backoff when it
// breaks).
package grpcwire
