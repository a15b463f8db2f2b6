package lab

import "testing"

// MemberCommand is testServerCommand, for the tests of package lab_test
// (those that need packages that import this one).
func MemberCommand(t *testing.T) []string { return testServerCommand(t) }
