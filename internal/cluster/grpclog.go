package cluster

import (
	"io"
	"sync"
	"sync/atomic"

	"google.golang.org/grpc/grpclog"
)

var (
	quietOnce sync.Once
	logOut    atomic.Pointer[writerBox]
)

type writerBox struct{ w io.Writer }

// switchWriter writes to the current target of GRPCLogTo.
type switchWriter struct{}

func (switchWriter) Write(p []byte) (int, error) {
	if b := logOut.Load(); b != nil && b.w != nil {
		return b.w.Write(p)
	}
	return len(p), nil
}

// QuietGRPC keeps gRPC's logger off the terminal: its messages are dropped
// until GRPCLogTo gives them a file. gRPC wants this done before it is used,
// so commands call it first; Connect and the embedded members call it too.
func QuietGRPC() {
	quietOnce.Do(func() {
		w := switchWriter{}
		grpclog.SetLoggerV2(grpclog.NewLoggerV2(w, w, w))
	})
}

// GRPCLogTo sends gRPC's log messages to w (nil drops them).
func GRPCLogTo(w io.Writer) {
	QuietGRPC()
	logOut.Store(&writerBox{w: w})
}
