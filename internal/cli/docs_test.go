package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// Every etcdperf command line the docs show (README.md and docs/*.md: shell
// code blocks, "$ " lines of other blocks, and inline code) names commands
// and flags that exist, with values the flags accept: each is parsed with
// the real command tree, as etcdperf would parse it. The files are read as
// they are when the test runs.
func TestDocsCommandLinesParse(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "..", "docs", "*.md"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no docs: %v", err)
	}
	files = append(files, filepath.Join("..", "..", "README.md"))
	seen := 0
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(filepath.Join("..", ".."), file)
		for _, c := range docCommandLines(string(data)) {
			for _, args := range etcdperfInvocations(c.text, c.inline) {
				seen++
				if err := checkCommandLine(newTestRoot(), args); err != nil {
					t.Errorf("%s:%d: %s\n\t%v", rel, c.line, c.text, err)
				}
			}
		}
	}
	if seen < 50 {
		t.Errorf("only %d etcdperf command lines found in the docs: is the extraction broken?", seen)
	}
}

// The examples of every command's --help parse as well.
func TestHelpExamplesParse(t *testing.T) {
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, l := range shellLines(c.Example) {
			for _, args := range etcdperfInvocations(l, false) {
				if err := checkCommandLine(newTestRoot(), args); err != nil {
					t.Errorf("%s --help, example: %s\n\t%v", c.CommandPath(), l, err)
				}
			}
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(newTestRoot())
}

// The checker itself: what it must accept and refuse.
func TestCheckCommandLine(t *testing.T) {
	for _, c := range []struct {
		line   string
		inline bool
		bad    string // "" when the line is fine
	}{
		{line: "etcdperf disk --dir /var/lib/etcd --engine fio"},
		{line: "sudo -E etcdperf doctor --node"},
		{line: "ETCDPERF_PASSWORD=... etcdperf bench put --endpoints=10.0.0.1:2379 -o json"},
		{line: "kubectl logs etcd-0 --timestamps | etcdperf logs - -o json # a comment"},
		{line: "go run ./cmd/etcdperf disk --dir /tmp --size 4m"},
		{line: "etcdperf bench WORKLOAD", inline: true},
		{line: `etcdperf k8s manifest (--node NAME \| --storage-class SC --size 10Gi \| --mode node-doctor [--node NAME])`, inline: true},
		{line: "etcdperf check --load s|m|l|xl --members N", inline: true},
		{line: "etcdperf doctor --endpoints", inline: true},
		{line: "etcdperf disk --no-such-flag", bad: "unknown flag --no-such-flag"},
		{line: "etcdperf nosuch --dir x", bad: `unknown command "nosuch"`},
		{line: "etcdperf bench puts", bad: `unknown command "puts"`},
		{line: "sudo etcdperf disk --runtime 30", bad: "--runtime"},
		{line: "etcdperf report --merge a.json", bad: "unknown flag --merge"},
		{line: "etcdperf disk -Z", bad: "unknown flag -Z"},
	} {
		var errs []string
		n := 0
		for _, args := range etcdperfInvocations(c.line, c.inline) {
			n++
			if err := checkCommandLine(newTestRoot(), args); err != nil {
				errs = append(errs, err.Error())
			}
		}
		got := strings.Join(errs, "; ")
		switch {
		case n != 1:
			t.Errorf("%s: %d invocations found, want 1", c.line, n)
		case c.bad == "" && got != "":
			t.Errorf("%s: %s", c.line, got)
		case c.bad != "" && !strings.Contains(got, c.bad):
			t.Errorf("%s: error %q, want one saying %q", c.line, got, c.bad)
		}
	}
}

// docLine is a command line found in a Markdown file.
type docLine struct {
	line   int
	text   string
	inline bool // inline code: a synopsis, with [optional] parts and alternatives
}

var inlineCode = regexp.MustCompile("`([^`]+)`")

// docCommandLines returns the shell lines of a Markdown text's code blocks
// (all lines of sh/bash/shell/console blocks, the "$ " lines of others,
// with their continuation lines joined) and its inline code spans that start
// with an etcdperf command.
func docCommandLines(md string) []docLine {
	var out []docLine
	lines := strings.Split(md, "\n")
	inBlock, shell := false, false
	var para []string
	paraStart := 0
	flushPara := func() {
		text := strings.Join(para, " ")
		for _, m := range inlineCode.FindAllStringSubmatch(text, -1) {
			if isEtcdperfStart(m[1]) {
				out = append(out, docLine{line: paraStart, text: m[1], inline: true})
			}
		}
		para = nil
	}
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		trimmed := strings.TrimSpace(l)
		if strings.HasPrefix(trimmed, "```") {
			if !inBlock {
				flushPara()
				lang := strings.TrimSpace(strings.TrimPrefix(trimmed, "```"))
				inBlock, shell = true, lang == "sh" || lang == "bash" || lang == "shell" || lang == "console"
			} else {
				inBlock = false
			}
			continue
		}
		if !inBlock {
			if trimmed == "" || strings.HasPrefix(trimmed, "|") || strings.HasPrefix(trimmed, "#") {
				flushPara()
			}
			if trimmed != "" {
				if len(para) == 0 {
					paraStart = i + 1
				}
				para = append(para, trimmed)
			}
			continue
		}
		prompt := strings.HasPrefix(trimmed, "$ ")
		if !shell && !prompt {
			continue
		}
		start := i + 1
		text := strings.TrimPrefix(trimmed, "$ ")
		for strings.HasSuffix(text, `\`) && i+1 < len(lines) {
			i++
			text = strings.TrimSuffix(text, `\`) + " " + strings.TrimSpace(lines[i])
		}
		out = append(out, docLine{line: start, text: text})
	}
	flushPara()
	return out
}

// shellLines splits a --help example into its command lines, continuation
// lines joined.
func shellLines(example string) []string {
	var out []string
	lines := strings.Split(example, "\n")
	for i := 0; i < len(lines); i++ {
		text := strings.TrimSpace(lines[i])
		for strings.HasSuffix(text, `\`) && i+1 < len(lines) {
			i++
			text = strings.TrimSuffix(text, `\`) + " " + strings.TrimSpace(lines[i])
		}
		// A pipe at the end of a line goes on with the next.
		for strings.HasSuffix(text, "|") && i+1 < len(lines) {
			i++
			text += " " + strings.TrimSpace(lines[i])
		}
		out = append(out, text)
	}
	return out
}

func isEtcdperfStart(s string) bool {
	return strings.HasPrefix(s, "etcdperf ") || strings.HasPrefix(s, "sudo etcdperf ") || strings.HasPrefix(s, "sudo -E etcdperf ") ||
		strings.HasPrefix(s, "go run ./cmd/etcdperf")
}

// etcdperfInvocations returns the arguments of each etcdperf command in a
// shell line: the line is cut at pipes, lists and comments, redirections
// are dropped, and each part that runs etcdperf (after variable assignments,
// sudo and its options, env, time) gives its arguments. In an inline
// synopsis, brackets and parentheses are dropped and a "|" before an
// option is an alternative, not a pipe.
func etcdperfInvocations(line string, inline bool) [][]string {
	if inline {
		line = strings.ReplaceAll(line, `\|`, "|")
		line = strings.NewReplacer("[", " ", "]", " ", "(", " ", ")", " ").Replace(line)
	}
	toks := shellWords(line)
	var out [][]string
	var seg []string
	flush := func() {
		if args, ok := invocation(seg); ok {
			out = append(out, args)
		}
		seg = nil
	}
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		switch {
		case t.op == "#":
			flush()
			return out
		case t.op == "|" && inline && i+1 < len(toks) && strings.HasPrefix(toks[i+1].word, "-"):
			// an alternative of a synopsis
		case t.op == ">" || t.op == ">>" || t.op == "<" || t.op == "2>":
			i++ // and its target
		case t.op == "2>&1":
		case t.op != "":
			flush()
		default:
			seg = append(seg, t.word)
		}
	}
	flush()
	return out
}

var assignment = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*=`)

// invocation returns the arguments of etcdperf in one command of a
// pipeline, if it runs etcdperf.
func invocation(seg []string) ([]string, bool) {
	i := 0
	for i < len(seg) {
		w := seg[i]
		switch {
		case assignment.MatchString(w):
		case w == "sudo" || w == "env" || w == "time" || w == "exec" || w == "do" || w == "then" || w == "nohup":
		case strings.HasPrefix(w, "-") && i > 0 && seg[i-1] == "sudo":
		default:
			goto cmd
		}
		i++
	}
cmd:
	rest := seg[i:]
	switch {
	case len(rest) > 0 && rest[0] == "etcdperf":
		return rest[1:], true
	case len(rest) > 2 && rest[0] == "go" && rest[1] == "run" && rest[2] == "./cmd/etcdperf":
		return rest[3:], true
	}
	return nil, false
}

type shellTok struct{ word, op string }

// shellWords splits a shell line into words (quotes removed) and operators.
func shellWords(line string) []shellTok {
	var toks []shellTok
	var b strings.Builder
	inWord := false
	end := func() {
		if inWord {
			toks = append(toks, shellTok{word: b.String()})
			b.Reset()
			inWord = false
		}
	}
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == ' ' || c == '\t':
			end()
		case c == '\'':
			inWord = true
			j := strings.IndexByte(line[i+1:], '\'')
			if j < 0 {
				j = len(line) - i - 1
			}
			b.WriteString(line[i+1 : i+1+j])
			i += j + 1
		case c == '"':
			inWord = true
			for i++; i < len(line) && line[i] != '"'; i++ {
				if line[i] == '\\' && i+1 < len(line) {
					i++
				}
				b.WriteByte(line[i])
			}
		case c == '\\' && i+1 < len(line):
			inWord = true
			i++
			b.WriteByte(line[i])
		case c == '#' && !inWord:
			toks = append(toks, shellTok{op: "#"})
			return toks
		case c == '|' || c == '&' || c == ';' || c == '>' || c == '<':
			if inWord && b.Len() > 0 && (c == '|') && !strings.HasPrefix(line[i:], "| ") && !strings.HasPrefix(line[i:], "||") && i+1 < len(line) {
				// "s|m|l|xl" inside a word: a synopsis's choices
				b.WriteByte(c)
				continue
			}
			if (c == '>' || c == '<') && inWord && b.String() == "2" {
				b.Reset()
				inWord = false
				if strings.HasPrefix(line[i:], ">&1") {
					toks = append(toks, shellTok{op: "2>&1"})
					i += 2
				} else {
					toks = append(toks, shellTok{op: "2>"})
				}
				continue
			}
			end()
			op := string(c)
			if i+1 < len(line) && (line[i+1] == c) {
				op += string(c)
				i++
			}
			toks = append(toks, shellTok{op: op})
		default:
			inWord = true
			b.WriteByte(c)
		}
	}
	end()
	return toks
}

