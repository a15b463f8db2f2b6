package etcdlog

import (
	"bytes"
	"slices"
	"strconv"
	"strings"
	"time"
)

// ParserOptions configure a Parser.
type ParserOptions struct {
	// Location is where timestamps without a zone are read: capnslog and
	// syslog write the local wall clock. Nil means UTC.
	Location *time.Location
	// Year is the year of syslog timestamps ("Aug 11 23:27:04"), which do
	// not say it. Zero means the current year, or the previous one for
	// dates that would otherwise lie more than two days ahead.
	Year int
}

// Parser reads lines into Entries. It keeps scratch buffers between calls
// and is not safe for concurrent use.
type Parser struct {
	tp   timeParser
	year int
	// soon is, when the year was not given, the latest syslog time taken to
	// be in the current year.
	soon time.Time
	// inner holds the unescaped text of a JSON wrapper (journald MESSAGE,
	// docker "log"); it is what the Entry points into for such lines.
	inner [2][]byte
}

// NewParser returns a Parser.
func NewParser(o ParserOptions) *Parser {
	p := &Parser{tp: timeParser{loc: o.Location}, year: o.Year}
	if o.Year == 0 {
		now := time.Now()
		p.year, p.soon = now.Year(), now.Add(48*time.Hour)
	}
	return p
}

// maxWrappers bounds how many wrappers (journald, kubectl, CRI, prefixes)
// one line may carry.
const maxWrappers = 4

