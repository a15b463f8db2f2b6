package scale

import (
	"context"
	"fmt"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/etcdperf/etcdperf/internal/load"
)

// DefaultPageLimit is the page size of a list, as kube-apiserver's
// clients page theirs (client-go's pager and kubectl ask for 500).
const DefaultPageLimit = 500

// List is one list of a whole resource, page by page.
type List struct {
	Pages int
	Keys  int64
	Bytes int64
	// Took is the whole list; SlowestPage its slowest request.
	Took, SlowestPage time.Duration
}

// ListAll lists every key under prefix the way kube-apiserver serves a
// paged list from etcd: the first page is a linearizable range with a
// limit, the next ones continue after the last key at the first page's
// revision. Each page is bounded by timeout.
func ListAll(ctx context.Context, kv clientv3.KV, prefix string, limit int64, timeout time.Duration) (List, error) {
	var l List
	end := load.PrefixEnd(prefix)
	key := prefix
	var rev int64
	start := time.Now()
	for {
		opts := []clientv3.OpOption{clientv3.WithRange(end), clientv3.WithLimit(limit)}
		if rev > 0 {
			opts = append(opts, clientv3.WithRev(rev))
		}
		pctx, cancel := context.WithTimeout(ctx, timeout)
		t0 := time.Now()
		r, err := kv.Get(pctx, key, opts...)
		took := time.Since(t0)
		cancel()
		if err != nil {
			l.Took = time.Since(start)
			return l, fmt.Errorf("list %s (page %d): %w", prefix, l.Pages+1, err)
		}
		l.Pages++
		l.SlowestPage = max(l.SlowestPage, took)
		if rev == 0 {
			rev = r.Header.Revision
		}
		for _, item := range r.Kvs {
			l.Bytes += int64(len(item.Key) + len(item.Value))
		}
		l.Keys += int64(len(r.Kvs))
		if !r.More || len(r.Kvs) == 0 {
			break
		}
		key = string(r.Kvs[len(r.Kvs)-1].Key) + "\x00"
	}
	l.Took = time.Since(start)
	return l, nil
}
