package cluster

import "testing"

// MemberCommand is testServerCommand, for the tests of package
// cluster_test (those that need packages that import this one).
func MemberCommand(t *testing.T) []string { return testServerCommand(t) }
