package etcdlog

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// Input is one stream of log lines: a file (maybe gzipped), standard
// input, or a file found in a directory.
type Input struct {
	// Name is the path as given or found, "-" for standard input.
	Name string
	// Member is the member the lines are attributed to when they carry no
	// host or prefix of their own (see memberLabels).
	Member string
	// Skipped, when set, says why a file found in a directory is not read.
	Skipped string
	stdin   io.Reader
}

// InputError is a path that cannot be read: missing, unreadable, or a
// pattern that matches nothing. It is the user's mistake, not a failure
// of the analysis.
type InputError struct {
	Path string
	Err  error
}

func (e *InputError) Error() string { return fmt.Sprintf("%s: %v", e.Path, e.Err) }
func (e *InputError) Unwrap() error { return e.Err }

// sniffBytes is how much of a file found in a directory is read to decide
// whether it is an etcd log.
const sniffBytes = 64 << 10

// Inputs expands the command's arguments into inputs: "-" is standard
// input, a pattern with * ? [ is expanded (it must match something), a
// directory is walked for etcd logs (must-gather and sosreport folders,
// /var/log/pods), and anything else must be a readable file.
//
// Inside a directory, the files whose path names etcd are the candidates
// (all log-like files when none does), and a candidate is read only when
// its first 64 KiB hold etcd log lines; the others are returned with
// Skipped set so that the report can say so.
func Inputs(args []string, stdin io.Reader) ([]Input, error) {
	var out []Input
	seen := map[string]bool{}
	add := func(in Input) {
		if in.Name != "-" && seen[in.Name] {
			return
		}
		seen[in.Name] = true
		out = append(out, in)
	}
	for _, a := range args {
		if a == "-" {
			add(Input{Name: "-", stdin: stdin})
			continue
		}
		paths := []string{a}
		if strings.ContainsAny(a, "*?[") {
			m, err := filepath.Glob(a)
			if err != nil {
				return nil, &InputError{Path: a, Err: fmt.Errorf("bad pattern: %w", err)}
			}
			if len(m) == 0 {
				return nil, &InputError{Path: a, Err: errors.New("no file matches this pattern")}
			}
			paths = m
		}
		for _, p := range paths {
			st, err := os.Stat(p)
			if err != nil {
				return nil, &InputError{Path: p, Err: plainErr(err)}
			}
			if st.IsDir() {
				found, err := walkDir(p)
				if err != nil {
					return nil, err
				}
				for _, in := range found {
					add(in)
				}
				continue
			}
			f, err := os.Open(p)
			if err != nil {
				return nil, &InputError{Path: p, Err: plainErr(err)}
			}
			f.Close()
			add(Input{Name: p})
		}
	}
	memberLabels(out)
	return out, nil
}

// plainErr strips the path from *fs.PathError so that messages do not
// repeat it.
func plainErr(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		if errors.Is(pe.Err, fs.ErrNotExist) {
			return errors.New("no such file or directory")
		}
		return pe.Err
	}
	return err
}

var logName = regexp.MustCompile(`(?i)(\.log|\.txt|\.gz|\.jsonl|\.ndjson|\.log\.[0-9]+|\.[0-9]+\.log|^current|^previous|^messages|^syslog)`)

func walkDir(root string) ([]Input, error) {
	var all, etcd []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == root {
				return err
			}
			return nil // an unreadable subdirectory is not the user's target
		}
		if !d.Type().IsRegular() || !logName.MatchString(d.Name()) {
			return nil
		}
		all = append(all, p)
		if strings.Contains(strings.ToLower(p), "etcd") {
			etcd = append(etcd, p)
		}
		return nil
	})
	if err != nil {
		return nil, &InputError{Path: root, Err: plainErr(err)}
	}
	cands := etcd
	if len(cands) == 0 {
		cands = all
	}
	if len(cands) == 0 {
		return nil, &InputError{Path: root, Err: errors.New("no log files in this directory")}
	}
	sort.Strings(cands)
	var out []Input
	read := 0
	for _, p := range cands {
		in := Input{Name: p}
		if ok, why := sniff(p); !ok {
			in.Skipped = why
		} else {
			read++
		}
		out = append(out, in)
	}
	if read == 0 {
		what := fmt.Sprintf("none of its %d log files holds", len(out))
		if len(out) == 1 {
			what = "its one log file holds no"
		}
		return nil, &InputError{Path: root, Err: fmt.Errorf("%s etcd log lines (%s: %s)", what, out[0].Name, out[0].Skipped)}
	}
	return out, nil
}

