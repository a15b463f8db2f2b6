// Package e2e runs the etcdperf binary as a user would: exit codes, files
// left behind, signals, permissions.
package e2e

import (
	"os"
	"testing"

	"github.com/etcdperf/etcdperf/internal/testutil"
)

func TestMain(m *testing.M) { os.Exit(testutil.Main(m)) }