// Parse reads one line (without its newline) into e and reports whether
// it was an etcd log line. e is overwritten either way.
func (p *Parser) Parse(line []byte, e *Entry) bool {
	*e = Entry{}
	var wrapTime time.Time
	bareOK := false // set by wrappers that may hold a bare message (journald)
	// set by wrappers that do not name the program (a time, a test's
	// prefix): a bare message after them is etcd's only in etcd's words
	wordsOK := false
	column := false // the last wrapper was a column ("name | ")
	for depth := 0; depth <= maxWrappers; depth++ {
		wasColumn := column
		column = false
		line = trimSpace(line)
		if len(line) == 0 {
			return false
		}
		c := line[0]
		switch {
		case c == '{':
			next, nextTime, host, prog, lvl, wrapped, ok := p.parseJSON(line, e, depth)
			if !ok {
				return false
			}
			if !wrapped {
				if e.Time.IsZero() {
					e.Time = wrapTime
				}
				return true
			}
			if !nextTime.IsZero() {
				wrapTime = nextTime
			}
			if len(host) > 0 {
				e.Host = host
			}
			if len(prog) > 0 {
				e.Prog = prog
			}
			if lvl != LevelUnknown {
				e.Level = lvl
				bareOK = true
			}
			line = next
			continue
		case c == '(' || c == '[':
			prefix := kubectlPrefix
			if c == '(' {
				prefix = e2ePrefix
			}
			host, rest, ok := prefix(line)
			if ok {
				e.Host, line = host, rest
				continue
			}
			if c == '[' { // "[2024-05-01T10:00:00.123Z] ", Jenkins pipelines
				if t, n, _, ok := p.tp.parseISO(line[1:]); ok && n+2 < len(line) && line[n+1] == ']' && line[n+2] == ' ' {
					wrapTime, line, wordsOK = t, line[n+3:], true
					continue
				}
			}
			return false
		case c >= '0' && c <= '9':
			if t, n, zone, ok := p.tp.parseISO(line); ok {
				rest := line[n:]
				if len(rest) >= 5 && line[10] == ' ' && rest[0] == ' ' && rest[2] == ' ' && rest[3] == '|' && rest[4] == ' ' {
					if lvl := capnsLevel(rest[1]); lvl != LevelUnknown {
						if wrapTime.IsZero() || zone {
							e.Time = t
						} else {
							e.Time = wrapTime // the wrapper's time knows its zone
						}
						e.Level = lvl
						e.Format = FormatCapnslog
						e.Component, e.Msg = splitComponent(rest[5:])
						return true
					}
					return false
				}
				if len(rest) > 0 && rest[0] == '\t' {
					if p.parseConsole(rest[1:], e) {
						e.Time = t
						return true
					}
					// an export's "time<TAB>line"
					wrapTime, line, wordsOK = t, rest[1:], true
					continue
				}
				if len(rest) > 1 && rest[0] == ' ' {
					rest = rest[1:]
					// A zone after the time ("2024-05-01 10:00:00 UTC",
					// Go's "+0000 UTC") belongs to the time: it is
					// neither a host nor a member.
					if k, off, known, ok := zoneAfterTime(rest); ok {
						if !zone && known {
							var utc timeParser
							t, _, _, _ = utc.parseISO(line)
							t = t.Add(-time.Duration(off) * time.Second)
						}
						if rest = rest[k:]; len(rest) == 0 {
							return false
						}
					}
					if len(rest) > 2 && rest[0] == '|' && rest[1] == ' ' { // a table's time column
						wrapTime, line, wordsOK = t, rest[2:], true
						continue
					}
					if s, ok := criStream(rest); ok {
						wrapTime, line = t, s
						continue
					}
					if host, prog, msg, ok := syslogTail(rest); ok {
						wrapTime, line, bareOK = t, msg, true
						e.Host, e.Prog = host, prog
						continue
					}
					// kubectl logs --timestamps, or an export's "time line"
					wrapTime, line, wordsOK = t, rest, true
					continue
				}
				return false
			}
			if name, rest, ok := clockPrefix(line); ok { // goreman
				e.Host = name
				line = rest
				continue
			}
			if n, ok := clockOnly(line); ok { // Jenkins' timestamper: "10:52:31 "
				line, wordsOK = line[n:], true
				continue
			}
			if t, n, ok := epochPrefix(line); ok { // "1700000000.123 "
				wrapTime, line, wordsOK = t, line[n:], true
				continue
			}
			if n, ok := elapsedPrefix(line); ok { // "39.826 ", seconds since a test began
				// A number alone says too little: only a line of
				// etcd's own format (zap, capnslog) follows it, or a
				// time that starts a wrapper of its own.
				line = line[n:]
				continue
			}
		default:
			if t, n, ok := p.tp.parseSyslog(line, p.year); ok && n < len(line) && line[n] == ' ' {
				if !p.soon.IsZero() && t.After(p.soon) {
					t = t.AddDate(-1, 0, 0)
				}
				if host, prog, msg, ok := syslogTail(line[n+1:]); ok {
					wrapTime, line, bareOK = t, msg, true
					e.Host, e.Prog = host, prog
					continue
				}
				return false
			}
			if n, ok := goTestPrefix(line); ok { // zaptest's "logger.go:146: " in go test output
				line, wordsOK = line[n:], true
				continue
			}
		}
		if name, rest, ok := servicePrefix(line); ok { // docker compose
			// a log viewer's table: "name | container | time | line";
			// the member is the first column, not its container
			if !wasColumn {
				e.Host = name
			}
			line, column = rest, true
			continue
		}
		if bareOK {
			e.Format = FormatBare
			e.Time = wrapTime
			e.Msg = line
			return true
		}
		if wordsOK {
			if comp, msg := splitComponent(line); len(msg) > 0 {
				if textClass(msg) != ClassNone {
					e.Format, e.Time, e.Component, e.Msg = FormatBare, wrapTime, comp, msg
					return true
				}
				if bareZap(msg, e) { // sets the message and its fields
					e.Format, e.Time, e.Component = FormatBare, wrapTime, comp
					return true
				}
			}
		}
		return false
	}
	return false
}

// zapMessagesLongestFirst are zapMessages' keys, longest first, so that a
// message is matched whole before any shorter message it starts with.
var zapMessagesLongestFirst = func() []string {
	ks := make([]string, 0, len(zapMessages))
	for k := range zapMessages {
		ks = append(ks, k)
	}
	slices.SortFunc(ks, func(a, b string) int {
		if d := len(b) - len(a); d != 0 {
			return d
		}
		return strings.Compare(a, b)
	})
	return ks
}()

