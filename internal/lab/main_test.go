package lab

import (
	"fmt"
	"os"
	"testing"
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
	if err := ServeArgs(os.Args[1:], os.Stdout); err != nil {
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
