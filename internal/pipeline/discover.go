package pipeline

import (
	"fmt"
	"strings"

	"github.com/etcdperf/etcdperf/internal/discover"
	"github.com/etcdperf/etcdperf/internal/result"
)

// Discover finds the etcd that runs on the node whose files are under
// root. A bad root is an error; a node without etcd is a *NotFoundError.
func Discover(root string) (*result.Result, error) {
	res := result.New(result.KindDiscover)
	d, err := discover.Find(root)
	if err != nil {
		return nil, err
	}
	res.Params = map[string]any{"root": d.Root}
	res.Discover = d
	if len(d.Found) == 0 {
		return nil, &discover.NotFoundError{D: d}
	}
	var srcs []string
	for _, f := range d.Found {
		srcs = append(srcs, f.Source)
	}
	if len(d.Found) == 1 {
		res.Summary = fmt.Sprintf("1 etcd found (%s)", srcs[0])
	} else {
		res.Summary = fmt.Sprintf("%d etcd configurations found (%s)", len(d.Found), strings.Join(srcs, ", "))
	}
	res.Finish()
	return res, nil
}