// bareZap reads one of zap's constant messages written without zap's
// header, as an export of the message field writes it after a time
// ("2024-05-01T10:00:00Z apply request took too long"), maybe followed by
// the fields as JSON ({"took": "150ms", ...}) or, for a message of three
// words or more, by other text. It sets e's
// message and fields, and holds only when the message is one of etcd's
// events as zap's lines are (an "alarm raised" must name NOSPACE).
func bareZap(line []byte, e *Entry) bool {
	for _, m := range zapMessagesLongestFirst {
		if !hasPrefix(line, m) || len(line) > len(m) && line[len(m)] != ' ' && line[len(m)] != '\t' {
			continue
		}
		rest := trimSpace(line[len(m):])
		if len(rest) > 0 && rest[0] != '{' && strings.Count(m, " ") < 2 {
			// "defragmented the disk", "slow fdatasyncs are bad": a
			// word or two of zap's are someone else's words unless
			// the line ends with them or with their fields.
			return false
		}
		e.Msg = line[:len(m)]
		e.Fields = Fields{}
		if len(rest) > 0 && rest[0] == '{' {
			f := &e.Fields
			if !scanObject(rest, func(k []byte, v jval) { setField(f, k, v) }) {
				e.Fields = Fields{}
			}
		}
		if zapClass(e) != ClassNone {
			return true
		}
		e.Msg, e.Fields = nil, Fields{}
		return false
	}
	return false
}

// zoneAfterTime reads a time zone written after a time and a space:
// a numeric offset ("+0000", "-07:00"), a zone's abbreviation ("UTC",
// "CEST"), or both ("+0000 UTC", as Go prints a time), and the space
// after it. It returns the bytes to skip and the offset east of UTC in
// seconds; known says whether the text gave the offset (a number, or
// UTC, GMT or Z): other abbreviations leave the time in the parser's
// location.
func zoneAfterTime(b []byte) (n, offset int, known, ok bool) {
	if len(b) > 5 && (b[0] == '+' || b[0] == '-') {
		h, okh := digits(b[1:], 2)
		m := 3
		if b[m] == ':' {
			m++
		}
		mi, okm := digits(b[m:], 2)
		if okh && okm && h <= 14 && mi <= 59 && m+2 < len(b) && b[m+2] == ' ' {
			offset = h*3600 + mi*60
			if b[0] == '-' {
				offset = -offset
			}
			n, known, ok = m+3, true, true
		}
	}
	w := n
	for w < len(b) && b[w] >= 'A' && b[w] <= 'Z' {
		w++
	}
	if w > n && w < len(b) && (b[w] == ' ' || b[w] == '\t') {
		if name := string(b[n:w]); zoneNames[name] {
			if name == "UTC" || name == "GMT" || name == "Z" {
				known = true
			}
			n, ok = w+1, true
		}
	}
	return n, offset, known, ok
}

// zoneNames are the zone abbreviations read after a time: UTC and the
// common civil zones'. A level ("INFO", "WARN") is not one of them.
var zoneNames = map[string]bool{
	"UTC": true, "GMT": true, "Z": true,
	"WET": true, "WEST": true, "CET": true, "CEST": true, "EET": true, "EEST": true, "BST": true, "IST": true, "MSK": true,
	"EST": true, "EDT": true, "CST": true, "CDT": true, "MST": true, "MDT": true, "PST": true, "PDT": true,
	"AKST": true, "AKDT": true, "HST": true, "JST": true, "KST": true, "SGT": true, "HKT": true,
	"AEST": true, "AEDT": true, "ACST": true, "ACDT": true, "AWST": true, "NZST": true, "NZDT": true,
}

