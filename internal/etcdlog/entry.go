// Package etcdlog reads etcd's logs and turns the lines that matter into
// typed events.
//
// It understands the three formats etcd 3.1 to 3.7 write: capnslog text
// ("2017-03-29 15:50:15.586058 W | etcdserver: ..."), zap JSON
// ({"level":"warn","ts":...,"msg":"apply request took too long",...}) and
// zap console (tab separated), also when wrapped by `kubectl logs
// --timestamps`, the container runtime's log files, docker's json-file
// driver, `journalctl -o short`, `-o short-iso` or `-o json`,
// `kubectl logs --prefix`, docker compose or goreman prefixes, and the
// times that pasted or exported logs start with (seconds since 1970, a
// time of day, an RFC 3339 time before a space or a tab) or `go test`'s
// "logger.go:146: ".
//
// Parsing is streaming and allocation-light: a Parser reuses its buffers,
// an Entry points into the line it came from, and only classified lines
// (Events) copy what they keep. Lines that are not etcd log lines are
// counted, never fatal.
package etcdlog

import "time"

// Format is the layout of a log line.
type Format uint8

// The formats etcd writes, plus Bare: a message without etcd's own header,
// as journald shows capnslog's messages when etcd runs under systemd.
const (
	FormatUnknown Format = iota
	FormatCapnslog
	FormatZapJSON
	FormatZapConsole
	FormatBare
)

var formatNames = [...]string{"unknown", "capnslog", "zap-json", "zap-console", "bare"}

// String returns the name used in the Result ("capnslog", "zap-json", ...).
func (f Format) String() string {
	if int(f) < len(formatNames) {
		return formatNames[f]
	}
	return "unknown"
}

// Level is the severity of a line.
type Level uint8

// The levels, mapped from capnslog's letters (T D I N W E C), zap's names
// and syslog priorities.
const (
	LevelUnknown Level = iota
	LevelDebug
	LevelInfo
	LevelNotice
	LevelWarn
	LevelError
	LevelCritical // capnslog C, zap dpanic/panic/fatal, syslog 0-2
)

var levelNames = [...]string{"", "debug", "info", "notice", "warn", "error", "critical"}

// String returns the level's name ("warn"), empty when unknown.
func (l Level) String() string {
	if int(l) < len(levelNames) {
		return levelNames[l]
	}
	return ""
}

// jval is a raw JSON value inside a line: the bytes of a string's content
// (still escaped when esc is set) or of a number/literal.
type jval struct {
	b   []byte
	esc bool
	str bool
}

func (v jval) empty() bool { return len(v.b) == 0 }

// Fields are the zap fields etcdlog reads; the rest of a line's fields are
// skipped. The values point into the line.
type Fields struct {
	Took, Expected, Exceeded, Duration, TimeSpent, ClockDrift jval
	Prefix, Request, Response, Error, Detail, RequestContent  jval
	To, RemotePeerID, PeerID, LocalMemberID, Remote, Alarm    jval
	ResponseCount, ResponseSize, Name, EtcdVersion            jval
	HeartbeatInterval, ElectionTimeout                        jval
}

// Entry is one parsed line. Its byte slices point into the line (or the
// Parser's scratch buffer) and are valid until the Parser's next call.
type Entry struct {
	// Time is the line's timestamp; zero when it has none.
	Time   time.Time
	Level  Level
	Format Format
	// Component is capnslog's package ("etcdserver"), or zap's caller
	// ("etcdserver/util.go:170").
	Component []byte
	// Logger is zap's logger name ("raft"), when set.
	Logger []byte
	Msg    []byte
	// Host is the member a wrapper named: journald's host, kubectl's
	// --prefix pod, a compose or goreman service name.
	Host []byte
	// Prog is the program a syslog or journald wrapper named ("etcd" of
	// "etcd[812]:", journald's SYSLOG_IDENTIFIER), when one did.
	Prog   []byte
	Fields Fields
}
