package etcdlog

import (
	"bytes"
	"strconv"
	"time"
)

// Event is a classified line. Its strings are copies: it outlives the line.
type Event struct {
	Class Class
	// Also is a second class the same line supports: a slow request whose
	// error says it timed out, or that the database is full.
	Also  Class
	Time  time.Time
	Level Level
	// Took is the duration the line reports (see ClassInfo.Took), Expected
	// the limit etcd compared it with; zero when the line says none.
	Took, Expected time.Duration
	// Key is the first key a request names, Prefix its key prefix.
	Key, Prefix string
	// Count and Size are a response's key count and size in bytes (-1 when
	// the line does not say).
	Count, Size int64
	// Self is the member id the line names as its own (raft lines), Peer
	// the other member, Leader the leader an election line names.
	Self, Peer, Leader string
	Term               uint64
	Remote             string
	Request, Response  string
	Msg                string
}

// Lengths beyond which an Event's texts are cut.
const (
	maxMsg     = 512
	maxRequest = 512
)

// Classify reports whether e is an event and fills ev. It checks the cheap
// things first: zap's constant messages by map lookup, capnslog's by their
// first byte, and the texts of errors only on warnings and errors.
func Classify(e *Entry, ev *Event) bool {
	*ev = Event{Count: -1, Size: -1}
	msg := e.Msg
	if len(msg) == 0 {
		return false
	}
	c := ClassNone
	if e.Format == FormatZapJSON || e.Format == FormatZapConsole {
		c = zapClass(e)
	}
	if c == ClassNone {
		c = textClass(msg)
	}
	also := ClassNone
	if e.Level >= LevelWarn || e.Level == LevelUnknown {
		also = errorClass(msg, e.Fields.Error)
	}
	if c == ClassNone {
		c, also = also, ClassNone
	} else if also == c {
		also = ClassNone
	}
	if c == ClassNone {
		return false
	}
	ev.Class, ev.Also = c, also
	ev.Time, ev.Level = e.Time, e.Level
	ev.Msg = clip(msg, maxMsg)
	extract(e, ev)
	return true
}

// zapMessages maps zap's constant messages to their class. Messages that
// need a field to decide are refined in zapClass.
var zapMessages = map[string]Class{
	"apply request took too long": SlowApply,
	"request stats":               SlowRequest,
	"leader failed to send out heartbeat on time; took too long, leader is overloaded likely from slow disk": HeartbeatLate,
	"slow fdatasync": SlowFdatasync,
	"timed out waiting for read index response (local node might have slow network)": RequestTimeout,
	"waiting for ReadIndex response took too long, retrying":                         ReadIndexSlow,
	"sent database snapshot":                                                            SnapshotSent,
	"failed to send database snapshot":                                                  SnapshotFailed,
	"failed to save incoming database snapshot":                                         SnapshotFailed,
	"snapshotting taking too long to transfer":                                          SnapshotSlow,
	"prober detected unhealthy status":                                                  PeerUnhealthy,
	"lost TCP streaming connection with remote peer":                                    PeerUnhealthy,
	"peer became inactive (message send to peer failed)":                                PeerUnhealthy,
	"failed to reach the peer URL":                                                      PeerUnhealthy,
	"failed to read Raft message":                                                       PeerUnhealthy,
	"failed to decode Raft message":                                                     PeerUnhealthy,
	"dropped internal Raft message since sending buffer is full (overloaded network)":   MessageDropped,
	"dropped internal Raft message since receiving buffer is full (overloaded network)": MessageDropped,
	"dropped Raft message since sending buffer is full (overloaded network)":            MessageDropped,
	"dropped Raft message since receiving buffer is full (overloaded network)":          MessageDropped,
	"prober found high clock drift":                                                     ClockDrift,
	"message exceeded backend quota; raising alarm":                                     DBSpaceExceeded,
	"alarm raised":                     DBSpaceExceeded,
	"finished scheduled compaction":    Compaction,
	"failed auto periodic compaction":  CompactionFailed,
	"failed auto revision compaction":  CompactionFailed,
	"Failed compaction":                CompactionFailed,
	"compaction encountered error":     CompactionFailed,
	"defragmented":                     Defrag,
	"finished defragmenting directory": Defrag,
	"failed to defragment":             DefragFailed,
}

