package version

import (
	"debug/elf"
	"runtime/debug"
	"strings"
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

// A dynamically linked program (the system's shell) is said to be one,
// with the loader and libraries it needs; a file that is not ELF is an
// error, so that Linking falls back on the build's settings. The static
// case is e2e's TestStaticBinary, on the binary built as a node needs it.
func TestLinkingOf(t *testing.T) {
	const sh = "/bin/sh"
	f, err := elf.Open(sh)
	if err != nil {
		t.Skipf("skipped: %s is not an ELF file to read: %v", sh, err)
	}
	var interp bool
	for _, p := range f.Progs {
		interp = interp || p.Type == elf.PT_INTERP
	}
	f.Close()
	if !interp {
		t.Skipf("skipped: %s is linked statically here, no dynamic program to look at", sh)
	}
	got, err := linkingOf(sh)
	if err != nil || !strings.HasPrefix(got, "dynamically linked, needs ") || !strings.Contains(got, "libc") ||
		!strings.Contains(got, "/ld-") || !strings.HasSuffix(got, ": CGO_ENABLED=0 go build makes a static one") {
		t.Errorf("%s: %q, %v", sh, got, err)
	}
	if got, err := linkingOf("version_test.go"); err == nil {
		t.Errorf("a Go source file read as ELF: %q", got)
	}
}
