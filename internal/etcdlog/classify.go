package etcdlog

import (
	"bytes"
	"time"
)

// Event is a classified line. Its byte slices point into the line or the
// Classifier's buffers and are valid until the next line: whoever keeps an
// event copies what it keeps (most events are only counted).
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
	// Key is the first key a request names, Prefix its key prefix (a
	// prefix of Key).
	Key, Prefix []byte
	// Count and Size are a response's key count and size in bytes (-1 when
	// the line does not say).
	Count, Size int64
	// Self is the member id the line names as its own (raft lines), Peer
	// the other member, Leader the leader an election line names.
	Self, Peer, Leader []byte
	Term               uint64
	Remote             []byte
	Request, Response  []byte
	Msg                []byte
}

// Classifier turns Entries into Events. It keeps buffers between calls
// and is not safe for concurrent use; the zero value is ready.
type Classifier struct {
	req, resp, key []byte
}

// Lengths beyond which an Event's texts are cut.
const (
	maxMsg     = 512
	maxRequest = 512
)

// Classify reports whether e is an event and fills ev. It checks the cheap
// things first: zap's constant messages by map lookup, capnslog's by their
// first byte, and the texts of errors only on warnings and errors.
func (cl *Classifier) Classify(e *Entry, ev *Event) bool {
	*ev = Event{Count: -1, Size: -1}
	msg := e.Msg
	if len(msg) == 0 {
		return false
	}
	c := ClassNone
	if e.Format == FormatZapJSON || e.Format == FormatZapConsole || e.Format == FormatBare {
		// A bare message may be zap's, exported without its header.
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
	ev.Msg = msg
	cl.extract(e, ev)
	if ev.Class == SlowFdatasync && ev.Took > 0 && ev.Expected > 0 && ev.Took <= ev.Expected {
		// etcd warns only over its limit (wal's warnSyncDuration, 1s): a
		// line under it is someone else's, not a slow fdatasync.
		*ev = Event{Count: -1, Size: -1}
		return false
	}
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
		case hasPrefix(m, "sync duration of ") && contains(m, ", expected less than "):
			// wal's warning, logged only over warnSyncDuration (1s);
			// the same words without the limit are not etcd's.
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

// clip copies b, cut to n bytes.
func clip(b []byte, n int) string {
	if len(b) > n {
		return string(b[:n]) + "..."
	}
	return string(b)
}
