// Package version tells which etcdperf this is.
package version

import (
	"debug/elf"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"strings"
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

// Linking says how this binary is linked, for `etcdperf version`: "static"
// when it needs no dynamic loader and no shared library, so that it runs on
// any Linux node of its architecture whatever its C library, else what it
// needs. It reads the running executable's ELF program headers and dynamic
// section (/proc/self/exe), which is what the kernel and the loader see:
// the build's CGO_ENABLED setting only says whether cgo was on, and a build
// with cgo on may still link statically (-tags netgo,osusergo, or an
// external static link). Where the executable cannot be read (not ELF, not
// readable), it falls back on that setting, and says so.
func Linking() string {
	if s, err := linkingOf("/proc/self/exe"); err == nil {
		return s
	}
	if exe, err := os.Executable(); err == nil {
		if s, err := linkingOf(exe); err == nil {
			return s
		}
	}
	if runtime.GOOS != "linux" {
		return ""
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	for _, s := range bi.Settings {
		if s.Key == "CGO_ENABLED" {
			if s.Value == "0" {
				return "static (built with CGO_ENABLED=0)"
			}
			return "built with cgo, may need the C library: " + staticHint
		}
	}
	return ""
}

const staticHint = "CGO_ENABLED=0 go build makes a static one"

// linkingOf is Linking for the ELF file at path.
func linkingOf(path string) (string, error) {
	f, err := elf.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	var needs []string
	for _, p := range f.Progs {
		if p.Type != elf.PT_INTERP {
			continue
		}
		b, err := io.ReadAll(io.LimitReader(p.Open(), 4096))
		if err != nil {
			return "", fmt.Errorf("%s: its interpreter: %w", path, err)
		}
		needs = append(needs, strings.TrimRight(string(b), "\x00"))
	}
	libs, err := f.ImportedLibraries()
	if err != nil {
		return "", fmt.Errorf("%s: its shared libraries: %w", path, err)
	}
	if len(needs) == 0 && len(libs) == 0 {
		return "static", nil
	}
	return "dynamically linked, needs " + strings.Join(append(libs, needs...), " ") + ": " + staticHint, nil
}