func zapClass(e *Entry) Class {
	c, ok := zapMessages[string(e.Msg)]
	if !ok {
		return ClassNone
	}
	f := &e.Fields
	switch c {
	case SlowApply:
		switch {
		case bytes.HasPrefix(f.Prefix.b, []byte("read-only range")):
			return SlowReadOnlyRange
		case bytes.HasPrefix(f.Prefix.b, []byte("read-only txn")):
			return SlowReadOnlyTxn
		}
	case SlowRequest:
		// 3.4 logs every request's stats at debug level; only 3.5+'s
		// warning is about a slow request.
		if e.Level != LevelWarn {
			return ClassNone
		}
	case DBSpaceExceeded:
		if string(e.Msg) == "alarm raised" && !bytes.Contains(f.Alarm.b, []byte("NOSPACE")) {
			return ClassNone
		}
	}
	return c
}

func hasPrefix(b []byte, s string) bool {
	return len(b) >= len(s) && string(b[:len(s)]) == s
}

func contains(b []byte, s string) bool { return bytes.Contains(b, []byte(s)) }

// textClass classifies capnslog's messages, journald's bare ones and
// zap's raft and trace messages, whose text varies.
func textClass(m []byte) Class {
	switch m[0] {
	case 'a':
		switch {
		case hasPrefix(m, "apply entries took too long"):
			return SlowApply
		case hasPrefix(m, "avoid queries with large range"):
			return LargeRangeWarning
		case hasPrefix(m, "alarm ") && contains(m, "NOSPACE"),
			hasPrefix(m, "applying raft message exceeded backend quota"):
			return DBSpaceExceeded
		}
	case 'r':
		switch {
		case hasPrefix(m, `read-only range request "`):
			return SlowReadOnlyRange
		case hasPrefix(m, `request "`) && contains(m, " took too long ("):
			return SlowApply
		case hasPrefix(m, "raft.node: "):
			return raftNodeClass(m)
		}
	case 'f':
		switch {
		case hasPrefix(m, "failed to send out heartbeat on time"):
			return HeartbeatLate
		case hasPrefix(m, "finished scheduled compaction"):
			return Compaction
		case hasPrefix(m, "finished defragmenting the storage backend"):
			return Defrag
		case hasPrefix(m, "failed to defragment"):
			return DefragFailed
		case hasPrefix(m, "failed to decode raft message"), hasPrefix(m, "failed to read raft message"),
			hasPrefix(m, "failed to reach the peerURL"):
			return PeerUnhealthy
		case hasPrefix(m, "failed to dial "), hasPrefix(m, "failed to read "), hasPrefix(m, "failed to write "), hasPrefix(m, "failed to post "):
			if contains(m, " on stream ") || contains(m, " on pipeline") {
				return PeerUnhealthy
			}
		}
	case 's':
		switch {
		case hasPrefix(m, "server is likely overloaded"):
			return ServerOverloaded
		case hasPrefix(m, "sync duration of "):
			return SlowFdatasync
		case hasPrefix(m, "snapshotting is taking more than"):
			return SnapshotSlow
		}
	case 't':
		switch {
		case hasPrefix(m, "trace["):
			return SlowTrace
		case hasPrefix(m, "the clock difference against peer "):
			return ClockDrift
		case hasPrefix(m, "timed out waiting for read index response"):
			return RequestTimeout
		case hasPrefix(m, "the connection with ") && contains(m, "became inactive"):
			return PeerUnhealthy
		}
	case 'w':
		switch {
		case hasPrefix(m, "waiting for ReadIndex response took too long"):
			return ReadIndexSlow
		case hasPrefix(m, "wal/wal.go: WAL.sync: sync duration of "): // 3.0
			return SlowFdatasync
		}
	case 'h':
		if hasPrefix(m, "health check for peer ") {
			return PeerUnhealthy
		}
	case 'l':
		if hasPrefix(m, "lost the TCP streaming connection with peer") {
			return PeerUnhealthy
		}
	case 'p':
		if hasPrefix(m, "peer ") && contains(m, " became inactive") {
			return PeerUnhealthy
		}
	case 'd':
		switch {
		case hasPrefix(m, "database snapshot ["):
			if contains(m, "] sent out successfully") {
				return SnapshotSent
			}
			if contains(m, "] failed to be sent out") {
				return SnapshotFailed
			}
		case hasPrefix(m, "dropped internal raft message"):
			return MessageDropped
		}
	case 'F':
		if hasPrefix(m, "Failed auto-compaction at revision") {
			return CompactionFailed
		}
	case 'A':
		if hasPrefix(m, "A tick missed to fire") {
			return TickMissed
		}
	}
	if isHex(m[0]) {
		// raft's "%x is starting a new election at term %d" and
		// "%x [(leader %v) ]A tick missed to fire."
		sp := bytes.IndexByte(m, ' ')
		if sp >= 1 && sp <= 16 && allHex(m[:sp]) {
			rest := m[sp+1:]
			switch {
			case hasPrefix(rest, "is starting a new election at term "):
				return ElectionStarted
			case contains(rest, "A tick missed to fire"):
				return TickMissed
			}
		}
	}
	return ClassNone
}

