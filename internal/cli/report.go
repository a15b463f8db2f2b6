package cli

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/etcdperf/etcdperf/internal/report"
)

// defaultReportPage is where report writes the page without -o.
const defaultReportPage = "report.html"

func newReportCmd() *cobra.Command {
	var (
		force  bool
		pngDir string
	)
	cmd := &cobra.Command{
		Use:   "report RESULT.json...",
		Short: "Write one self-contained HTML page of Results: verdict, findings, charts, comparison",
		Long: `Write the Results of etcdperf commands (-o run.json) as one HTML page: the
verdict and findings with their evidence at the top, a summary table with one
column per run and ratios to the first, latency charts (percentile curves on a
log axis and histograms), throughput and p99 over time, etcd's own fsync and
commit quantiles, and each run's parameters and environment. Passwords and
tokens are never shown.

The page is self-contained: styles and SVG charts are inline and it loads
nothing from the network, so it opens on an air-gapped host or attached to a
ticket. Without -o it is written to report.html in the current directory,
never over an existing one (exit 2; name another with -o, or replace it with
--force); standard output gets the summary as text (the comparison table when
there are several runs).

A file may also be a log in which the Result was printed among other lines
(kubectl logs of a pod that ran etcdperf -o json), or hold several Results
(the logs of every pod of an 'etcdperf k8s manifest' Job: one run per node);
"-" reads standard input.`,
		Example: `  # The report of one run
  etcdperf disk --dir /var/lib/etcd -o disk.json
  etcdperf report disk.json -o disk.html

  # Two volumes side by side, with ratios to the first
  etcdperf report gp2.json gp3.json -o gp2-vs-gp3.html

  # The Results of every pod of a Job from 'etcdperf k8s manifest', one run each
  kubectl -n kube-system logs -l app.kubernetes.io/instance=etcdperf-disk --tail=-1 |
    etcdperf report - -o disks.html

  # The charts as PNG files, to paste into a ticket
  etcdperf report gp2.json gp3.json --png charts/`,
		Args: minArgs(1, "RESULT.json"),
	}
	out := addOutputFlag(cmd)
	fl := cmd.Flags()
	fl.StringVar(&pngDir, "png", "", "also write each chart as a PNG file into this directory (created if missing)")
	fl.BoolVar(&force, "force", false, "without -o, replace an existing "+defaultReportPage)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if len(out.values) == 0 && out.html == "" {
			// A page written by an earlier report is not replaced unasked.
			if _, err := os.Lstat(defaultReportPage); err == nil && !force {
				return usageError("%s already exists: name the page with -o FILE.html, or pass --force to replace it", defaultReportPage)
			}
			out.values = []string{defaultReportPage}
		}
		sinks, inputs, err := readInputs(cmd, out, args)
		if err != nil {
			return err
		}
		res := report.Combine(inputs)
		if pngDir != "" {
			paths, err := report.New(res).WritePNGs(pngDir)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "etcdperf: wrote %d charts to %s\n", len(paths), pngDir)
		}
		if err := writeOutputs(cmd.OutOrStdout(), sinks, res); err != nil {
			return err
		}
		for _, s := range sinks {
			if s.path != "" {
				fmt.Fprintf(cmd.ErrOrStderr(), "etcdperf: wrote %s\n", s.path)
			}
		}
		return nil
	}
	return cmd
}

// readInputs checks the -o values, then reads the Results the arguments
// name (files, logs, "-" for standard input).
func readInputs(cmd *cobra.Command, out *outputFlag, args []string) ([]sink, []report.Input, error) {
	sinks, err := out.sinks()
	if err != nil {
		return nil, nil, err
	}
	inputs, err := report.Load(args, cmd.InOrStdin())
	if err != nil {
		return nil, nil, usageError("%v", err)
	}
	return sinks, inputs, nil
}

// minArgs asks for at least n positional arguments, with a usage error
// that names them.
func minArgs(n int, what string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		switch {
		case len(args) >= n:
		case n == 1:
			return usageError("%s needs a %s argument (see '%s --help')", cmd.CommandPath(), what, cmd.CommandPath())
		default:
			return usageError("%s needs at least %d %s arguments (see '%s --help')", cmd.CommandPath(), n, what, cmd.CommandPath())
		}
		return nil
	}
}
