package cli

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/etcdperf/etcdperf/internal/cluster"
	"github.com/etcdperf/etcdperf/internal/lab"
)

// memberStopBound is how long a member may take to stop and clean up
// after its first signal.
const memberStopBound = 30 * time.Second

// newServerCmd is `etcdperf server`: one embedded etcd member in the
// foreground. etcdperf starts its members this way (--members 3); it is
// hidden from the command list but documented, since it is also a handy
// throw-away etcd (e.g. on tmpfs for a comparison).
func newServerCmd() *cobra.Command {
	var cfg lab.MemberConfig
	cmd := &cobra.Command{
		Use:     "server",
		Short:   "Run one embedded etcd member in the foreground (used for --members)",
		Hidden:  true,
		Long:    serverLong,
		Example: serverExample,
		Args:    noArgs,
	}
	lab.BindMemberFlags(cmd.Flags(), &cfg)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		if cfg.DataDir == "" {
			return usageError("--data-dir is required")
		}
		if err := cfg.Fault.Validate(); err != nil {
			return usageError("--%v", err)
		}
		if err := cfg.Fault.ValidateDir(cfg.DataDir); err != nil {
			return usageError("--%v", err)
		}
		if cfg.VolumeLimit().Any() {
			if err := lab.CheckVolumeDir(cfg.DataDir); err != nil {
				return usageError("--data-dir %v", err)
			}
		}
		// The first SIGTERM or Ctrl-C stops the member, which then cleans
		// up: stops etcd, leaves its cgroups, closes its slow link,
		// unmounts its slow view. The signals that follow must not cut
		// that short: a member whose parent dies gets SIGTERM once for
		// each of the parent's threads as they end (PR_SET_PDEATHSIG
		// follows the thread that started it). A member still cleaning
		// up a while after its first signal exits anyway.
		sigs := make(chan os.Signal, 16)
		signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
		defer signal.Stop(sigs)
		go func() {
			<-sigs
			time.Sleep(memberStopBound)
			fmt.Fprintf(cmd.ErrOrStderr(), "etcdperf: member %s did not stop within %s of its signal: exiting\n", cfg.Name, memberStopBound)
			os.Exit(ExitError)
		}()
		cluster.QuietGRPC()
		return lab.ServeMember(cmd.Context(), cfg, cmd.OutOrStdout())
	}
	return cmd
}
