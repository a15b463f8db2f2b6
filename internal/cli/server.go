package cli

import (
	"github.com/spf13/cobra"

	"github.com/etcdperf/etcdperf/internal/cluster"
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
--exit-with-parent so that none outlives etcdperf.`,
		Example: `  # A throw-away single-member etcd on tmpfs, for comparisons
  etcdperf server --data-dir /dev/shm/etcd --listen-client-url http://127.0.0.1:2379 \
    --listen-peer-url http://127.0.0.1:2380 --log-file /dev/shm/etcd.log`,
		Args: noArgs,
	}
	cluster.BindMemberFlags(cmd.Flags(), &cfg)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		if cfg.DataDir == "" {
			return usageError("--data-dir is required")
		}
		cluster.QuietGRPC()
		return cluster.ServeMember(cmd.Context(), cfg, cmd.OutOrStdout())
	}
	return cmd
}
