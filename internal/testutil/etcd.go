package testutil

import (
	"context"
	"testing"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// EnableAuth turns on etcd's auth through cli: a root user, and user with
// password and read-write access to the keys under prefix only.
func EnableAuth(t testing.TB, cli *clientv3.Client, user, password, prefix string) {
	t.Helper()
	ctx := context.Background()
	for _, step := range []func() error{
		func() error { _, err := cli.UserAdd(ctx, "root", "rootpw"); return err },
		func() error { _, err := cli.UserGrantRole(ctx, "root", "root"); return err },
		func() error { _, err := cli.UserAdd(ctx, user, password); return err },
		func() error { _, err := cli.RoleAdd(ctx, user); return err },
		func() error {
			_, err := cli.RoleGrantPermission(ctx, user, prefix, clientv3.GetPrefixRangeEnd(prefix), clientv3.PermissionType(clientv3.PermReadWrite))
			return err
		},
		func() error { _, err := cli.UserGrantRole(ctx, user, user); return err },
		func() error { _, err := cli.AuthEnable(ctx); return err },
	} {
		if err := step(); err != nil {
			t.Fatalf("enable auth: %v", err)
		}
	}
}
