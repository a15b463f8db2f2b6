package etcdlog

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/etcdperf/etcdperf/internal/result"
)

// Lines pasted from wrappers that keep etcd's line, or only its message:
// each is read as the line inside it.
func TestParsePasted(t *testing.T) {
	slowApply := `{"level":"warn","ts":"2024-05-01T10:00:00.123Z","caller":"etcdserver/util.go:170","msg":"apply request took too long","took":"150ms","expected-duration":"100ms","prefix":"","request":"header:<ID:1 > put:<key:\"/registry/pods/default/web-0\" value_size:10 >","response":"size:5"}`
	capnsHB := `2016-05-12 13:48:19.362501 W | etcdserver: failed to send out heartbeat on time (deadline exceeded for 546.767586ms)`
	for _, c := range []struct {
		name, line string
		format     Format
		time       string // RFC3339Nano, "" for none
		host, comp string
		msg        string
		class      Class
		took       time.Duration
	}{
		// etcd's robustness test prints the seconds since the test
		// began before each line of a member.
		{name: "elapsed seconds, zap", line: "39.826 " + slowApply,
			format: FormatZapJSON, time: "2024-05-01T10:00:00.123Z", comp: "etcdserver/util.go:170", msg: "apply request took too long", class: SlowApply, took: 150 * time.Millisecond},
		{name: "elapsed seconds and a tab, zap", line: "0.5\t" + slowApply,
			format: FormatZapJSON, time: "2024-05-01T10:00:00.123Z", comp: "etcdserver/util.go:170", msg: "apply request took too long", class: SlowApply, took: 150 * time.Millisecond},
		{name: "elapsed seconds, capnslog", line: "1234.5 " + capnsHB,
			format: FormatCapnslog, time: "2016-05-12T13:48:19.362501Z", comp: "etcdserver", msg: "failed to send out heartbeat on time (deadline exceeded for 546.767586ms)", class: HeartbeatLate, took: 546767586},
		{name: "elapsed seconds, then a time and etcd's words", line: "39.826 2024-05-01T10:00:00Z server is likely overloaded",
			format: FormatBare, time: "2024-05-01T10:00:00Z", msg: "server is likely overloaded", class: ServerOverloaded},
		{name: "elapsed seconds before etcd's bare words: a number says too little", line: "39.826 sync duration of 4.1s, expected less than 1s"},
		{name: "elapsed seconds before a shell line", line: "39.826 + go test ./tests/robustness"},
		{name: "a version is not elapsed seconds", line: "3.5.0 " + slowApply},

		// An export of the message field alone: a time, then zap's
		// constant message, maybe its fields.
		{name: "time and zap's bare message", line: "2024-05-01T10:00:00Z apply request took too long",
			format: FormatBare, time: "2024-05-01T10:00:00Z", msg: "apply request took too long", class: SlowApply},
		{name: "time, zap's bare message and more words", line: "2024-05-01T10:00:00Z apply request took too long (150ms) to execute",
			format: FormatBare, time: "2024-05-01T10:00:00Z", msg: "apply request took too long", class: SlowApply},
		{name: "time, zap's bare message and its fields", line: `2024-05-01T10:00:00.5+02:00 apply request took too long {"took": "150ms", "expected-duration": "100ms", "prefix": "read-only range ", "request": "key:\"/registry/pods/\" range_end:\"/registry/pods0\" "}`,
			format: FormatBare, time: "2024-05-01T08:00:00.5Z", msg: "apply request took too long", class: SlowReadOnlyRange, took: 150 * time.Millisecond},
		{name: "time, tab and zap's slow fdatasync with fields", line: "2024-05-01T10:00:00Z\tslow fdatasync\t{\"took\": \"1.5s\", \"expected-duration\": \"1s\"}",
			format: FormatBare, time: "2024-05-01T10:00:00Z", msg: "slow fdatasync", class: SlowFdatasync, took: 1500 * time.Millisecond},
		{name: "time, package and zap's bare message", line: "2024-05-01T10:00:00Z etcdserver: waiting for ReadIndex response took too long, retrying",
			format: FormatBare, time: "2024-05-01T10:00:00Z", comp: "etcdserver", msg: "waiting for ReadIndex response took too long, retrying", class: ReadIndexSlow},
		{name: "time and a longer message that starts with zap's", line: "2024-05-01T10:00:00Z defragmented the disk of my laptop"},
		{name: "time and zap's message glued to a word", line: "2024-05-01T10:00:00Z slow fdatasyncs are bad"},
		{name: "an alarm that is not NOSPACE", line: `2024-05-01T10:00:00Z alarm raised {"alarm": "CORRUPT"}`},
		{name: "request stats without a level", line: "2024-05-01T10:00:00Z request stats"},

		// A zone written after the time belongs to the time.
		{name: "time, UTC and zap's bare message", line: "2024-05-01 10:00:00 UTC apply request took too long",
			format: FormatBare, time: "2024-05-01T10:00:00Z", msg: "apply request took too long", class: SlowApply},
		{name: "Go's time, offset and zone, zap", line: "2024-05-01 12:00:00.123 +0200 CEST " + slowApply,
			format: FormatZapJSON, time: "2024-05-01T10:00:00.123Z", comp: "etcdserver/util.go:170", msg: "apply request took too long", class: SlowApply, took: 150 * time.Millisecond},
		{name: "Go's time in UTC and capnslog's message", line: "2016-05-12 13:48:19.362501 +0000 UTC etcdserver: failed to send out heartbeat on time (deadline exceeded for 546.767586ms)",
			format: FormatBare, time: "2016-05-12T13:48:19.362501Z", comp: "etcdserver", msg: "failed to send out heartbeat on time (deadline exceeded for 546.767586ms)", class: HeartbeatLate, took: 546767586},
		{name: "a zone word before journald's host", line: "2018-12-15 04:37:33 UTC master-0 etcd[812]: server is likely overloaded",
			format: FormatBare, time: "2018-12-15T04:37:33Z", host: "master-0", msg: "server is likely overloaded", class: ServerOverloaded},
		{name: "a zone word where journald's host would be", line: "2018-12-15 04:37:33 UTC etcd[812]: server is likely overloaded"},
		{name: "a zone word after syslog's time", line: "Dec 15 04:37:33 UTC master-0 etcd[812]: server is likely overloaded",
			format: FormatBare, time: "2018-12-15T04:37:33Z", host: "master-0", msg: "server is likely overloaded", class: ServerOverloaded},
		{name: "a level is not a zone", line: "2024-05-01T10:00:00Z WARN apply request took too long"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := NewParser(ParserOptions{Year: 2018})
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
			if e.Format != c.format || got != c.time || string(e.Host) != c.host || string(e.Component) != c.comp || string(e.Msg) != c.msg {
				t.Errorf("got %s %s host %q comp %q msg %q", e.Format, got, e.Host, e.Component, e.Msg)
			}
			var ev Event
			if new(Classifier).Classify(&e, &ev) != (c.class != ClassNone) || ev.Class != c.class || ev.Took != c.took {
				t.Errorf("classified %s took %v, want %s %v", ev.Class.ID(), ev.Took, c.class.ID(), c.took)
			}
		})
	}
}

