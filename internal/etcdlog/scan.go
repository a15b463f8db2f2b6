package etcdlog

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/etcdperf/etcdperf/internal/result"
)

// DefaultMaxLine is the longest line read whole; a longer line counts as
// unparsed (etcd's lines are far shorter, except huge request dumps).
const DefaultMaxLine = 1 << 20

// ScanOptions configure Scan.
type ScanOptions struct {
	Parser  ParserOptions
	Summary SummaryOptions
	// MaxLine is the longest line read whole (default DefaultMaxLine).
	MaxLine int
}

// Scan reads every input line by line into a Summary. When an input
// cannot be read it returns the summary of what was read with the error;
// ctx interrupts it between lines the same way.
func Scan(ctx context.Context, inputs []Input, o ScanOptions) (*Summary, error) {
	if o.MaxLine <= 0 {
		o.MaxLine = DefaultMaxLine
	}
	s := NewSummary(o.Summary)
	p := NewParser(o.Parser)
	for _, in := range inputs {
		if in.Skipped != "" {
			s.Source(result.LogSource{Name: in.Name, Member: in.Member, Skipped: in.Skipped})
			continue
		}
		src, err := scanInput(ctx, in, p, s, o.MaxLine)
		s.Source(src)
		if err != nil {
			return s, err
		}
	}
	return s, nil
}

func scanInput(ctx context.Context, in Input, p *Parser, s *Summary, maxLine int) (result.LogSource, error) {
	src := result.LogSource{Name: in.Name, Member: in.Member}
	rc, gz, err := openInput(in)
	src.Compressed = gz
	if err != nil {
		return src, &InputError{Path: in.Name, Err: plainErr(err)}
	}
	defer rc.Close()
	err = ScanReader(ctx, rc, in.Name, in.Member, p, s, maxLine, &src)
	return src, err
}

// ScanReader reads one stream into s, counting its lines, bytes and
// unparsed lines in src. name is where the events say they come from,
// member the member of lines that carry none.
func ScanReader(ctx context.Context, r io.Reader, name, member string, p *Parser, s *Summary, maxLine int, src *result.LogSource) error {
	lr := newLineReader(ctxReader{ctx, r}, maxLine)
	// The stream's own member is added with its first line that names no
	// member: a journal whose every line names its host holds only those.
	def := -1
	var e Entry
	var ev Event
	var cl Classifier
	lineNo := 0
	for {
		line, cut, rerr := lr.next()
		lineNo++
		if !isBlank(line) {
			n := lr.size
			src.Lines++
			src.Bytes += int64(n)
			if cut || !p.Parse(line, &e) {
				src.Unparsed++
				s.Unparsed(n)
			} else if !s.Outside(e.Time, n) {
				var m int
				switch {
				case len(e.Host) > 0:
					m = s.member(e.Host)
				case def < 0:
					def = s.member([]byte(member))
					m = def
				default:
					m = def
				}
				s.Line(m, &e, n)
				if cl.Classify(&e, &ev) {
					no := lineNo
					s.Event(m, &ev, func() string { return fmt.Sprintf("%s:%d", name, no) })
				}
				if s.needFacts(m) || restarts(e.Msg) {
					if mf := facts(&e); mf.any() {
						s.Facts(m, mf)
					}
				}
			}
		}
		if rerr != nil {
			switch {
			case errors.Is(rerr, io.EOF):
				return nil
			case rerr == ctx.Err():
				return rerr
			}
			return fmt.Errorf("read %s: %w", name, rerr)
		}
	}
}

// ctxReader ends a read when ctx ends: a Ctrl-C stops the scan within one
// buffer, also inside a line that never ends (a binary file, a stream
// without newlines).
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(b []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(b)
}

func isBlank(b []byte) bool {
	for _, c := range b {
		if c != ' ' && c != '\t' && c != '\r' {
			return false
		}
	}
	return true
}

// restarts says whether a line states the timers of a (re)start, which
// are read even once the member's facts are known: the last start's
// timers are those in force. Two byte compares for most lines.
func restarts(m []byte) bool {
	if len(m) == 0 {
		return false
	}
	switch m[0] {
	case 's':
		return string(m) == "starting an etcd server"
	case 'h':
		return hasPrefix(m, "heartbeat = ")
	case 'e':
		return hasPrefix(m, "election = ")
	}
	return false
}

// memberFacts are what a member's lines say about it: its id, its --name,
// its version, and its timers (--heartbeat-interval, --election-timeout;
// zero when unknown), at start (atStart) or from a late heartbeat's line.
type memberFacts struct {
	id, name, version   string
	heartbeat, election time.Duration
	atStart             bool
}

func (f memberFacts) any() bool {
	return f.id != "" || f.name != "" || f.version != "" || f.heartbeat > 0 || f.election > 0
}

// facts reads what a member's startup lines say about it, and the
// heartbeat interval a late heartbeat's line names.
func facts(e *Entry) memberFacts {
	f := &e.Fields
	m := e.Msg
	var mf memberFacts
	switch {
	case string(m) == "starting an etcd server":
		mf.version, mf.name = string(f.EtcdVersion.b), string(f.Name.b)
		mf.heartbeat, _ = parseDur(f.HeartbeatInterval.b)
		mf.election, _ = parseDur(f.ElectionTimeout.b)
		mf.atStart = true
	case hasPrefix(m, "etcd Version: "):
		mf.version = strings.TrimSpace(string(m[len("etcd Version: "):]))
	case hasPrefix(m, "starting server... [version: "): // 3.1-3.4
		v := m[len("starting server... [version: "):]
		if i := bytes.IndexByte(v, ','); i > 0 {
			mf.version = string(v[:i])
		}
	case hasPrefix(m, "name = "):
		mf.name = strings.TrimSpace(string(m[len("name = "):]))
	case hasPrefix(m, "heartbeat = "): // capnslog: "heartbeat = 100ms"
		mf.heartbeat, _ = parseDur(m[len("heartbeat = "):])
		mf.atStart = true
	case hasPrefix(m, "election = "): // capnslog: "election = 1000ms"
		mf.election, _ = parseDur(m[len("election = "):])
		mf.atStart = true
	case hasPrefix(m, "leader failed to send out heartbeat on time"): // zap
		mf.heartbeat, _ = parseDur(f.HeartbeatInterval.b)
	case hasPrefix(m, "failed to send out heartbeat on time (exceeded the "): // capnslog 3.0-3.4
		mf.heartbeat, _ = parseDur(between(m, "exceeded the ", " timeout"))
	case hasPrefix(m, "starting member "), hasPrefix(m, "restarting member "):
		mf.id = string(hexWord(after(m, "member ")))
	}
	if mf.id == "" && f.LocalMemberID.str && !bytes.ContainsAny(f.LocalMemberID.b, `\"`) {
		mf.id = string(f.LocalMemberID.b)
	}
	return mf
}