// elapsedPrefix reads "SECONDS.FRACTION " that starts a line with fewer
// digits than a time since 1970: the seconds since a test began, before
// each line of etcd's robustness test's exports ("39.826 {...}"). It
// returns the bytes to skip.
func elapsedPrefix(b []byte) (int, bool) {
	n := 0
	for n < len(b) && b[n] >= '0' && b[n] <= '9' {
		n++
	}
	if n == 0 || n > 8 || n >= len(b) || b[n] != '.' {
		return 0, false
	}
	n++
	start := n
	for n < len(b) && b[n] >= '0' && b[n] <= '9' {
		n++
	}
	if n == start || n-start > 9 || n >= len(b) || (b[n] != ' ' && b[n] != '\t') {
		return 0, false
	}
	return n + 1, true
}

func trimSpace(b []byte) []byte {
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == '\r' || b[len(b)-1] == ' ' || b[len(b)-1] == '\t') {
		b = b[:len(b)-1]
	}
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t') {
		b = b[1:]
	}
	return b
}

func capnsLevel(c byte) Level {
	switch c {
	case 'T', 'D':
		return LevelDebug
	case 'I':
		return LevelInfo
	case 'N':
		return LevelNotice
	case 'W':
		return LevelWarn
	case 'E':
		return LevelError
	case 'C':
		return LevelCritical
	}
	return LevelUnknown
}

func zapLevel(b []byte) Level {
	switch len(b) {
	case 4:
		if eqFold(b, "info") {
			return LevelInfo
		}
		if eqFold(b, "warn") {
			return LevelWarn
		}
	case 5:
		if eqFold(b, "debug") {
			return LevelDebug
		}
		if eqFold(b, "error") {
			return LevelError
		}
		if eqFold(b, "fatal") || eqFold(b, "panic") {
			return LevelCritical
		}
	case 6:
		if eqFold(b, "dpanic") {
			return LevelCritical
		}
	case 7:
		if eqFold(b, "warning") {
			return LevelWarn
		}
	}
	return LevelUnknown
}

// eqFold compares b with the lower-case ASCII s, ignoring b's case.
func eqFold(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := range b {
		if lower(b[i]) != s[i] {
			return false
		}
	}
	return true
}

func syslogPriority(b []byte) Level {
	if len(b) != 1 {
		return LevelUnknown
	}
	switch b[0] {
	case '0', '1', '2':
		return LevelCritical
	case '3':
		return LevelError
	case '4':
		return LevelWarn
	case '5':
		return LevelNotice
	case '6':
		return LevelInfo
	case '7':
		return LevelDebug
	}
	return LevelUnknown
}

// splitComponent splits capnslog's "pkg: message" into its package and
// message; a message with no package prefix comes back whole.
func splitComponent(b []byte) (comp, msg []byte) {
	for i, c := range b {
		if c == ':' {
			if i > 0 && i+1 < len(b) && b[i+1] == ' ' {
				return b[:i], b[i+2:]
			}
			return nil, b
		}
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '/' || c == '.' || c == '_' || c == '-') || i >= 64 {
			return nil, b
		}
	}
	return nil, b
}

