package testutil

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
	buildOut  []byte
)

// Binary builds cmd/etcdperf once per test process and returns its path.
// The directory is world-readable so that tests may run it as an
// unprivileged user; call CleanupBinary from TestMain to remove it.
func Binary(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "etcdperf-bin-")
		if err != nil {
			buildErr = err
			return
		}
		if err := os.Chmod(dir, 0o755); err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "etcdperf")
		cmd := exec.Command("go", "build", "-o", binPath, "./cmd/etcdperf")
		cmd.Dir = moduleRoot()
		buildOut, buildErr = cmd.CombinedOutput()
	})
	if buildErr != nil {
		t.Fatalf("build etcdperf: %v\n%s", buildErr, buildOut)
	}
	return binPath
}

// Main runs a package's tests as a user would run etcdperf, without the
// etcdctl environment of the developer's shell (ETCDCTL_ENDPOINTS would
// send every run to their cluster: tests set what they need), and removes
// the binary Binary built.
func Main(m *testing.M) int {
	for _, kv := range os.Environ() {
		if name, _, _ := strings.Cut(kv, "="); strings.HasPrefix(name, "ETCDCTL_") {
			os.Unsetenv(name)
		}
	}
	code := m.Run()
	CleanupBinary()
	return code
}

// CleanupBinary removes the binary Binary built, if any.
func CleanupBinary() {
	if binPath != "" {
		os.RemoveAll(filepath.Dir(binPath))
	}
}

func moduleRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// Run is the outcome of running the binary.
type Run struct {
	// Stderr is what the binary wrote on stderr but its progress lines,
	// which are in Progress: a run that lasts over a second reports its
	// progress on a pipe (ProgressLine), and a test of its errors looks at
	// the error's line.
	Stdout, Stderr string
	Progress       []string
	Code           int
}

// ProgressLine matches the progress lines etcdperf writes on stderr when
// it is not a terminal: "etcdperf: [12s/1m0s] what it is doing".
var ProgressLine = regexp.MustCompile(`^etcdperf: \[[0-9hms]+(/[0-9hms]+)?\] \S`)

// splitProgress returns stderr without its progress lines, and them.
func splitProgress(stderr string) (rest string, progress []string) {
	var b strings.Builder
	for _, l := range strings.SplitAfter(stderr, "\n") {
		if ProgressLine.MatchString(l) {
			progress = append(progress, strings.TrimSuffix(l, "\n"))
			continue
		}
		b.WriteString(l)
	}
	return b.String(), progress
}

// RunBinary runs etcdperf with args, bounded by timeout, and returns its
// output and exit code. It fails the test when the binary cannot be started
// or does not finish in time.
func RunBinary(t testing.TB, timeout time.Duration, args ...string) Run {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, Binary(t), args...)
	return Wait(t, cmd, ctx)
}

// Wait runs an already prepared command and collects its outcome.
func Wait(t testing.TB, cmd *exec.Cmd, ctx context.Context) Run {
	t.Helper()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if ctx != nil && ctx.Err() != nil {
		t.Fatalf("%v did not finish in time\nstderr: %s", cmd.Args, stderr.String())
	}
	code := 0
	if err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			t.Fatalf("run %v: %v", cmd.Args, err)
		}
		code = ee.ExitCode()
	}
	rest, progress := splitProgress(stderr.String())
	return Run{Stdout: stdout.String(), Stderr: rest, Progress: progress, Code: code}
}
