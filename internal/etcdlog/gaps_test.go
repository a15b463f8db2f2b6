package etcdlog

import (
	"testing"
	"time"
)

// Lines a held-out corpus of real logs showed were misread: each case is
// one such line (or its sibling) and what must be read from it.
func TestParseHeldOutGaps(t *testing.T) {
	slowSync := `{"level":"warn","ts":"2023-11-14T22:13:20.120Z","caller":"wal/wal.go:805","msg":"slow fdatasync","took":"1.306564s","expected-duration":"1s"}`
	heartbeat := `etcdserver: failed to send out heartbeat on time (exceeded the 100ms timeout for 401.80886ms, to 5dbbb8ef1fbd1ef4)`
	for _, c := range []struct {
		name, line string
		format     Format
		time       string // RFC3339Nano, "" for none
		logger     string
		comp, msg  string
		class      Class
		took       time.Duration
		self       string
		term       uint64
	}{
		// a. zap console without a caller: the logger's name is not part
		// of the message (etcd's integration tests log through zaptest).
		{name: "zap console, logger without caller", line: "2023-11-14T22:13:20.123Z\tINFO\tm1.raft\te6064c1f8b0ee0e4 is starting a new election at term 1\t{\"member\": \"m1\"}",
			format: FormatZapConsole, time: "2023-11-14T22:13:20.123Z", logger: "m1.raft", msg: "e6064c1f8b0ee0e4 is starting a new election at term 1", class: ElectionStarted, self: "e6064c1f8b0ee0e4", term: 1},
		{name: "zap console from go test output", line: "    logger.go:146: 2023-11-14T22:13:20.123Z\tINFO\tm1.raft\te6064c1f8b0ee0e4 became leader at term 2",
			format: FormatZapConsole, time: "2023-11-14T22:13:20.123Z", logger: "m1.raft", msg: "e6064c1f8b0ee0e4 became leader at term 2"},
		{name: "zap console, logger and caller", line: "2023-11-14T22:13:20.123Z\twarn\tetcd-server\twal/wal.go:805\tslow fdatasync\t{\"took\": \"1.5s\", \"expected-duration\": \"1s\"}",
			format: FormatZapConsole, time: "2023-11-14T22:13:20.123Z", logger: "etcd-server", comp: "wal/wal.go:805", msg: "slow fdatasync", class: SlowFdatasync, took: 1500 * time.Millisecond},
		{name: "zap console, one-word message and fields: no logger", line: "2023-11-14T22:13:20.123Z\tINFO\tdefragmented\t{\"took\": \"1.2s\"}",
			format: FormatZapConsole, time: "2023-11-14T22:13:20.123Z", msg: "defragmented", class: Defrag, took: 1200 * time.Millisecond},
		{name: "zap console, neither logger nor caller", line: "2023-11-14T22:13:20.123Z\tWARN\tslow fdatasync\t{\"took\": \"1.5s\", \"expected-duration\": \"1s\"}",
			format: FormatZapConsole, time: "2023-11-14T22:13:20.123Z", msg: "slow fdatasync", class: SlowFdatasync, took: 1500 * time.Millisecond},

		// d. only etcd's warning, over its 1s limit, is a slow fdatasync.
		{name: "a user's per-sync debug line (etcd-io/etcd#6530)", line: "2016-09-28 10:52:31.456417 W | wal: WAL.sync: sync duration of 5.306564ms",
			format: FormatCapnslog, time: "2016-09-28T10:52:31.456417Z", comp: "wal", msg: "WAL.sync: sync duration of 5.306564ms"},
		{name: "sync duration without etcd's limit", line: "2016-09-28 10:52:31.456417 W | wal: sync duration of 12.658596ms",
			format: FormatCapnslog, time: "2016-09-28T10:52:31.456417Z", comp: "wal", msg: "sync duration of 12.658596ms"},
		{name: "sync duration under the limit", line: "2016-09-28 10:52:31.456417 W | wal: sync duration of 12.658596ms, expected less than 1s",
			format: FormatCapnslog, time: "2016-09-28T10:52:31.456417Z", comp: "wal", msg: "sync duration of 12.658596ms, expected less than 1s"},
		{name: "zap slow fdatasync under its expected duration", line: `{"level":"warn","ts":"2023-11-14T22:13:20.120Z","caller":"wal/wal.go:805","msg":"slow fdatasync","took":"5.306564ms","expected-duration":"1s"}`,
			format: FormatZapJSON, time: "2023-11-14T22:13:20.12Z", comp: "wal/wal.go:805", msg: "slow fdatasync"},
		{name: "etcd's capnslog warning", line: "2018-12-15 04:37:33.398062 W | wal: sync duration of 4.136231954s, expected less than 1s",
			format: FormatCapnslog, time: "2018-12-15T04:37:33.398062Z", comp: "wal", msg: "sync duration of 4.136231954s, expected less than 1s", class: SlowFdatasync, took: 4136231954},
		{name: "etcd's zap warning", line: slowSync,
			format: FormatZapJSON, time: "2023-11-14T22:13:20.12Z", comp: "wal/wal.go:805", msg: "slow fdatasync", class: SlowFdatasync, took: 1306564 * time.Microsecond},

		// e. etcd 2.3's late heartbeat says how late too.
		{name: "etcd 2.3 late heartbeat", line: "2016-05-12 13:48:19.362501 W | etcdserver: failed to send out heartbeat on time (deadline exceeded for 546.767586ms)",
			format: FormatCapnslog, time: "2016-05-12T13:48:19.362501Z", comp: "etcdserver", msg: "failed to send out heartbeat on time (deadline exceeded for 546.767586ms)", class: HeartbeatLate, took: 546767586},

		// f. wrappers users paste: seconds since 1970, a time of day, a
		// bracketed time, an export's time and tab or message.
		{name: "robustness report seconds", line: "1700000000.123 " + slowSync,
			format: FormatZapJSON, time: "2023-11-14T22:13:20.12Z", comp: "wal/wal.go:805", msg: "slow fdatasync", class: SlowFdatasync, took: 1306564 * time.Microsecond},
		{name: "robustness report seconds, capnslog takes the wrapper's zone", line: "1700000000.123 2023-11-14 23:13:20.123000 W | " + heartbeat,
			format: FormatCapnslog, time: "2023-11-14T22:13:20.123Z", comp: "etcdserver", msg: heartbeat[len("etcdserver: "):], class: HeartbeatLate, took: 401808860},
		{name: "Jenkins timestamper", line: "22:13:20 " + slowSync,
			format: FormatZapJSON, time: "2023-11-14T22:13:20.12Z", comp: "wal/wal.go:805", msg: "slow fdatasync", class: SlowFdatasync, took: 1306564 * time.Microsecond},
		{name: "Jenkins timestamper with millis, capnslog", line: "22:13:20.125  2016-05-12 13:48:19.362501 W | etcdserver: failed to send out heartbeat on time (deadline exceeded for 546.767586ms)",
			format: FormatCapnslog, time: "2016-05-12T13:48:19.362501Z", comp: "etcdserver", msg: "failed to send out heartbeat on time (deadline exceeded for 546.767586ms)", class: HeartbeatLate, took: 546767586},
		{name: "Jenkins pipeline's bracketed time", line: "[2023-11-14T22:13:20.123Z] " + slowSync,
			format: FormatZapJSON, time: "2023-11-14T22:13:20.12Z", comp: "wal/wal.go:805", msg: "slow fdatasync", class: SlowFdatasync, took: 1306564 * time.Microsecond},
		{name: "export: time, tab, line", line: "2023-11-14T22:13:20.123Z\t" + slowSync,
			format: FormatZapJSON, time: "2023-11-14T22:13:20.12Z", comp: "wal/wal.go:805", msg: "slow fdatasync", class: SlowFdatasync, took: 1306564 * time.Microsecond},
		{name: "export: time and capnslog's message", line: "2019-05-02T10:15:31.424816+02:00 " + heartbeat,
			format: FormatBare, time: "2019-05-02T08:15:31.424816Z", comp: "etcdserver", msg: heartbeat[len("etcdserver: "):], class: HeartbeatLate, took: 401808860},
		{name: "export: time, tab and a bare message", line: "2018-12-15T04:37:33.398Z\tsync duration of 4.136231954s, expected less than 1s",
			format: FormatBare, time: "2018-12-15T04:37:33.398Z", msg: "sync duration of 4.136231954s, expected less than 1s", class: SlowFdatasync, took: 4136231954},
		{name: "export: time and another program's message", line: "2023-11-14T22:13:20.123Z Started etcd.service - etcd key-value store."},
		{name: "seconds before a shell line", line: "1700000000.123 + go test ./tests/robustness"},
		{name: "time of day before a shell line", line: "22:13:20 + make test-robustness"},
		{name: "a number is not a time", line: "12345.678 sync duration of 4.1s, expected less than 1s"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := NewParser(ParserOptions{Year: 2023})
			var e Entry
			ok := p.Parse([]byte(c.line), &e)
			if ok != (c.format != FormatUnknown) {
				t.Fatalf("parsed=%v, want format %s: %+v", ok, c.format, e)
			}
			if !ok {
				return
			}
			got := ""
			if !e.Time.IsZero() {
				got = e.Time.Format(time.RFC3339Nano)
			}
			if e.Format != c.format || got != c.time || string(e.Logger) != c.logger || string(e.Component) != c.comp || string(e.Msg) != c.msg {
				t.Errorf("got %s %s logger %q comp %q msg %q", e.Format, got, e.Logger, e.Component, e.Msg)
			}
			var ev Event
			if new(Classifier).Classify(&e, &ev) != (c.class != ClassNone) || ev.Class != c.class || ev.Took != c.took {
				t.Errorf("classified %s took %v, want %s %v", ev.Class.ID(), ev.Took, c.class.ID(), c.took)
			}
			if string(ev.Self) != c.self || ev.Term != c.term {
				t.Errorf("self %q term %d, want %q %d", ev.Self, ev.Term, c.self, c.term)
			}
		})
	}
}
