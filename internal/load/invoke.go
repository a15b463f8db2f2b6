package load

import (
	"context"
	"crypto/tls"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"

	"github.com/etcdperf/etcdperf/internal/grpcwire"
)

// Conn is one connection of the load.
type Conn struct {
	// Client is etcd's client on this connection: watch-latency and
	// lease-keepalive use it, and so do requests that are too large for the
	// lean path.
	Client *clientv3.Client
	// Addr, when set, lets put, range and txn requests speak gRPC over
	// HTTP/2 to this host:port directly (the lean path, package
	// grpcwire), over TLS with the TLS configuration when it is not nil.
	// Leave it empty when etcd needs an auth token.
	Addr string
	TLS  *tls.Config
}

// invoker sends one unary request.
type invoker interface {
	invoke(ctx context.Context, method string, req, resp proto.Message) error
}

// grpcInvoker goes through etcd's client connection.
type grpcInvoker struct{ cc *grpc.ClientConn }

func (g grpcInvoker) invoke(ctx context.Context, method string, req, resp proto.Message) error {
	return g.cc.Invoke(ctx, method, req, resp, callOpts...)
}

// leanInvoker is one worker's lean path, and etcd's client for the
// requests too large for it.
type leanInvoker struct {
	caller   *grpcwire.Caller
	fallback grpcInvoker
}

func (l leanInvoker) invoke(ctx context.Context, method string, req, resp proto.Message) error {
	err := l.caller.Call(ctx, method, req)
	if err == grpcwire.ErrTooLarge {
		return l.fallback.invoke(ctx, method, req, resp)
	}
	return err
}

// leanMethods are the methods the lean path carries.
var leanMethods = []string{pb.KV_Put_FullMethodName, pb.KV_Range_FullMethodName, pb.KV_Txn_FullMethodName}