// sniff reports whether the start of a file holds etcd log lines.
func sniff(path string) (bool, string) {
	rc, _, err := openInput(Input{Name: path})
	if err != nil {
		return false, "unreadable: " + plainErr(err).Error()
	}
	defer rc.Close()
	lr := newLineReader(io.LimitReader(rc, sniffBytes), 64<<10)
	p := NewParser(ParserOptions{})
	var e Entry
	lines, parsed := 0, 0
	for lines < 200 {
		line, _, err := lr.next()
		if len(trimSpace(line)) > 0 {
			lines++
			if p.Parse(line, &e) && (e.Format != FormatBare || etcdBare(&e)) {
				parsed++
			}
		}
		if err != nil {
			break
		}
	}
	if parsed == 0 || parsed*2 < lines {
		if lines == 1 {
			return false, "not an etcd log (its one line is not an etcd log line)"
		}
		are := "are etcd log lines"
		if parsed == 1 {
			are = "is an etcd log line"
		}
		return false, fmt.Sprintf("not an etcd log (%d of its first %d lines %s)", parsed, lines, are)
	}
	return true, ""
}

// etcdBare reports whether a bare message (journald's, without etcd's own
// header) is etcd's: its program is named etcd, or it says one of etcd's
// messages. Any program's lines in a host's journal are bare messages; a
// file of them is not an etcd log.
func etcdBare(e *Entry) bool {
	if bytes.Contains(bytes.ToLower(e.Prog), []byte("etcd")) {
		return true
	}
	return len(e.Msg) > 0 && textClass(e.Msg) != ClassNone
}

// openInput opens an input, decompressing gzip (recognised by its magic
// bytes, whatever the name).
func openInput(in Input) (io.ReadCloser, bool, error) {
	var r io.Reader
	var closer io.Closer
	if in.Name == "-" {
		r = in.stdin
		if r == nil {
			r = os.Stdin
		}
	} else {
		f, err := os.Open(in.Name)
		if err != nil {
			return nil, false, err
		}
		r, closer = f, f
	}
	br := bufio.NewReaderSize(r, 256<<10)
	magic, _ := br.Peek(2)
	if len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		gz, err := gzip.NewReader(br)
		if err != nil {
			if closer != nil {
				closer.Close()
			}
			return nil, true, fmt.Errorf("not a readable gzip file: %w", err)
		}
		return readCloser{Reader: bufio.NewReaderSize(gz, 256<<10), c: multiCloser{gz, closer}}, true, nil
	}
	return readCloser{Reader: br, c: multiCloser{closer}}, false, nil
}

type readCloser struct {
	io.Reader
	c io.Closer
}

func (r readCloser) Close() error { return r.c.Close() }

type multiCloser []io.Closer

func (m multiCloser) Close() error {
	var errs []error
	for _, c := range m {
		if c != nil {
			errs = append(errs, c.Close())
		}
	}
	return errors.Join(errs...)
}

