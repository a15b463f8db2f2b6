package e2e

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// debianPackage is the Debian package of each program the tests run, or
// that etcdperf runs in them, that a fresh Debian may lack; the others are
// on every Debian with Go (essential packages and the Go toolchain).
var debianPackage = map[string]string{
	"fio":                    "fio",
	"chromium":               "chromium",
	"chromium-browser":       "chromium",
	"google-chrome":          "chromium",
	"prometheus":             "prometheus",
	"journalctl":             "systemd",
	"systemd-journal-remote": "systemd-journal-remote",
	"mkfs.ext4":              "e2fsprogs",
	"etcd":                   "etcd-server",
}

var alwaysThere = []string{"go", "sh", "dd", "nice", "sleep"}

// Every program the tests run (exec.Command, exec.CommandContext and
// exec.LookPath with a literal name, or a name taken from a literal list,
// in the tests, internal/testutil and etcdperf's own code) is named in the
// README next to the test command; every one a fresh Debian may lack comes
// from a package that the README's apt-get line and .ci/run install.
func TestTestToolsNamedInREADME(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	tools := execNames(t, root)
	for _, want := range []string{"fio", "journalctl", "mkfs.ext4", "prometheus", "chromium", "systemd-journal-remote", "etcd"} {
		if !slices.Contains(tools, want) {
			t.Errorf("the scan of the sources missed %s (found %q)", want, tools)
		}
	}
	t.Logf("programs the tests run: %s", strings.Join(tools, " "))

	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	needs := testNeeds(t, string(readme))
	apt := regexp.MustCompile("`apt-get install ([a-z0-9 .+-]+)`").FindStringSubmatch(needs)
	if apt == nil {
		t.Fatalf("the README's tests section has no `apt-get install ...`:\n%s", needs)
	}
	packages := strings.Fields(apt[1])

	ci, err := os.ReadFile(filepath.Join(root, ".ci", "run"))
	if err != nil {
		t.Fatal(err)
	}
	var installs []string
	for _, m := range regexp.MustCompile(`need\+=\(([a-z0-9.+-]+)\)`).FindAllStringSubmatch(string(ci), -1) {
		installs = append(installs, m[1])
	}

	for _, tool := range tools {
		if !strings.Contains(needs, "`"+tool+"`") {
			t.Errorf("the tests run %s, which the README does not name next to the test command", tool)
		}
		pkg, ok := debianPackage[tool]
		switch {
		case !ok && !slices.Contains(alwaysThere, tool):
			t.Errorf("the tests run %s: add its Debian package to debianPackage, the README's apt-get line and .ci/run", tool)
		case ok && !slices.Contains(packages, pkg):
			t.Errorf("%s comes with %s, which the README's apt-get line lacks: %s", tool, pkg, apt[0])
		}
	}
	for _, pkg := range packages {
		if !slices.Contains(installs, pkg) {
			t.Errorf(".ci/run does not install %s (need+=(%s)), which the README says CI installs", pkg, pkg)
		}
	}
}

// testNeeds is the part of the README from its test command to the next
// section.
func testNeeds(t *testing.T, readme string) string {
	t.Helper()
	i := strings.Index(readme, "\ngo test ")
	if i < 0 {
		t.Fatal("the README has no line starting with go test")
	}
	s := readme[i:]
	if j := strings.Index(s, "\n## "); j >= 0 {
		s = s[:j]
	}
	return s
}

// execNames returns the programs named in the module's Go files (the
// benchmarks under bench/ aside) where one is run or looked up: a literal
// name; the names of a literal list a range loop hands to it; or the
// absolute paths in the declaration of a variable that holds it.
func execNames(t *testing.T, root string) []string {
	t.Helper()
	found := map[string]bool{}
	add := func(e ast.Expr) {
		if s, ok := stringLit(e); ok && s != "" && !strings.ContainsAny(s, " \t") {
			found[path.Base(s)] = true
		}
	}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); p != root && (strings.HasPrefix(n, ".") || n == "testdata" || n == "vendor" || p == filepath.Join(root, "bench")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, 0)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if pkg, ok := sel.X.(*ast.Ident); !ok || pkg.Name != "exec" {
				return true
			}
			arg := 0
			switch sel.Sel.Name {
			case "Command", "LookPath":
			case "CommandContext":
				arg = 1
			default:
				return true
			}
			if len(call.Args) <= arg {
				return true
			}
			name := call.Args[arg]
			if _, ok := stringLit(name); ok {
				add(name)
				return true
			}
			id, ok := name.(*ast.Ident)
			if !ok || id.Obj == nil {
				return true
			}
			switch decl := id.Obj.Decl.(type) {
			case *ast.AssignStmt: // for _, name := range []string{...}
				if len(decl.Rhs) == 1 {
					if r, ok := decl.Rhs[0].(*ast.UnaryExpr); ok && r.Op == token.RANGE {
						if lit, ok := r.X.(*ast.CompositeLit); ok {
							for _, e := range lit.Elts {
								add(e)
							}
						}
					}
				}
			case *ast.ValueSpec: // var prog = func() string { ...paths... }()
				ast.Inspect(decl, func(n ast.Node) bool {
					if e, ok := n.(ast.Expr); ok {
						if s, ok := stringLit(e); ok && strings.HasPrefix(s, "/") {
							add(e)
						}
					}
					return true
				})
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for n := range found {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func stringLit(e ast.Expr) (string, bool) {
	lit, ok := e.(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING {
		return "", false
	}
	s, err := strconv.Unquote(lit.Value)
	return s, err == nil
}

// The README's two commands for a fresh machine stay as .ci/run uses them:
// one line starting with go test, the one CI runs, after the main job run
// from a clone.
func TestREADMETwoCommands(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	tests := regexp.MustCompile(`(?m)^go test .*$`).FindAllString(readme, -1)
	if len(tests) != 1 || tests[0] != "go test -count=1 -timeout 40m ./..." {
		t.Errorf("want one line starting with go test, go test -count=1 -timeout 40m ./...; got %q", tests)
	}
	mainJob := "git clone https://github.com/etcdperf/etcdperf && cd etcdperf\ngo run ./cmd/etcdperf doctor\n"
	if i, j := strings.Index(readme, mainJob), strings.Index(readme, "\ngo test "); i < 0 || i > j {
		t.Errorf("the README has no %q before its test command", mainJob)
	}
}
