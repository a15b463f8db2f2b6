package version

import (
	"runtime/debug"
	"testing"
)

func TestDescribe(t *testing.T) {
	build := func(version string, settings ...string) *debug.BuildInfo {
		bi := &debug.BuildInfo{Main: debug.Module{Path: "github.com/etcdperf/etcdperf", Version: version}}
		for i := 0; i+1 < len(settings); i += 2 {
			bi.Settings = append(bi.Settings, debug.BuildSetting{Key: settings[i], Value: settings[i+1]})
		}
		return bi
	}
	for _, c := range []struct {
		name string
		bi   *debug.BuildInfo
		want string
	}{
		{"go install of a release", build("v1.2.3"), "v1.2.3"},
		{"go build in a checkout", build("(devel)", "vcs", "git", "vcs.revision", "2857356fac9b421163edf3a907e2c2f34f72c2b2", "vcs.modified", "false"),
			"devel, commit 2857356fac9b"},
		{"with local changes", build("v0.0.0-20261124001636-2857356fac9b+dirty", "vcs.revision", "2857356fac9b421163edf3a907e2c2f34f72c2b2", "vcs.modified", "true"),
			"v0.0.0-20261124001636-2857356fac9b+dirty, commit 2857356fac9b with uncommitted changes"},
		{"no git information", build("(devel)"),
			"devel, commit unknown: built without git information"},
	} {
		if got := describe(c.bi, true); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
	Version = "v9.9.9"
	defer func() { Version = "" }()
	if got := describe(build("(devel)"), true); got != "v9.9.9" {
		t.Errorf("linker-set version: %q", got)
	}
}