// placeholder reports whether a value stands for one the reader gives
// (N, DIR, NAME=VALUE, <data-dir>, 10.0.0.1:2379,...), which is not
// checked against its flag's type.
var placeholderRE = regexp.MustCompile(`\.\.\.|<|\||[A-Z]{2,}|^[A-Z][0-9]*$`)

func placeholder(v string) bool { return placeholderRE.MatchString(v) }

// newTestRoot is the root command with what cobra adds when it runs: the
// help and completion commands.
func newTestRoot() *cobra.Command {
	root := NewRoot()
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	return root
}

// checkCommandLine parses args (what follows "etcdperf") with the command
// tree: each word that names a subcommand must be one, each flag must be
// one of the command it is given to (its own or inherited), and a value
// that is not a placeholder must be one the flag accepts.
func checkCommandLine(root *cobra.Command, args []string) error {
	c := root
	positional := 0
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return nil // the rest belongs to another command line (k8s manifest's pod)
		}
		if strings.HasPrefix(a, "-") && a != "-" {
			name, val, hasVal := strings.Cut(strings.TrimLeft(a, "-"), "=")
			f := lookupFlag(c, name, !strings.HasPrefix(a, "--"))
			if f == nil {
				return fmt.Errorf("unknown flag %s for %q", a, c.CommandPath())
			}
			if !hasVal && f.NoOptDefVal == "" {
				if i+1 >= len(args) {
					return nil // a flag named at the end of a sentence's code
				}
				i++
				val, hasVal = args[i], true
			}
			if hasVal && !placeholder(val) {
				if err := f.Value.Set(val); err != nil {
					return fmt.Errorf("%s %q for %q: %v", a, val, c.CommandPath(), err)
				}
			}
			continue
		}
		if positional == 0 && c.HasSubCommands() {
			if sub := findSub(c, a); sub != nil {
				c = sub
				continue
			}
			// Not a subcommand: an argument the command itself takes
			// ("check perf", etcdctl's spelling), else a mistake.
			if !placeholder(a) && (c.Args == nil || c.Args(c, []string{a}) != nil) {
				return fmt.Errorf("unknown command %q for %q", a, c.CommandPath())
			}
		}
		positional++
	}
	return nil
}

func lookupFlag(c *cobra.Command, name string, short bool) *pflag.Flag {
	c.InitDefaultHelpFlag()
	if short {
		if len(name) != 1 {
			return nil
		}
		if f := c.Flags().ShorthandLookup(name); f != nil {
			return f
		}
		return c.InheritedFlags().ShorthandLookup(name)
	}
	if f := c.Flags().Lookup(name); f != nil {
		return f
	}
	return c.InheritedFlags().Lookup(name)
}

func findSub(c *cobra.Command, name string) *cobra.Command {
	for _, sub := range c.Commands() {
		if sub.Name() == name || sub.HasAlias(name) {
			return sub
		}
	}
	if name == "help" {
		return c // cobra's help command
	}
	return nil
}
