package loadrun

import (
	"context"
	"errors"
	"fmt"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/etcdperf/etcdperf/internal/cluster"
	"github.com/etcdperf/etcdperf/internal/load"
)

// ErrNoPermission is returned when etcd's auth does not let the user read
// and write under the run's prefix.
var ErrNoPermission = errors.New("no permission on the key prefix")

// explainPrefixErr says what to do when the run's prefix cannot be used.
func explainPrefixErr(prefix, user string, err error) error {
	if !permissionDenied(err) {
		return fmt.Errorf("look for keys under the prefix %q: %w", prefix, err)
	}
	who := "the user"
	if user != "" {
		who = fmt.Sprintf("user %q", user)
	}
	return fmt.Errorf("%w: %s may not read and write under %s (etcd: permission denied); grant its role readwrite on the prefix (etcdctl role grant-permission ROLE readwrite --prefix=true %s) or choose a --prefix it may use",
		ErrNoPermission, who, prefix, prefix)
}

func permissionDenied(err error) bool {
	return errors.Is(err, rpctypes.ErrPermissionDenied) ||
		rpctypes.ErrorDesc(err) == rpctypes.ErrorDesc(rpctypes.ErrGRPCPermissionDenied) ||
		status.Code(err) == codes.PermissionDenied
}

// checkWritable writes and deletes one key under the prefix before a load
// that writes, so that a role that may only read there fails at once with
// advice instead of failing every request of the run.
func checkWritable(ctx context.Context, c *cluster.Client, o Options) error {
	if o.Load.Workload == load.Range && o.Load.Prefill == 0 {
		return nil // reads only, maybe outside the prefix
	}
	ctx, cancel := context.WithTimeout(ctx, c.CommandTimeout())
	defer cancel()
	key := o.Load.Prefix + ".etcdperf-probe"
	_, err := c.Put(ctx, key, "")
	if err == nil {
		if _, err = c.Delete(ctx, key); err != nil {
			return fmt.Errorf("delete the key %s written to check that the prefix is writable (it is still there: etcdctl del %s): %w", key, key, err)
		}
		return nil
	}
	if permissionDenied(err) {
		return explainPrefixErr(o.Load.Prefix, o.Target.Conn.User, err)
	}
	return fmt.Errorf("write a first key under the prefix %s: %w", o.Load.Prefix, err)
}
