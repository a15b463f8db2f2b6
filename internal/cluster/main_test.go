package cluster

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"testing"

	"github.com/spf13/pflag"
)

// memberEnv makes the test binary act as `etcdperf server`, so that the
// multi-member tests run real member processes without building etcdperf.
const memberEnv = "ETCDPERF_TEST_AS_MEMBER"

func TestMain(m *testing.M) {
	if os.Getenv(memberEnv) == "1" {
		os.Exit(serveForTest())
	}
	os.Exit(m.Run())
}

func serveForTest() int {
	var cfg MemberConfig
	fs := pflag.NewFlagSet("server", pflag.ContinueOnError)
	BindMemberFlags(fs, &cfg)
	if err := fs.Parse(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	if err := ServeMember(ctx, cfg, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// testServerCommand is the command that runs one member in the tests.
func testServerCommand(t *testing.T) []string {
	t.Setenv(memberEnv, "1")
	return []string{os.Args[0]}
}
