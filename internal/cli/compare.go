package cli

import (
	"github.com/spf13/cobra"

	"github.com/etcdperf/etcdperf/internal/report"
)

func newCompareCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "compare A.json B.json [...]",
		Short: "Compare Results in the terminal: ratios to the first and the better run on each line",
		Long: `Compare the Results of etcdperf commands (-o run.json) side by side: one column
per run, each value with its ratio to the first run, and on each line the run
that is better (lower latency and errors, higher throughput and IOPS) and by
how much it beats the worst. The same table heads the HTML report.

A file may also be a log in which a Result was printed among other lines, or
hold several Results; "-" reads standard input. -o json writes the
comparison as one Result holding the runs, which 'etcdperf report' reads.`,
		Example: `  # A disk against a RAM disk: how far is the disk from the best case?
  etcdperf disk --dir /var/lib/etcd -o disk.json
  etcdperf disk --dir /dev/shm -o ramdisk.json
  etcdperf compare disk.json ramdisk.json

  # Before and after a change, also as an HTML page
  etcdperf compare before.json after.json --html before-after.html`,
		// One file may hold several Results (a log of several runs), so one
		// argument may do; the count of runs is checked once they are read.
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usageError("%s needs two Results or more: two RESULT.json files, or one file that holds several (see '%s --help')", cmd.CommandPath(), cmd.CommandPath())
			}
			return nil
		},
	}
	out := addOutputFlag(cmd)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		sinks, inputs, err := readInputs(cmd, out, args)
		if err != nil {
			return err
		}
		res := report.Compare(inputs)
		if n := len(report.New(res).Runs); n < 2 {
			return usageError("compare needs at least two runs, and %v hold %d (see one with 'etcdperf report')", args, n)
		}
		return writeOutputs(cmd.OutOrStdout(), sinks, res)
	}
	return cmd
}
