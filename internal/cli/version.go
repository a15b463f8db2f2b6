package cli

import (
	"fmt"
	"runtime"

	"github.com/spf13/cobra"

	"github.com/etcdperf/etcdperf/internal/version"
)

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:     "version",
		Short:   "Print etcdperf's version",
		Example: "  etcdperf version",
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := fmt.Fprintf(cmd.OutOrStdout(), "etcdperf %s (%s, %s/%s)\n", version.Describe(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
			return err
		},
	}
}
