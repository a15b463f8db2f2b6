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
	bi, ok := debug.ReadBuildInfo()
	return versionOf(bi, ok)
}

func versionOf(bi *debug.BuildInfo, ok bool) string {
	if Version != "" {
		return Version
	}
	if ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "devel"
}

// Describe says which etcdperf this is, for `etcdperf version`: its version
// and the commit it was built from, as go build records it (vcs.revision,
// and vcs.modified for a tree with changes not committed).
func Describe() string {
	bi, ok := debug.ReadBuildInfo()
	return describe(bi, ok)
}

func describe(bi *debug.BuildInfo, ok bool) string {
	v := versionOf(bi, ok)
	var rev string
	modified := false
	if ok {
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				modified = s.Value == "true"
			}
		}
	}
	switch {
	case rev != "":
		if len(rev) > 12 {
			rev = rev[:12]
		}
		v += ", commit " + rev
		if modified {
			v += " with uncommitted changes"
		}
	case v == "devel":
		// go build outside a git checkout (or with -buildvcs=false, or in a
		// git worktree, which go does not stamp) records no commit.
		v += ", commit unknown: built without git information"
	}
	return v
}