// parseJSON reads a JSON line: zap's own lines, or a wrapper holding a line
// of text (journald -o json's MESSAGE, docker json-file's "log"). For a
// wrapper it returns the inner text and what the wrapper said about it.
func (p *Parser) parseJSON(line []byte, e *Entry, depth int) (next []byte, t time.Time, host, prog []byte, lvl Level, wrapped, ok bool) {
	var (
		msg, ts, level, caller, logger          jval
		jMessage, jRealtime, jHost, jPri, jProg jval
		dLog, dTime                             jval
		hasMsg                                  bool
	)
	f := &e.Fields
	ok = scanObject(line, func(k []byte, v jval) {
		switch string(k) {
		case "msg":
			msg, hasMsg = v, true
		case "ts":
			ts = v
		case "level":
			level = v
		case "caller":
			caller = v
		case "logger":
			logger = v
		case "MESSAGE":
			jMessage = v
		case "__REALTIME_TIMESTAMP":
			jRealtime = v
		case "_HOSTNAME":
			jHost = v
		case "PRIORITY":
			jPri = v
		case "SYSLOG_IDENTIFIER":
			jProg = v
		case "log":
			dLog = v
		case "time":
			dTime = v
		default:
			setField(f, k, v)
		}
	})
	if !ok {
		return nil, time.Time{}, nil, nil, 0, false, false
	}
	if !hasMsg && (jMessage.str || dLog.str) && depth < 2 {
		slot := depth & 1
		if jMessage.str {
			p.inner[slot] = appendUnescaped(p.inner[slot][:0], jMessage.b)
			if us, err := strconv.ParseInt(string(jRealtime.b), 10, 64); err == nil && us > 0 {
				t = time.UnixMicro(us).UTC()
			}
			return p.inner[slot], t, jHost.b, jProg.b, syslogPriority(jPri.b), true, true
		}
		p.inner[slot] = appendUnescaped(p.inner[slot][:0], dLog.b)
		if dTime.str {
			t, _, _, _ = p.tp.parseISO(dTime.b)
		}
		return p.inner[slot], t, nil, nil, LevelUnknown, true, true
	}
	if !hasMsg || !msg.str {
		return nil, time.Time{}, nil, nil, 0, false, false
	}
	e.Format = FormatZapJSON
	e.Msg = msg.b
	if msg.esc {
		p.inner[1] = appendUnescaped(p.inner[1][:0], msg.b)
		e.Msg = p.inner[1]
	}
	e.Level = zapLevel(level.b)
	e.Component = caller.b
	e.Logger = logger.b
	if ts.str {
		e.Time, _, _, _ = p.tp.parseISO(ts.b)
	} else if len(ts.b) > 0 {
		e.Time, _ = parseEpoch(ts.b)
	}
	return nil, time.Time{}, nil, nil, 0, false, true
}

// parseConsole reads the part of a zap console line after its time:
// "level\t[logger\t]caller\tmessage[\t{fields}]".
func (p *Parser) parseConsole(b []byte, e *Entry) bool {
	i := bytes.IndexByte(b, '\t')
	if i < 0 {
		return false
	}
	e.Level = zapLevel(b[:i])
	if e.Level == LevelUnknown {
		return false
	}
	rest := b[i+1:]
	// Up to two segments before the message: the logger's name and the
	// caller (file.go:line). etcd logs the caller; a logger built without
	// zap.AddCaller (zaptest's, in etcd's integration tests) writes only
	// the name ("m1.raft").
	for k := 0; k < 2; k++ {
		j := bytes.IndexByte(rest, '\t')
		if j < 0 {
			break
		}
		seg := rest[:j]
		if isCaller(seg) {
			e.Component = seg
			rest = rest[j+1:]
			break
		}
		if k == 0 && isLoggerName(seg) && j+1 < len(rest) && rest[j+1] != '{' {
			e.Logger = seg
			rest = rest[j+1:]
			continue
		}
		break
	}
	e.Format = FormatZapConsole
	if j := bytes.LastIndex(rest, []byte("\t{")); j >= 0 && rest[len(rest)-1] == '}' {
		fields := rest[j+1:]
		f := &e.Fields
		if scanObject(fields, func(k []byte, v jval) { setField(f, k, v) }) {
			rest = rest[:j]
		}
	}
	e.Msg = rest
	return true
}

// isCaller reports whether a zap console segment is a caller:
// "wal/wal.go:805", or a full path to a .go file and its line.
func isCaller(seg []byte) bool {
	i := bytes.LastIndex(seg, []byte(".go:"))
	if i <= 0 || bytes.IndexByte(seg, ' ') >= 0 {
		return false
	}
	_, ok := digits(seg[i+4:], len(seg)-i-4)
	return ok && len(seg) > i+4
}

// isLoggerName reports whether a zap console segment is a logger's name:
// words of letters, digits, '_' and '-' joined by dots ("raft",
// "m1.raft", "etcd-client"), with at least one letter.
func isLoggerName(seg []byte) bool {
	if len(seg) == 0 || len(seg) > 64 || seg[0] == '.' || seg[len(seg)-1] == '.' {
		return false
	}
	letter := false
	for _, c := range seg {
		switch {
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			letter = true
		case c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.':
		default:
			return false
		}
	}
	return letter
}

