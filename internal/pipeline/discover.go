package pipeline

import (
	"context"
	"fmt"
	"strings"

	"github.com/etcdperf/etcdperf/internal/discover"
	"github.com/etcdperf/etcdperf/internal/result"
)

// Discover finds the etcd that runs on the node whose files are under
// root, and tries whether anything listens at its client endpoints on
// this host. A bad root is an error; a node without etcd is a
// *NotFoundError. When nothing listens at the endpoints of any etcd found,
// the Result comes with a *NotListeningError.
func Discover(ctx context.Context, root string) (*result.Result, error) {
	res := result.New(result.KindDiscover)
	d, err := discover.Find(root)
	if err != nil {
		return nil, err
	}
	res.Params = &result.DiscoverParams{Root: d.Root}
	res.Discover = d
	if len(d.Found) == 0 {
		return nil, &discover.NotFoundError{D: d}
	}
	discover.CheckListeners(ctx, d)
	var srcs []string
	for _, f := range d.Found {
		srcs = append(srcs, f.Source)
	}
	runErr := discover.AllNotListening(d)
	switch {
	case runErr != nil && len(d.Found) == 1:
		res.Summary = fmt.Sprintf("etcd's configuration found (%s), but nothing listens at its client endpoints on this host", srcs[0])
	case runErr != nil:
		res.Summary = fmt.Sprintf("%d etcd configurations found (%s), but nothing listens at their client endpoints on this host", len(d.Found), strings.Join(srcs, ", "))
	case len(d.Found) == 1:
		res.Summary = fmt.Sprintf("1 etcd found (%s)", srcs[0])
	default:
		res.Summary = fmt.Sprintf("%d etcd configurations found (%s)", len(d.Found), strings.Join(srcs, ", "))
	}
	res.Finish()
	return res, runErr
}
