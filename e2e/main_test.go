// Package e2e runs the etcdperf binary as a user would: exit codes, files
// left behind, signals, permissions.
package e2e

import (
	"os"
	"strings"
	"testing"

	"github.com/etcdperf/etcdperf/internal/testutil"
)

func TestMain(m *testing.M) {
	// etcdperf reads etcdctl's environment: a developer's ETCDCTL_ENDPOINTS
	// would send every run to their cluster. Tests set what they need.
	for _, kv := range os.Environ() {
		if name, _, _ := strings.Cut(kv, "="); strings.HasPrefix(name, "ETCDCTL_") {
			os.Unsetenv(name)
		}
	}
	code := m.Run()
	testutil.CleanupBinary()
	os.Exit(code)
}
