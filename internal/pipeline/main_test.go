package pipeline

import (
	"fmt"
	"os"
	"testing"

	"github.com/etcdperf/etcdperf/internal/lab"
)

// memberEnv makes the test binary act as `etcdperf server`, so that check,
// datascale and doctor run their embedded etcd in a process of its own
// without building etcdperf.
const memberEnv = "ETCDPERF_PIPELINE_TEST_AS_MEMBER"

func TestMain(m *testing.M) {
	if os.Getenv(memberEnv) == "1" {
		if err := lab.ServeArgs(os.Args[1:], os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// serverCommand runs one member process in the tests.
func serverCommand(t *testing.T) []string {
	t.Setenv(memberEnv, "1")
	return []string{os.Args[0]}
}
