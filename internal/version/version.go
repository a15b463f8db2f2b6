// Package version tells which etcdperf this is.
package version

import (
	"runtime/debug"
)

// Version is set at build time with
// -ldflags "-X github.com/etcdperf/etcdperf/internal/version.Version=v1.2.3".
var Version = ""

// String returns the version of this binary: the linker-set value, else the
// module version `go install` recorded, else "devel".
func String() string {
	if Version != "" {
		return Version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "devel"
}