func setField(f *Fields, k []byte, v jval) {
	switch string(k) {
	case "took", "taking":
		f.Took = v
	case "expected-duration":
		f.Expected = v
	case "exceeded-duration":
		f.Exceeded = v
	case "duration":
		f.Duration = v
	case "time spent":
		f.TimeSpent = v
	case "clock-drift":
		f.ClockDrift = v
	case "prefix":
		f.Prefix = v
	case "request":
		f.Request = v
	case "response":
		f.Response = v
	case "error":
		f.Error = v
	case "detail":
		f.Detail = v
	case "request content":
		f.RequestContent = v
	case "to":
		f.To = v
	case "remote-peer-id":
		f.RemotePeerID = v
	case "peer-id":
		f.PeerID = v
	case "local-member-id":
		f.LocalMemberID = v
	case "remote", "remote-addr":
		f.Remote = v
	case "alarm":
		f.Alarm = v
	case "response count":
		f.ResponseCount = v
	case "response size":
		f.ResponseSize = v
	case "name":
		f.Name = v
	case "etcd-version":
		f.EtcdVersion = v
	case "heartbeat-interval":
		f.HeartbeatInterval = v
	case "election-timeout":
		f.ElectionTimeout = v
	}
}

// kubectlPrefix reads `kubectl logs --prefix`'s "[pod/NAME/CONTAINER] ".
func kubectlPrefix(b []byte) (host, rest []byte, ok bool) {
	end := bytes.IndexByte(b, ']')
	if end < 0 || end > 512 || end+1 >= len(b) || b[end+1] != ' ' {
		return nil, nil, false
	}
	inner := b[1:end]
	if bytes.IndexByte(inner, ' ') >= 0 {
		return nil, nil, false
	}
	parts := bytes.Split(inner, []byte("/"))
	if len(parts) < 2 || len(parts[1]) == 0 {
		return nil, nil, false
	}
	return parts[1], b[end+2:], true
}

// e2ePrefix reads the "(member-0) (19844): " that etcd's end-to-end test
// framework puts before each member's lines.
func e2ePrefix(b []byte) (host, rest []byte, ok bool) {
	end := bytes.Index(b, []byte(") ("))
	if end < 2 || end > 64 || bytes.IndexByte(b[1:end], ' ') >= 0 {
		return nil, nil, false
	}
	pid := b[end+3:]
	i := bytes.Index(pid, []byte("): "))
	if i <= 0 {
		return nil, nil, false
	}
	if _, ok := digits(pid, i); !ok {
		return nil, nil, false
	}
	return b[1:end], pid[i+3:], true
}

// criStream reads the container runtime's "stdout F " / "stderr P " after
// the time of a /var/log/containers line.
func criStream(b []byte) ([]byte, bool) {
	if len(b) < 9 || b[6] != ' ' || b[8] != ' ' || (b[7] != 'F' && b[7] != 'P') {
		return nil, false
	}
	if !bytes.HasPrefix(b, []byte("stdout")) && !bytes.HasPrefix(b, []byte("stderr")) {
		return nil, false
	}
	return b[9:], true
}

// syslogTail reads journald's and syslog's "HOST PROG[PID]: message" (the
// part after the time).
func syslogTail(b []byte) (host, prog, msg []byte, ok bool) {
	if k, _, _, ok := zoneAfterTime(b); ok { // "Aug 12 09:27:04 UTC host ...": the zone is not a host
		b = b[k:]
	}
	sp := bytes.IndexByte(b, ' ')
	if sp <= 0 || sp > 255 {
		return nil, nil, nil, false
	}
	host = b[:sp]
	rest := b[sp+1:]
	colon := bytes.Index(rest, []byte(": "))
	if colon <= 0 || colon > 128 {
		return nil, nil, nil, false
	}
	prog = rest[:colon]
	if bytes.IndexByte(prog, ' ') >= 0 || bytes.IndexByte(prog, '"') >= 0 || bytes.IndexByte(prog, '{') >= 0 {
		return nil, nil, nil, false
	}
	if i := bytes.IndexByte(prog, '['); i >= 0 {
		if prog[len(prog)-1] != ']' || i == 0 {
			return nil, nil, nil, false
		}
		if _, ok := digits(prog[i+1:len(prog)-1], len(prog)-i-2); !ok {
			return nil, nil, nil, false
		}
		prog = prog[:i]
	}
	return host, prog, rest[colon+2:], true
}

