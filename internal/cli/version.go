package cli

import (
	"fmt"
	"runtime"

	"github.com/spf13/cobra"

	"github.com/etcdperf/etcdperf/internal/version"
)

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print etcdperf's version, the commit it was built from, and whether it is static",
		Long: `Print etcdperf's version, the commit it was built from, the Go version and
platform, and how the binary is linked: "static" (no dynamic loader, no
shared library: it runs on any Linux node of its architecture, whatever its C
library, so it can be copied there as is), or the libraries it needs there.
CGO_ENABLED=0 go build -o etcdperf ./cmd/etcdperf makes a static one.`,
		Example: `  # Which etcdperf, and can it be copied to a node as is? e.g.
  # etcdperf v1.0.0, commit 1a2b3c4d5e6f (go1.26.0, linux/amd64, static)
  etcdperf version`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			build := fmt.Sprintf("%s, %s/%s", runtime.Version(), runtime.GOOS, runtime.GOARCH)
			// static: the binary runs on any Linux node of its
			// architecture (scp it there); else what it needs there.
			if l := version.Linking(); l != "" {
				build += ", " + l
			}
			_, err := fmt.Fprintf(cmd.OutOrStdout(), "etcdperf %s (%s)\n", version.Describe(), build)
			return err
		},
	}
}
