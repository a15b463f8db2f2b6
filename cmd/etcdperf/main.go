// Command etcdperf tells whether storage and an etcd cluster are fast
// enough for etcd, and why not.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/etcdperf/etcdperf/internal/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		// After the first signal the command cleans up and stops; a second
		// one ends the process at once.
		<-ctx.Done()
		stop()
	}()
	err := cli.NewRoot().ExecuteContext(ctx)
	os.Exit(cli.ExitCode(err, os.Stderr))
}
