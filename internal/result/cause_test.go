package result

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"strconv"
	"strings"
	"testing"
)

// declaredCauses reads every constant of type Cause from cause.go's source,
// so that a cause added there without an entry in the table fails below.
func declaredCauses(t *testing.T) []Cause {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "cause.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []Cause
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, s := range g.Specs {
			v := s.(*ast.ValueSpec)
			if id, ok := v.Type.(*ast.Ident); !ok || id.Name != "Cause" {
				continue
			}
			for _, val := range v.Values {
				lit, ok := val.(*ast.BasicLit)
				if !ok {
					t.Fatalf("a Cause constant is not a string literal: %#v", val)
				}
				s, _ := strconv.Unquote(lit.Value)
				out = append(out, Cause(s))
			}
		}
	}
	return out
}

// Every cause has its words: a noun; the words of a sweep's knee (all but
// a load check's "server" and "none"); a finding with an ID, a title and a
// remedy where it has one; verdict heads that format without a missing or
// extra argument.
func TestCauseTable(t *testing.T) {
	declared := declaredCauses(t)
	if len(declared) < 9 {
		t.Fatalf("read %d causes from cause.go: %v", len(declared), declared)
	}
	for _, c := range declared {
		info, ok := causes[c]
		if !ok {
			t.Errorf("cause %q has no entry in the cause table", c)
			continue
		}
		if info.Noun == "" {
			t.Errorf("cause %q has no noun", c)
		}
		if c != CauseServer && c != CauseNone && info.AtKnee == "" {
			t.Errorf("cause %q has no words for a sweep's knee", c)
		}
		for _, head := range []string{info.Failed, info.Tight} {
			if s := fmt.Sprintf(head, "this storage", " of member m1"); head != "" && (strings.Contains(s, "%!") || !strings.Contains(s, "this storage")) {
				t.Errorf("cause %q: verdict head %q formats as %q", c, head, s)
			}
		}
		if f := info.Finding; f != nil {
			title := fmt.Sprintf(f.Title, "m1", "what was measured")
			if f.ID == "" || f.Remedy == "" || strings.Contains(title, "%!") || !strings.Contains(title, "m1") || !strings.Contains(title, "what was measured") {
				t.Errorf("cause %q: finding %+v (title %q)", c, *f, title)
			}
		}
	}
	if len(causes) != len(declared) {
		t.Errorf("the table has %d entries for %d declared causes", len(causes), len(declared))
	}
	if n := Cause("quota").Info().Noun; n != "the quota" {
		t.Errorf("an unknown cause's noun is %q", n)
	}
}
