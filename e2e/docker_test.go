package e2e

import (
	"bufio"
	"context"
	"debug/elf"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"
)

// dockerfile is the part of the repository's Dockerfile that the test
// checks: its instructions, continuation lines joined, by stage.
type dockerfile struct {
	stages []stage
}

type stage struct {
	from, name string
	lines      []string // instructions after FROM
}

func readDockerfile(t *testing.T, path string) dockerfile {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("the repository has no Dockerfile: %v", err)
	}
	defer f.Close()
	var df dockerfile
	var cur strings.Builder
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if cur.Len() == 0 && (line == "" || strings.HasPrefix(line, "#")) {
			continue
		}
		if strings.HasSuffix(line, "\\") {
			cur.WriteString(strings.TrimSuffix(line, "\\") + " ")
			continue
		}
		cur.WriteString(line)
		inst := cur.String()
		cur.Reset()
		fields := strings.Fields(inst)
		if strings.EqualFold(fields[0], "FROM") {
			st := stage{}
			for i := 1; i < len(fields); i++ {
				switch {
				case strings.HasPrefix(fields[i], "--"):
				case strings.EqualFold(fields[i], "AS") && i+1 < len(fields):
					st.name = fields[i+1]
					i++
				default:
					st.from = fields[i]
				}
			}
			df.stages = append(df.stages, st)
			continue
		}
		if len(df.stages) == 0 {
			t.Fatalf("Dockerfile: %q before FROM", inst)
		}
		last := &df.stages[len(df.stages)-1]
		last.lines = append(last.lines, inst)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return df
}

// find returns the instructions of st that start with keyword and contain
// substr.
func (st stage) find(keyword, substr string) []string {
	var out []string
	for _, l := range st.lines {
		if strings.HasPrefix(strings.ToUpper(l), keyword+" ") && strings.Contains(l, substr) {
			out = append(out, l)
		}
	}
	return out
}

// TestDockerfileStaticBuild runs the go build line of the Dockerfile's build
// stage as Docker would (with the build arguments it declares) and checks
// that it makes a static binary that runs, and that the final stage copies
// that binary onto a minimal base and starts it. No Docker engine runs here,
// so the image itself is not built.
func TestDockerfileStaticBuild(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	df := readDockerfile(t, filepath.Join(root, "Dockerfile"))
	if len(df.stages) != 2 {
		t.Fatalf("want a build stage and a final stage, got %d stages", len(df.stages))
	}
	build, final := df.stages[0], df.stages[1]
	if !strings.HasPrefix(build.from, "golang:1.26") || build.name == "" {
		t.Errorf("build stage FROM %s AS %q, want golang:1.26", build.from, build.name)
	}
	if !strings.HasPrefix(final.from, "gcr.io/distroless/static") && final.from != "scratch" {
		t.Errorf("final stage FROM %s, want distroless static or scratch", final.from)
	}
	runs := build.find("RUN", "go build")
	if len(runs) != 1 {
		t.Fatalf("want one RUN with go build in the build stage, got %q", runs)
	}
	run := strings.TrimSpace(runs[0][len("RUN"):])
	if !strings.Contains(run, "CGO_ENABLED=0") {
		t.Errorf("the build is not static: %s", run)
	}
	out := regexp.MustCompile(`-o (\S+)`).FindStringSubmatch(run)
	if out == nil {
		t.Fatalf("no -o in %s", run)
	}
	// The final stage copies what the build wrote and starts it, as nonroot.
	var dest string
	for _, c := range final.find("COPY", "--from="+build.name) {
		if f := strings.Fields(c); len(f) == 4 && f[2] == out[1] {
			dest = f[3]
		}
	}
	if dest == "" {
		t.Fatalf("the final stage does not copy %s from %s: %q", out[1], build.name, final.lines)
	}
	ep := final.find("ENTRYPOINT", "")
	var argv []string
	if len(ep) != 1 || json.Unmarshal([]byte(strings.TrimSpace(ep[0][len("ENTRYPOINT"):])), &argv) != nil || len(argv) == 0 || argv[0] != dest {
		t.Errorf("ENTRYPOINT %q does not run %s", ep, dest)
	}
	if u := final.find("USER", ""); len(u) != 1 || strings.Contains(u[0], " 0") || strings.Contains(u[0], "root:") {
		t.Errorf("final stage USER %q, want a non-root user", u)
	}
	// Build arguments as Docker passes them: the declared ARGs, with
	// BuildKit's platform values and a release version.
	env := os.Environ()
	for _, a := range build.find("ARG", "") {
		name, def, _ := strings.Cut(strings.TrimSpace(a[len("ARG"):]), "=")
		env = append(env, name+"="+def)
	}
	env = append(env, "TARGETOS=linux", "TARGETARCH="+runtime.GOARCH, "VERSION=v9.9.9")

	bin := filepath.Join(t.TempDir(), "etcdperf")
	cmdline := strings.Replace(run, "-o "+out[1], "-o "+bin, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", "-c", cmdline)
	cmd.Dir = root
	cmd.Env = env
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", cmdline, err, b)
	}

	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Error("the binary needs a dynamic loader: not static")
		}
	}
	if libs, _ := f.ImportedLibraries(); len(libs) > 0 {
		t.Errorf("the binary links %v: not static", libs)
	}
	// It runs, knows the version it was built as, and its manifests name
	// the image of that version.
	if b, err := exec.Command(bin, "version").Output(); err != nil || !strings.HasPrefix(string(b), "etcdperf v9.9.9 ") {
		t.Errorf("version: %q %v", b, err)
	}
	b, err := exec.Command(bin, "k8s", "manifest", "--node", "cp-1").Output()
	if err != nil || !strings.Contains(string(b), "image: ghcr.io/etcdperf/etcdperf:v9.9.9\n") {
		t.Errorf("manifest of the release binary does not name its image (%v):\n%s", err, b)
	}

	// The build context keeps what the build reads.
	ign, err := os.ReadFile(filepath.Join(root, ".dockerignore"))
	if err != nil {
		t.Fatalf("no .dockerignore: %v", err)
	}
	for _, l := range strings.Split(string(ign), "\n") {
		switch strings.Trim(strings.TrimSpace(l), "/") {
		case "go.mod", "go.sum", "cmd", "internal", "*", "**", "*.go":
			t.Errorf(".dockerignore excludes %q, which the build needs", l)
		}
	}
}