// clockOnly reads a time of day that starts a line, "15:04:05" with maybe
// a fraction, and a space: Jenkins' timestamper. It returns the bytes to
// skip; the day is unknown, so the time is not kept.
func clockOnly(b []byte) (int, bool) {
	if len(b) < 9 || b[2] != ':' || b[5] != ':' {
		return 0, false
	}
	h, ok1 := digits(b, 2)
	m, ok2 := digits(b[3:], 2)
	sec, ok3 := digits(b[6:], 2)
	if !(ok1 && ok2 && ok3) || h > 23 || m > 59 || sec > 60 {
		return 0, false
	}
	n := 8
	if b[n] == '.' || b[n] == ',' {
		n++
		start := n
		for n < len(b) && b[n] >= '0' && b[n] <= '9' {
			n++
		}
		if n == start {
			return 0, false
		}
	}
	if n >= len(b) || (b[n] != ' ' && b[n] != '\t') {
		return 0, false
	}
	return n + 1, true
}

// epochPrefix reads "SECONDS.FRACTION " that starts a line (seconds since
// 1970, as etcd's robustness test reports write them) and returns the
// time and the bytes to skip.
func epochPrefix(b []byte) (time.Time, int, bool) {
	n := 0
	for n < len(b) && b[n] >= '0' && b[n] <= '9' {
		n++
	}
	if n < 9 || n > 11 || n >= len(b) || b[n] != '.' {
		return time.Time{}, 0, false
	}
	n++
	start := n
	for n < len(b) && b[n] >= '0' && b[n] <= '9' {
		n++
	}
	if n == start || n-start > 9 || n >= len(b) || (b[n] != ' ' && b[n] != '\t') {
		return time.Time{}, 0, false
	}
	t, ok := parseEpoch(b[:n])
	return t, n + 1, ok
}

// goTestPrefix reads the "logger.go:146: " that `go test` puts before what
// a test logs (zaptest's loggers in etcd's integration tests) and returns
// the bytes to skip.
func goTestPrefix(b []byte) (int, bool) {
	i := bytes.Index(b, []byte(".go:"))
	if i <= 0 || i > 64 {
		return 0, false
	}
	for _, c := range b[:i] {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return 0, false
		}
	}
	n := i + 4
	start := n
	for n < len(b) && b[n] >= '0' && b[n] <= '9' {
		n++
	}
	if n == start || n+1 >= len(b) || b[n] != ':' || b[n+1] != ' ' {
		return 0, false
	}
	return n + 2, true
}

// clockPrefix reads goreman's "15:04:05 name | " (etcd's Procfile).
func clockPrefix(b []byte) (name, rest []byte, ok bool) {
	if len(b) < 9 || b[2] != ':' || b[5] != ':' || b[8] != ' ' {
		return nil, nil, false
	}
	if _, ok := digits(b, 2); !ok {
		return nil, nil, false
	}
	return servicePrefix(b[9:])
}

// servicePrefix reads docker compose's "name  | " (and goreman's after its
// clock): a word, spaces, a bar and a space.
func servicePrefix(b []byte) (name, rest []byte, ok bool) {
	i := 0
	for i < len(b) && i < 64 {
		c := b[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.' || c == '-') {
			break
		}
		i++
	}
	if i == 0 || i >= len(b) || b[i] != ' ' {
		return nil, nil, false
	}
	j := i
	for j < len(b) && b[j] == ' ' {
		j++
	}
	if j+1 >= len(b) || b[j] != '|' || (b[j+1] != ' ' && j+2 != len(b)) {
		return nil, nil, false
	}
	if j+2 > len(b) {
		return nil, nil, false
	}
	return b[:i], b[min(j+2, len(b)):], true
}