// A log whose every line carries a zone after its time has the file's
// member only: no zone becomes a member of its own.
func TestZoneIsNoMember(t *testing.T) {
	in := strings.Join([]string{
		"2024-05-01 10:00:00 UTC apply request took too long",
		"2024-05-01 10:00:01 +0000 UTC etcdserver: failed to send out heartbeat on time (exceeded the 100ms timeout for 401.80886ms, to 8e9e05c52164694d)",
		"2024-05-01 10:00:02 GMT server is likely overloaded",
		"39.826 2024-05-01T10:00:03Z UTC slow fdatasync",
	}, "\n")
	s := NewSummary(SummaryOptions{})
	var src result.LogSource
	if err := ScanReader(context.Background(), strings.NewReader(in), "pasted.log", "etcd-0", NewParser(ParserOptions{}), s, 1<<16, &src); err != nil {
		t.Fatal(err)
	}
	r := s.Result()
	if len(r.Members) != 1 || r.Members[0].Name != "etcd-0" || r.Unparsed != 0 {
		t.Fatalf("members %+v, %d unparsed lines", r.Members, r.Unparsed)
	}
	for id, want := range map[string]int64{"slow_apply": 1, "heartbeat_late": 1, "server_overloaded": 1, "slow_fdatasync": 1} {
		if r.Classes[id] != want {
			t.Errorf("%s: %d, want %d (classes %v)", id, r.Classes[id], want, r.Classes)
		}
	}
}
