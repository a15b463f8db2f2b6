package e2e

import (
	"bufio"
	"context"
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/etcdperf/etcdperf/internal/testutil"
)

// The binary to copy to a node, built as the README's Install section
// builds it and as a release builds it (.github/workflows/release.yml): it
// is static (no dynamic loader, no shared library, so it runs whatever the
// node's C library), and `etcdperf version` says so. A default go build,
// which links the C library where a C compiler is present, is said to be
// dynamic, with what it needs.
func TestStaticBinary(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	t.Run("README", func(t *testing.T) {
		line := readmeStaticBuild(t, filepath.Join(root, "README.md"))
		bin := filepath.Join(t.TempDir(), "etcdperf")
		if !strings.Contains(line, " -o etcdperf ") {
			t.Fatalf("the README's build line writes no ./etcdperf: %s", line)
		}
		runBuild(t, root, strings.Replace(line, " -o etcdperf ", " -o "+bin+" ", 1), nil)
		assertStatic(t, bin)
		if v := runVersion(t, bin); !strings.HasSuffix(v, ", static)") {
			t.Errorf("version of the README's static build: %q", v)
		}
	})

	t.Run("release", func(t *testing.T) {
		build, release := releaseSteps(t, filepath.Join(root, ".github", "workflows", "release.yml"))
		// Both architectures, static, stamped with the tag, and their sums.
		for _, want := range []string{"for arch in amd64 arm64; do", "sha256sum etcdperf-linux-* > SHA256SUMS"} {
			if !strings.Contains(build, want) {
				t.Errorf("the build step has no %q:\n%s", want, build)
			}
		}
		for _, f := range []string{"dist/etcdperf-linux-amd64", "dist/etcdperf-linux-arm64", "dist/SHA256SUMS"} {
			if !strings.Contains(release, f) || !strings.Contains(release, "gh release create \"$GITHUB_REF_NAME\"") {
				t.Errorf("the release step does not publish %s:\n%s", f, release)
			}
		}
		var line string
		for _, l := range strings.Split(build, "\n") {
			if strings.Contains(l, "go build") {
				line = strings.TrimSpace(l)
			}
		}
		for _, want := range []string{"CGO_ENABLED=0 ", "GOOS=linux ", "GOARCH=$arch ", "-X github.com/etcdperf/etcdperf/internal/version.Version=$GITHUB_REF_NAME", "-o dist/etcdperf-linux-$arch "} {
			if !strings.Contains(line, want) {
				t.Fatalf("the release's go build line has no %q: %q", want, line)
			}
		}
		// This machine's architecture, as the workflow builds it.
		dir := t.TempDir()
		runBuild(t, root, strings.Replace(line, "-o dist/", "-o "+dir+"/", 1), []string{"arch=" + runtime.GOARCH, "GITHUB_REF_NAME=v9.9.9"})
		bin := filepath.Join(dir, "etcdperf-linux-"+runtime.GOARCH)
		assertStatic(t, bin)
		if v := runVersion(t, bin); !strings.HasPrefix(v, "etcdperf v9.9.9") || !strings.HasSuffix(v, ", static)") {
			t.Errorf("version of the release build: %q", v)
		}
	})

	t.Run("default build", func(t *testing.T) {
		bin := testutil.Binary(t)
		f, err := elf.Open(bin)
		if err != nil {
			t.Fatal(err)
		}
		interp := false
		for _, p := range f.Progs {
			interp = interp || p.Type == elf.PT_INTERP
		}
		f.Close()
		v := runVersion(t, bin)
		switch {
		case interp && !regexp.MustCompile(`, dynamically linked, needs \S*libc\S* .*: CGO_ENABLED=0 go build makes a static one\)$`).MatchString(v):
			t.Errorf("a dynamically linked build says %q", v)
		case !interp && !strings.HasSuffix(v, ", static)"):
			t.Errorf("a static build (no C compiler here) says %q", v)
		}
	})
}

// readmeStaticBuild is the README's one line that builds the static
// binary, without its comment.
func readmeStaticBuild(t *testing.T, path string) string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if l := sc.Text(); strings.HasPrefix(l, "CGO_ENABLED=0 go build ") {
			l, _, _ = strings.Cut(l, " #")
			lines = append(lines, strings.TrimSpace(l))
		}
	}
	if len(lines) != 1 {
		t.Fatalf("want one line starting with CGO_ENABLED=0 go build in the README, got %q", lines)
	}
	return lines[0]
}

// releaseSteps returns the scripts of the release workflow's binaries job
// that build the binaries and that publish them.
func releaseSteps(t *testing.T, path string) (build, release string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var wf struct {
		Jobs map[string]struct {
			Steps []struct {
				Run string `json:"run"`
			} `json:"steps"`
		} `json:"jobs"`
	}
	if err := yaml.Unmarshal(b, &wf); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	job, ok := wf.Jobs["binaries"]
	if !ok {
		t.Fatalf("%s has no binaries job", path)
	}
	for _, s := range job.Steps {
		switch {
		case strings.Contains(s.Run, "go build"):
			build = s.Run
		case strings.Contains(s.Run, "gh release create"):
			release = s.Run
		}
	}
	if build == "" || release == "" {
		t.Fatalf("%s: the binaries job has no go build step or no gh release create step", path)
	}
	return build, release
}

// runBuild runs a go build command line from the repository's root.
func runBuild(t *testing.T, root, line string, env []string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", "-c", line)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), env...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", line, err, out)
	}
}

// assertStatic checks that the ELF file at path is a static executable of
// this machine's architecture: no interpreter (the dynamic loader), no
// dynamic segment or section, no shared library.
func assertStatic(t *testing.T, path string) {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	machine := map[string]elf.Machine{"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64}[runtime.GOARCH]
	if machine != 0 && f.Machine != machine {
		t.Errorf("%s is for %v, not %s", path, f.Machine, runtime.GOARCH)
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP || p.Type == elf.PT_DYNAMIC {
			t.Errorf("%s has a %v program header: not static", path, p.Type)
		}
	}
	if f.Section(".dynamic") != nil || f.Section(".interp") != nil {
		t.Errorf("%s has a .dynamic or .interp section: not static", path)
	}
	if libs, err := f.ImportedLibraries(); err != nil || len(libs) > 0 {
		t.Errorf("%s links %v (%v): not static", path, libs, err)
	}
}

// runVersion is the one line `etcdperf version` prints.
func runVersion(t *testing.T, bin string) string {
	t.Helper()
	out, err := exec.Command(bin, "version").Output()
	if err != nil {
		t.Fatalf("%s version: %v", bin, err)
	}
	return strings.TrimSuffix(string(out), "\n")
}
