package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/etcdperf/etcdperf/internal/testutil"
)

// A file that -o, --html, --report or --sample-csv names and that could
// not be written is refused before the run: exit 2, one line that names it,
// nothing on stdout and nothing written, well before the run would have
// ended (check, doctor and disk measure for a minute or more by default).
func TestOutputTargetCheckedBeforeRun(t *testing.T) {
	dir := t.TempDir()
	notDir := filepath.Join(dir, "file")
	if err := os.WriteFile(notDir, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	targets := map[string]string{
		"missing directory": "/nonexistent-etcdperf/run",
		"not a directory":   filepath.Join(notDir, "run"),
		"a directory":       dir + "/sub",
	}
	for _, ext := range []string{".json", ".csv", ".html", ".yaml"} {
		if err := os.Mkdir(filepath.Join(dir, "sub"+ext), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	commands := []struct {
		name string
		args func(target string) []string
	}{
		{"check -o", func(p string) []string { return []string{"check", "--data-dir", dir, "-o", p + ".json"} }},
		{"check --html", func(p string) []string { return []string{"check", "--data-dir", dir, "--html", p + ".html"} }},
		{"doctor -o", func(p string) []string { return []string{"doctor", "--data-dir", dir, "--no-report", "-o", p + ".csv"} }},
		{"doctor --report", func(p string) []string { return []string{"doctor", "--data-dir", dir, "--report", p + ".json"} }},
		{"disk -o", func(p string) []string { return []string{"disk", "--dir", dir, "-o", p + ".json"} }},
		{"bench --sample-csv", func(p string) []string {
			return []string{"bench", "put", "--data-dir", dir, "--sample-csv", p + ".csv"}
		}},
		{"scale -o", func(p string) []string { return []string{"scale", "--data-dir", dir, "-o", p + ".json"} }},
		{"metrics -o", func(p string) []string { return []string{"metrics", "--endpoints", "127.0.0.1:1", "-o", p + ".json"} }},
		{"prom export -o", func(p string) []string {
			return []string{"prom", "export", "--url", "http://127.0.0.1:1", "-o", p + ".csv"}
		}},
		{"logs -o", func(p string) []string { return []string{"logs", realLog("zap-3.4-3.5.log"), "-o", p + ".json"} }},
		{"report -o", func(p string) []string { return []string{"report", "a.json", "-o", p + ".html"} }},
		{"compare --html", func(p string) []string { return []string{"compare", "a.json", "b.json", "--html", p + ".html"} }},
		{"k8s manifest -o", func(p string) []string { return []string{"k8s", "manifest", "--node", "cp-1", "-o", p + ".yaml"} }},
	}
	for _, c := range commands {
		for what, target := range targets {
			t.Run(c.name+"/"+what, func(t *testing.T) {
				args := c.args(target)
				start := time.Now()
				r := testutil.RunBinary(t, 30*time.Second, args...)
				path := args[len(args)-1]
				if r.Code != 2 || strings.Count(r.Stderr, "\n") != 1 || !strings.Contains(r.Stderr, path) || r.Stdout != "" {
					t.Errorf("exit %d, stdout %q, stderr %q; want 2 and one line naming %s", r.Code, r.Stdout, r.Stderr, path)
				}
				if el := time.Since(start); el > 10*time.Second {
					t.Errorf("refused after %v: it measured first", el)
				}
			})
		}
	}
	assertOnly(t, dir, "file", "sub.csv", "sub.html", "sub.json", "sub.yaml")
	for _, ext := range []string{".json", ".csv", ".html", ".yaml"} {
		assertEmptyDir(t, filepath.Join(dir, "sub"+ext))
	}
}

// doctor's own Result file (etcdperf-report.json in the current
// directory) is checked as -o is: in a directory the user cannot write,
// doctor stops at once and says to use --report or --no-report.
func TestDoctorReportUnwritable(t *testing.T) {
	cwd := t.TempDir()
	data := t.TempDir()
	// t.TempDir's parent is private to root; give the user a path to them.
	for _, d := range []string{cwd, data, filepath.Dir(cwd), filepath.Dir(data)} {
		os.Chmod(d, 0o755)
	}
	os.Chmod(data, 0o777)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, testutil.Binary(t), "doctor", "--data-dir", data)
	cmd.Dir = cwd
	testutil.RunAsNobody(t, cmd)
	start := time.Now()
	r := testutil.Wait(t, cmd, ctx)
	if r.Code != 2 || strings.Count(r.Stderr, "\n") != 1 || !strings.Contains(r.Stderr, "etcdperf-report.json") ||
		!strings.Contains(r.Stderr, "permission denied") || !strings.Contains(r.Stderr, "--no-report") {
		t.Errorf("exit %d, stderr %q; want 2 and one line naming etcdperf-report.json, the permission and --no-report", r.Code, r.Stderr)
	}
	if el := time.Since(start); el > 10*time.Second {
		t.Errorf("refused after %v: it measured first", el)
	}
	assertEmptyDir(t, cwd)
	assertEmptyDir(t, data)
}

// On a pipe (tee, CI, a pod's log) the progress is a plain line every few
// seconds on stderr, stdout holding only the Result; --quiet silences it.
// doctor also says where its Result is.
func TestProgressOnPipe(t *testing.T) {
	dir := t.TempDir()
	report := filepath.Join(t.TempDir(), "r.json")
	for _, c := range []struct {
		name string
		args []string
		// quiet are the arguments with --quiet (args when nil): a
		// shorter run says as much of silence.
		quiet []string
		// lines is the least number of progress lines without --quiet.
		lines int
		hint  string
	}{
		{"disk", []string{"disk", "--dir", dir, "--runtime", "8s", "-o", "json"}, []string{"disk", "--dir", dir, "--runtime", "3s", "-o", "json"}, 2, ""},
		// The sweep's progress too, in short steps.
		{"doctor", []string{"doctor", "--data-dir", dir, "--duration", "8s", "--disk-runtime", "1s", "--capacity-step", "1s", "--capacity-confirm", "0",
			"--report", report, "-o", "json"},
			[]string{"doctor", "--data-dir", dir, "--duration", "3s", "--disk-runtime", "1s", "--capacity=false", "--report", report, "-o", "json"}, 2, "the Result is in " + report},
	} {
		for _, quiet := range []bool{false, true} {
			name := c.name
			args := c.args
			if quiet {
				name += " --quiet"
				args = append([]string{"--quiet"}, c.quiet...)
			}
			t.Run(name, func(t *testing.T) {
				r := testutil.RunBinary(t, 2*time.Minute, args...)
				if r.Code == 2 {
					t.Fatalf("exit 2: %s", r.Stderr)
				}
				decodeResult(t, r.Stdout) // stdout is the Result alone
				// testutil.Wait sets the progress lines apart.
				var other []string
				if r.Stderr != "" {
					other = strings.Split(strings.TrimSuffix(r.Stderr, "\n"), "\n")
				}
				progress := r.Progress
				for _, l := range progress {
					if strings.ContainsAny(l, "\r\033#") {
						t.Errorf("a terminal's progress on a pipe: %q", l)
					}
				}
				var want []string
				if c.hint != "" {
					want = []string{"etcdperf: " + c.hint + " (etcdperf report " + report + " -o report.html draws it)"}
				}
				switch {
				case quiet && (r.Stderr != "" || len(progress) > 0):
					t.Errorf("--quiet, yet stderr %q, progress %q", r.Stderr, progress)
				case !quiet && len(progress) < c.lines:
					t.Errorf("%d progress lines, want at least %d; stderr:\n%s", len(progress), c.lines, r.Stderr)
				case !quiet && !slices.Equal(other, want):
					t.Errorf("stderr besides the progress: %q, want %q", other, want)
				}
			})
		}
	}
}
