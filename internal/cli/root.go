// Package cli holds one file per etcdperf command: flags become option
// structs that are handed to a package. No measuring or judging happens here.
package cli

import (
	"github.com/spf13/cobra"
)

// NewRoot returns the etcdperf command with all its subcommands.
func NewRoot() *cobra.Command {
	root := &cobra.Command{
		Use:   "etcdperf",
		Short: "Is this storage, and this etcd cluster, fast enough for etcd?",
		Long: `etcdperf measures what makes etcd fail with "request timed out", "apply request
took too long" or "failed to send out heartbeat on time": the storage's fdatasync
latency, etcd's own latencies under load, and its metrics and logs. It gives a
verdict with the evidence and what to change.

Results go to stdout, progress to stderr (a line every few seconds when
stderr is not a terminal; --quiet silences it). A run that ends early says
"Incomplete" and gives no verdict.

Exit codes: 0 pass (or warn), 1 a check or the verdict failed, 2 bad usage or
the run could not be carried out.`,
		Example: `  # The main job: is the storage under the current directory fast enough for
  # etcd, and if not, is it the disk, the CPUs or the client? (about a minute)
  etcdperf doctor

  # Is the disk under /var/lib/etcd fast enough for etcd's WAL?
  etcdperf disk --dir /var/lib/etcd

  # The same with the real fio, to compare
  etcdperf disk --dir /var/lib/etcd --engine fio`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	addQuietFlag(root)
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return usageError("%v (see '%s --help')", err, c.CommandPath())
	})
	root.AddCommand(newVersionCmd(), newDiskCmd(), newSlowdiskCmd())
	root.AddCommand(newReportCmd(), newCompareCmd())
	root.AddCommand(newPromCmd())
	root.AddCommand(newLogsCmd())
	root.AddCommand(newK8sCmd())
	root.AddCommand(newBenchCmd(), newServerCmd())
	root.AddCommand(newScaleCmd())
	root.AddCommand(newCheckCmd(), newDoctorCmd())
	root.AddCommand(newMetricsCmd())
	root.AddCommand(newDiscoverCmd())
	root.AddCommand(newDBCmd())
	return root
}

// noArgs rejects positional arguments with a usage error.
func noArgs(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		return usageError("%s takes no arguments, got %q (see '%s --help')", cmd.CommandPath(), args, cmd.CommandPath())
	}
	return nil
}