var (
	// rotations strip, in order, what log rotation and compression add to
	// a log's name: etcd.log.1.gz, etcd.log-20230101, lumberjack's
	// etcd-2023-01-01T00-00-00.000.log.
	rotations = []*regexp.Regexp{
		regexp.MustCompile(`(?i)\.gz$`),
		regexp.MustCompile(`(?i)\.log([.-][0-9][0-9TZ:.-]*)?$`),
		regexp.MustCompile(`(?i)\.txt$`),
		regexp.MustCompile(`(?i)\.(nd)?jsonl?$`),
		regexp.MustCompile(`-[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}-[0-9]{2}-[0-9]{2}(\.[0-9]+)?$`),
	}
	podDir    = regexp.MustCompile(`/pods/([^/]+)/([^/]+)/([^/]+)/logs/[^/]+$`)              // must-gather
	varPods   = regexp.MustCompile(`/pods/[^/_]+_([^/_]+)_[^/]+/([^/]+)/[^/]+$`)             // /var/log/pods
	containr  = regexp.MustCompile(`/containers/([^/_]+)_[^/_]+_([^/]+)-[0-9a-f]{64}\.log$`) // /var/log/containers
	genericNm = map[string]bool{"": true, "current": true, "previous": true, "0": true, "log": true, "logs": true, "messages": true, "syslog": true}
)

// memberLabels names the member of each input: the pod of a Kubernetes
// log path, or the file name without extensions and rotation suffixes
// (etcd.log and etcd.log.1.gz are one member), prefixed with the parent
// directory when that name is generic or shared by files in different
// directories.
func memberLabels(ins []Input) {
	base := make([]string, len(ins))
	dirs := map[string]map[string]bool{}
	for i, in := range ins {
		if in.Name == "-" {
			base[i] = "stdin"
			continue
		}
		p := filepath.ToSlash(in.Name)
		if m := podDir.FindStringSubmatch(p); m != nil {
			base[i] = podLabel(m[1], m[2])
			continue
		}
		if m := varPods.FindStringSubmatch(p); m != nil {
			base[i] = podLabel(m[1], m[2])
			continue
		}
		if m := containr.FindStringSubmatch(p); m != nil {
			base[i] = podLabel(m[1], m[2])
			continue
		}
		name := filepath.Base(p)
		for _, re := range rotations {
			if s := re.ReplaceAllString(name, ""); s != "" {
				name = s
			}
		}
		dir := filepath.Base(filepath.Dir(p))
		if genericNm[strings.ToLower(name)] {
			name = dir
		}
		base[i] = name
		if dirs[name] == nil {
			dirs[name] = map[string]bool{}
		}
		dirs[name][filepath.Dir(p)] = true
	}
	for i, in := range ins {
		ins[i].Member = base[i]
		if in.Name != "-" && len(dirs[base[i]]) > 1 {
			ins[i].Member = filepath.Base(filepath.Dir(in.Name)) + "/" + base[i]
		}
	}
}

func podLabel(pod, container string) string {
	if container == "etcd" || container == "" {
		return pod
	}
	return pod + "/" + container
}

// lineReader returns lines of at most max bytes; the rest of a longer line
// is skipped and the line reported as cut.
type lineReader struct {
	r    *bufio.Reader
	long []byte
	max  int
	// size is the length of the last line read, newline included, before
	// any cut.
	size int
}

func newLineReader(r io.Reader, max int) *lineReader {
	br, ok := r.(*bufio.Reader)
	if !ok {
		br = bufio.NewReaderSize(r, 256<<10)
	}
	return &lineReader{r: br, max: max}
}

// next returns the next line without its newline. At the end of the
// input it returns the last line (maybe empty) with io.EOF.
func (l *lineReader) next() (line []byte, cut bool, err error) {
	b, err := l.r.ReadSlice('\n')
	l.size = len(b)
	if err != bufio.ErrBufferFull {
		b = trimNL(b)
		if len(b) > l.max {
			return b[:l.max], true, err
		}
		return b, false, err
	}
	l.long = append(l.long[:0], b...)
	for {
		b, err = l.r.ReadSlice('\n')
		l.size += len(b)
		if len(l.long) < l.max {
			l.long = append(l.long, b[:min(len(b), l.max-len(l.long))]...)
		} else {
			cut = true
		}
		if len(l.long) >= l.max && len(b) > 0 && b[len(b)-1] != '\n' {
			cut = true
		}
		if err != bufio.ErrBufferFull {
			return trimNL(l.long), cut, err
		}
	}
}

func trimNL(b []byte) []byte {
	if n := len(b); n > 0 && b[n-1] == '\n' {
		return b[:n-1]
	}
	return b
}