func raftNodeClass(m []byte) Class {
	switch {
	case contains(m, " elected leader "):
		return LeaderElected
	case contains(m, " changed leader from "):
		return LeaderChanged
	case contains(m, " lost leader "):
		return LeaderLost
	}
	return ClassNone
}

// errorClass finds the failures etcd reports inside other messages or in
// a zap "error" field.
func errorClass(msg []byte, errField jval) Class {
	for _, b := range [2][]byte{errField.b, msg} {
		if len(b) == 0 {
			continue
		}
		switch {
		case contains(b, "request timed out"):
			return RequestTimeout
		case contains(b, "database space exceeded"), contains(b, "etcdserver: no space"):
			return DBSpaceExceeded
		}
	}
	return ClassNone
}

func isHex(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' }

func allHex(b []byte) bool {
	for _, c := range b {
		if !isHex(c) {
			return false
		}
	}
	return len(b) > 0
}

func clip(b []byte, n int) string {
	if len(b) > n {
		return string(b[:n]) + "..."
	}
	return string(b)
}

// extract fills the event's numbers and names from the line's fields or,
// for capnslog and bare lines, from its text.
func extract(e *Entry, ev *Event) {
	f := &e.Fields
	m := e.Msg
	var scratch []byte
	str := func(v jval) string {
		if v.esc {
			scratch = appendUnescaped(scratch[:0], v.b)
			return string(scratch)
		}
		return string(v.b)
	}
	// Durations from zap fields.
	took := f.Took
	switch ev.Class {
	case HeartbeatLate:
		took = f.Exceeded
	case SlowRequest:
		took = f.TimeSpent
	case SlowTrace:
		took = f.Duration
	case ClockDrift:
		took = f.ClockDrift
	}
	if d, ok := parseDur(took.b); ok {
		ev.Took = d
	}
	if d, ok := parseDur(f.Expected.b); ok {
		ev.Expected = d
	}
	for _, v := range [...]jval{f.To, f.RemotePeerID, f.PeerID} {
		if !v.empty() {
			ev.Peer = str(v)
			break
		}
	}
	if !f.Remote.empty() {
		ev.Remote = str(f.Remote)
	}
	switch ev.Class {
	case SlowApply, SlowReadOnlyRange, SlowReadOnlyTxn, SlowRequest:
		req, resp := f.Request, f.Response
		if ev.Class == SlowRequest {
			req = f.RequestContent
		}
		if !req.empty() {
			ev.Request = clip([]byte(str(req)), maxRequest)
			setKey(ev, []byte(str(req)))
			ev.Response = str(resp)
		} else if ev.Class != SlowRequest {
			capnsRequest(m, ev)
		}
		if ev.Response != "" {
			ev.Count, ev.Size = responseNumbers(ev.Response)
		}
		if n, err := strconv.ParseInt(string(f.ResponseCount.b), 10, 64); err == nil {
			ev.Count = n
		}
		if n, err := strconv.ParseInt(string(f.ResponseSize.b), 10, 64); err == nil {
			ev.Size = n
		}
		if ev.Class == SlowApply && ev.Took == 0 && hasPrefix(m, "apply entries took too long [") {
			ev.Took, _ = parseDur(between(m, "[", " for "))
		}
	case SlowTrace:
		traceDetail(str(f.Detail), ev)
	case HeartbeatLate:
		if ev.Took == 0 { // "(exceeded the 100ms timeout for 288.9ms[, to 5dbbb8ef1fbd1ef4])"
			ev.Expected, _ = parseDur(between(m, "exceeded the ", " timeout"))
			rest := after(m, " timeout for ")
			end := bytes.IndexAny(rest, ",)")
			if end > 0 {
				ev.Took, _ = parseDur(rest[:end])
			}
			if p := after(m, ", to "); len(p) > 0 {
				ev.Peer = string(hexWord(p))
			}
		}
	case SlowFdatasync:
		if ev.Took == 0 { // "sync duration of 4.1s, expected less than 1s"
			rest := after(m, "sync duration of ")
			if i := bytes.IndexByte(rest, ','); i > 0 {
				rest = rest[:i]
			}
			ev.Took, _ = parseDur(rest)
			ev.Expected, _ = parseDur(after(m, "expected less than "))
		}
	case ClockDrift:
		if ev.Took == 0 { // "...against peer X is too high [12.4s > 1s]"
			ev.Peer = string(hexWord(after(m, "against peer ")))
			ev.Took, _ = parseDur(between(m, "[", " > "))
			ev.Expected, _ = parseDur(between(m, " > ", "]"))
		}
	case Compaction:
		if ev.Took == 0 { // "finished scheduled compaction at 6350 (took 707.213µs)"
			ev.Took, _ = parseDur(between(m, "(took ", ")"))
		}
	case SnapshotSent, SnapshotFailed:
		if ev.Peer == "" {
			ev.Peer = string(hexWord(after(m, "to: ")))
		}
	case PeerUnhealthy, MessageDropped:
		if ev.Peer == "" {
			for _, s := range [...]string{"health check for peer ", "with peer ", "peer ", "failed to dial ", "failed to read ", "failed to write ", "failed to post ", "message to ", "message from "} {
				if p := hexWord(after(m, s)); len(p) >= 8 {
					ev.Peer = string(p)
					break
				}
			}
		}
	case LeaderElected, LeaderChanged, LeaderLost, ElectionStarted, TickMissed:
		raftFields(m, ev)
	}
}

// between returns the text of m after the first start and before the
// next end, or nil.
func between(m []byte, start, end string) []byte {
	i := bytes.Index(m, []byte(start))
	if i < 0 {
		return nil
	}
	rest := m[i+len(start):]
	j := bytes.Index(rest, []byte(end))
	if j < 0 {
		return nil
	}
	return rest[:j]
}

func after(m []byte, s string) []byte {
	i := bytes.Index(m, []byte(s))
	if i < 0 {
		return nil
	}
	return m[i+len(s):]
}

// hexWord returns the hexadecimal member id at the start of b.
func hexWord(b []byte) []byte {
	i := 0
	for i < len(b) && i < 16 && isHex(b[i]) {
		i++
	}
	return b[:i]
}

// raftFields reads raft's "raft.node: X elected leader Y at term N",
// "... changed leader from Y to Z at term N", "... lost leader Y at term N"
// and "X is starting a new election at term N".
func raftFields(m []byte, ev *Event) {
	s := m
	if hasPrefix(s, "raft.node: ") {
		s = s[len("raft.node: "):]
	}
	ev.Self = string(hexWord(s))
	if t := after(m, " at term "); len(t) > 0 {
		n := 0
		for n < len(t) && t[n] >= '0' && t[n] <= '9' {
			n++
		}
		ev.Term, _ = strconv.ParseUint(string(t[:n]), 10, 64)
	}
	switch ev.Class {
	case LeaderElected:
		ev.Leader = string(hexWord(after(m, " elected leader ")))
	case LeaderChanged:
		ev.Peer = string(hexWord(after(m, " changed leader from ")))
		ev.Leader = string(hexWord(after(m, " to ")))
	case LeaderLost:
		ev.Leader = string(hexWord(after(m, " lost leader ")))
	}
}

// capnsRequest reads capnslog's `[read-only range ]request "..." with
// result "..." took too long (1.2s) to execute`.
func capnsRequest(m []byte, ev *Event) {
	i := bytes.Index(m, []byte(`request "`))
	if i < 0 {
		return
	}
	q := i + len(`request `)
	end := goQuotedEnd(m, q)
	if end < 0 {
		return
	}
	if req, err := strconv.Unquote(string(m[q:end])); err == nil {
		ev.Request = clip([]byte(req), maxRequest)
		setKey(ev, []byte(req))
	}
	rest := m[end:]
	if hasPrefix(rest, ` with result "`) {
		q2 := end + len(` with result `)
		if end2 := goQuotedEnd(m, q2); end2 > 0 {
			if resp, err := strconv.Unquote(string(m[q2:end2])); err == nil {
				ev.Response = resp
			}
		}
	}
	if j := bytes.LastIndex(m, []byte(" took too long (")); j >= 0 {
		ev.Took, _ = parseDur(between(m[j:], "(", ")"))
	}
}

// goQuotedEnd returns the index just past the Go-quoted string starting
// at m[q], or -1.
func goQuotedEnd(m []byte, q int) int {
	if q >= len(m) || m[q] != '"' {
		return -1
	}
	for i := q + 1; i < len(m); i++ {
		switch m[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return -1
}

// traceDetail reads pkg/traceutil's detail:
// "{range_begin:/registry/pods/; range_end:/registry/pods0; response_count:0; ...}".
func traceDetail(d string, ev *Event) {
	b := []byte(d)
	key := semiField(b, "range_begin:")
	if key == nil {
		key = semiField(b, "key:")
	}
	if len(key) > 0 {
		ev.Key = string(key)
		ev.Prefix = KeyPrefix(ev.Key, string(semiField(b, "range_end:")))
	}
	if n, err := strconv.ParseInt(string(semiField(b, "response_count:")), 10, 64); err == nil {
		ev.Count = n
	}
	ev.Request = clip(b, maxRequest)
}

func semiField(b []byte, name string) []byte {
	k := fieldAt(b, name, "{ ")
	if k < 0 {
		return nil
	}
	v := b[k+len(name):]
	if j := bytes.IndexByte(v, ';'); j >= 0 {
		v = v[:j]
	}
	return v
}

// fieldAt returns the index of the first name in b that starts b or
// follows one of the bytes in seps (so that "key:" does not match inside
// "range_key:"), or -1.
func fieldAt(b []byte, name, seps string) int {
	for i := 0; i < len(b); {
		j := bytes.Index(b[i:], []byte(name))
		if j < 0 {
			return -1
		}
		k := i + j
		if k == 0 || bytes.IndexByte([]byte(seps), b[k-1]) >= 0 {
			return k
		}
		i = k + 1
	}
	return -1
}

// setKey fills the event's key and prefix from a request as etcd prints
// it (protobuf text: `key:"/registry/pods/" range_end:"/registry/pods0"`):
// the first key, and the range end that follows it, if any.
func setKey(ev *Event, req []byte) {
	k := fieldAt(req, `key:"`, " <{")
	if k < 0 {
		return
	}
	key, n, ok := protoString(req[k+len(`key:`):])
	if !ok {
		return
	}
	var end string
	rest := req[k+len(`key:`)+n:]
	if hasPrefix(rest, ` range_end:"`) {
		end, _, _ = protoString(rest[len(` range_end:`):])
	}
	ev.Key = key
	ev.Prefix = KeyPrefix(key, end)
}

// protoString reads the quoted string at the start of b as protobuf's text
// format prints it, with \" and \\ unescaped (other escapes are kept as
// printed), and returns it with the bytes it used.
func protoString(b []byte) (string, int, bool) {
	if len(b) == 0 || b[0] != '"' {
		return "", 0, false
	}
	var out []byte
	for i := 1; i < len(b); i++ {
		c := b[i]
		switch c {
		case '\\':
			if i+1 < len(b) && (b[i+1] == '"' || b[i+1] == '\\') {
				out = append(out, b[i+1])
				i++
				continue
			}
			out = append(out, c)
		case '"':
			return string(out), i + 1, true
		default:
			out = append(out, c)
		}
	}
	return "", 0, false
}

// responseNumbers reads "range_response_count:1 size:293" (or "size:96",
// "responses:<range_response_count:0 > size:6").
func responseNumbers(s string) (count, size int64) {
	count, size = -1, -1
	b := []byte(s)
	if v := after(b, "range_response_count:"); v != nil {
		count = leadingInt(v)
	}
	if i := bytes.LastIndex(b, []byte("size:")); i >= 0 {
		size = leadingInt(b[i+5:])
	}
	return count, size
}

func leadingInt(b []byte) int64 {
	n := 0
	for n < len(b) && b[n] >= '0' && b[n] <= '9' {
		n++
	}
	v, err := strconv.ParseInt(string(b[:n]), 10, 64)
	if err != nil {
		return -1
	}
	return v
}
