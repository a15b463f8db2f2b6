package cli

import (
	"github.com/spf13/cobra"

	"github.com/etcdperf/etcdperf/internal/cluster"
	"github.com/etcdperf/etcdperf/internal/slowfs"
)

// newServerCmd is `etcdperf server`: one embedded etcd member in the
// foreground. etcdperf starts its members this way (--members 3); it is
// hidden from the command list but documented, since it is also a handy
// throw-away etcd (e.g. on tmpfs for a comparison).
func newServerCmd() *cobra.Command {
	var cfg cluster.MemberConfig
	cmd := &cobra.Command{
		Use:    "server",
		Short:  "Run one embedded etcd member in the foreground (used for --members)",
		Hidden: true,
		Long: `Run one embedded etcd member (the etcd built into etcdperf) until SIGTERM or
Ctrl-C. It prints "` + cluster.ReadyLine + ` URL" on stdout once it serves clients.
etcd's log goes to --log-file, never to the terminal. The data dir is left in
place: remove it when done.

etcdperf bench --members N runs N of these as child processes, each with
--exit-with-parent so that none outlives etcdperf.

--slow-fsync 15ms runs etcd on a slow disk on purpose, to reproduce what a
slow disk does to etcd and to the controllers that use it: etcd's files live
in DATA-DIR/real, and etcd's data dir is DATA-DIR/slow, a view of them mounted
by 'etcdperf slowdisk' (a child process: FUSE served from inside etcd's process
can deadlock on bbolt's memory map) in which every fsync and fdatasync takes
that much longer. The view is unmounted when the member stops, also when it is
killed. It needs root and /dev/fuse. About 15ms fails etcd's WAL fsync limit
(10ms); about 100ms and more with 3 members gives "apply request took too
long" and "failed to send out heartbeat on time".`,
		Example: `  # A throw-away single-member etcd on tmpfs, for comparisons
  etcdperf server --data-dir /dev/shm/etcd --listen-client-url http://127.0.0.1:2379 \
    --listen-peer-url http://127.0.0.1:2380 --log-file /dev/shm/etcd.log

  # An etcd on a disk whose fsyncs take 15ms more: point your controller at it
  etcdperf server --data-dir /tmp/slow-etcd --slow-fsync 15ms \
    --listen-client-url http://127.0.0.1:2379 --listen-peer-url http://127.0.0.1:2380`,
		Args: noArgs,
	}
	cluster.BindMemberFlags(cmd.Flags(), &cfg)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		if cfg.DataDir == "" {
			return usageError("--data-dir is required")
		}
		if err := (slowfs.Config{FsyncDelay: cfg.SlowFsync}).Validate(); err != nil {
			return usageError("--slow-fsync: %v", err)
		}
		if cfg.SlowFsync > 0 {
			if err := cluster.SlowDiskSupported(); err != nil {
				return usageError("--slow-fsync: %v", err)
			}
		}
		cluster.QuietGRPC()
		return cluster.ServeMember(cmd.Context(), cfg, cmd.OutOrStdout())
	}
	return cmd
}
