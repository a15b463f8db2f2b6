package etcdlog

import "bytes"

// Field extraction: once Classify has named a line's class, extract reads
// its numbers and names (durations, the request's key and response size,
// peers, the leader and term) from zap's fields or, for capnslog and bare
// lines, from the text of the message.

// unescape returns v's text, unescaped into buf when it has escapes.
func unescape(buf *[]byte, v jval) []byte {
	if !v.esc {
		return v.b
	}
	*buf = appendUnescaped((*buf)[:0], v.b)
	return *buf
}

// extract fills the event's numbers and names from the line's fields or,
// for capnslog and bare lines, from its text.
func (cl *Classifier) extract(e *Entry, ev *Event) {
	f := &e.Fields
	m := e.Msg
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
		if !v.empty() && !v.esc {
			ev.Peer = v.b
			break
		}
	}
	if !f.Remote.esc {
		ev.Remote = f.Remote.b
	}
	switch ev.Class {
	case SlowApply, SlowReadOnlyRange, SlowReadOnlyTxn, SlowRequest:
		req := f.Request
		if ev.Class == SlowRequest {
			req = f.RequestContent
		}
		if !req.empty() {
			ev.Request = unescape(&cl.req, req)
			ev.Response = unescape(&cl.resp, f.Response)
			cl.setKey(ev, ev.Request)
		} else if ev.Class != SlowRequest {
			cl.capnsRequest(m, ev)
		}
		if len(ev.Response) > 0 {
			ev.Count, ev.Size = responseNumbers(ev.Response)
		}
		if len(f.ResponseCount.b) > 0 {
			ev.Count = leadingInt(f.ResponseCount.b)
		}
		if len(f.ResponseSize.b) > 0 {
			ev.Size = leadingInt(f.ResponseSize.b)
		}
		if ev.Class == SlowApply && ev.Took == 0 && hasPrefix(m, "apply entries took too long [") {
			ev.Took, _ = parseDur(between(m, "[", " for "))
		}
	case SlowTrace:
		cl.traceDetail(unescape(&cl.req, f.Detail), ev)
	case HeartbeatLate:
		if ev.Took == 0 && contains(m, "(deadline exceeded for ") { // 2.3
			ev.Took, _ = parseDur(between(m, "(deadline exceeded for ", ")"))
		}
		if ev.Took == 0 { // "(exceeded the 100ms timeout for 288.9ms[, to 5dbbb8ef1fbd1ef4])"
			ev.Expected, _ = parseDur(between(m, "exceeded the ", " timeout"))
			rest := after(m, " timeout for ")
			end := bytes.IndexAny(rest, ",)")
			if end > 0 {
				ev.Took, _ = parseDur(rest[:end])
			}
			if p := after(m, ", to "); len(p) > 0 {
				ev.Peer = hexWord(p)
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
			ev.Peer = hexWord(after(m, "against peer "))
			ev.Took, _ = parseDur(between(m, "[", " > "))
			ev.Expected, _ = parseDur(between(m, " > ", "]"))
		}
	case Compaction:
		if ev.Took == 0 { // "finished scheduled compaction at 6350 (took 707.213µs)"
			ev.Took, _ = parseDur(between(m, "(took ", ")"))
		}
	case SnapshotSent, SnapshotFailed:
		if len(ev.Peer) == 0 {
			ev.Peer = hexWord(after(m, "to: "))
		}
	case PeerUnhealthy, MessageDropped:
		if len(ev.Peer) == 0 {
			for _, s := range [...]string{"health check for peer ", "with peer ", "peer ", "failed to dial ", "failed to read ", "failed to write ", "failed to post ", "message to ", "message from "} {
				if p := hexWord(after(m, s)); len(p) >= 8 {
					ev.Peer = p
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
	ev.Self = hexWord(s)
	if t := after(m, " at term "); len(t) > 0 {
		n := 0
		for n < len(t) && t[n] >= '0' && t[n] <= '9' {
			n++
		}
		if v := leadingInt(t[:n]); v > 0 {
			ev.Term = uint64(v)
		}
	}
	switch ev.Class {
	case LeaderElected:
		ev.Leader = hexWord(after(m, " elected leader "))
	case LeaderChanged:
		ev.Peer = hexWord(after(m, " changed leader from "))
		ev.Leader = hexWord(after(m, " to "))
	case LeaderLost:
		ev.Leader = hexWord(after(m, " lost leader "))
	}
}

// capnsRequest reads capnslog's `[read-only range ]request "..." with
// result "..." took too long (1.2s) to execute`.
func (cl *Classifier) capnsRequest(m []byte, ev *Event) {
	i := bytes.Index(m, []byte(`request "`))
	if i < 0 {
		return
	}
	q := i + len(`request `)
	end := goQuotedEnd(m, q)
	if end < 0 {
		return
	}
	if req, ok := goUnquote(cl.req[:0], m[q:end]); ok {
		cl.req = req
		ev.Request = req
		cl.setKey(ev, req)
	}
	rest := m[end:]
	if hasPrefix(rest, ` with result "`) {
		q2 := end + len(` with result `)
		if end2 := goQuotedEnd(m, q2); end2 > 0 {
			if resp, ok := goUnquote(cl.resp[:0], m[q2:end2]); ok {
				cl.resp = resp
				ev.Response = resp
			}
		}
	}
	if j := bytes.LastIndex(m, []byte(" took too long (")); j >= 0 {
		ev.Took, _ = parseDur(between(m[j:], "(", ")"))
	}
}

// goUnquote appends the content of a Go-quoted string (as %q writes it) to
// dst. It handles the escapes %q writes for printable text (\" \\ \n \t)
// and keeps others as written.
func goUnquote(dst, q []byte) ([]byte, bool) {
	if len(q) < 2 || q[0] != '"' || q[len(q)-1] != '"' {
		return dst, false
	}
	s := q[1 : len(q)-1]
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 == len(s) {
			dst = append(dst, c)
			continue
		}
		i++
		switch s[i] {
		case '"', '\\':
			dst = append(dst, s[i])
		case 'n':
			dst = append(dst, '\n')
		case 't':
			dst = append(dst, '\t')
		default:
			dst = append(dst, '\\', s[i])
		}
	}
	return dst, true
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
func (cl *Classifier) traceDetail(b []byte, ev *Event) {
	key := semiField(b, "range_begin:")
	if key == nil {
		key = semiField(b, "key:")
	}
	if len(key) > 0 {
		ev.Key = key
		ev.Prefix = key[:keyPrefixLen(key, len(semiField(b, "range_end:")) > 0)]
	}
	if v := semiField(b, "response_count:"); len(v) > 0 {
		ev.Count = leadingInt(v)
	}
	ev.Request = b
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
// the first key, and whether a range end follows it.
func (cl *Classifier) setKey(ev *Event, req []byte) {
	k := fieldAt(req, `key:"`, " <{")
	if k < 0 {
		return
	}
	key, n, ok := protoString(cl.key[:0], req[k+len(`key:`):])
	if !ok {
		return
	}
	cl.key = key
	rest := req[k+len(`key:`)+n:]
	ev.Key = key
	ev.Prefix = key[:keyPrefixLen(key, hasPrefix(rest, ` range_end:"`))]
}

// protoString appends the quoted string at the start of b, as protobuf's
// text format prints it, to dst with \" and \\ unescaped (other escapes
// are kept as printed), and returns it with the bytes of b it used.
func protoString(dst, b []byte) ([]byte, int, bool) {
	if len(b) == 0 || b[0] != '"' {
		return dst, 0, false
	}
	for i := 1; i < len(b); i++ {
		c := b[i]
		switch c {
		case '\\':
			if i+1 < len(b) && (b[i+1] == '"' || b[i+1] == '\\') {
				dst = append(dst, b[i+1])
				i++
				continue
			}
			dst = append(dst, c)
		case '"':
			return dst, i + 1, true
		default:
			dst = append(dst, c)
		}
	}
	return dst, 0, false
}

// responseNumbers reads "range_response_count:1 size:293" (or "size:96",
// "responses:<range_response_count:0 > size:6").
func responseNumbers(b []byte) (count, size int64) {
	count, size = -1, -1
	if v := after(b, "range_response_count:"); v != nil {
		count = leadingInt(v)
	}
	if i := bytes.LastIndex(b, []byte("size:")); i >= 0 {
		size = leadingInt(b[i+5:])
	}
	return count, size
}

// leadingInt reads the decimal number at the start of b, -1 if none.
func leadingInt(b []byte) int64 {
	var v int64
	n := 0
	for n < len(b) && b[n] >= '0' && b[n] <= '9' && n < 18 {
		v = v*10 + int64(b[n]-'0')
		n++
	}
	if n == 0 {
		return -1
	}
	return v
}
