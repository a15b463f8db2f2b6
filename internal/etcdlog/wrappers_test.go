package etcdlog

import (
	"testing"
	"time"
)

// The wrappers and variants of the three formats, one line each: what the
// parser must read from them.
func TestParseVariants(t *testing.T) {
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Skipf("no time zone database: %v", err)
	}
	zap := `{"level":"warn","ts":"2022-08-30T09:19:17.672Z","caller":"wal/wal.go:802","msg":"slow fdatasync","took":"1.263337456s","expected-duration":"1s"}`
	capns := `2018-12-15 04:37:33.398062 W | wal: sync duration of 4.136231954s, expected less than 1s`
	for _, c := range []struct {
		name, line string
		loc        *time.Location
		format     Format
		level      Level
		time       string // RFC3339Nano, "" for none
		host, msg  string
		class      Class
		took       time.Duration
	}{
		{name: "zap", line: zap, format: FormatZapJSON, level: LevelWarn, time: "2022-08-30T09:19:17.672Z", msg: "slow fdatasync", class: SlowFdatasync, took: 1263337456},
		{name: "kubectl --timestamps", line: "2022-08-30T09:19:17.673000001Z " + zap, format: FormatZapJSON, level: LevelWarn, time: "2022-08-30T09:19:17.672Z", msg: "slow fdatasync", class: SlowFdatasync, took: 1263337456},
		{name: "kubectl --timestamps, capnslog: the wrapper knows the zone", line: "2018-12-15T03:37:33.398Z " + capns, loc: berlin, format: FormatCapnslog, level: LevelWarn, time: "2018-12-15T03:37:33.398Z", msg: "sync duration of 4.136231954s, expected less than 1s", class: SlowFdatasync, took: 4136231954},
		{name: "capnslog in a local zone", line: capns, loc: berlin, format: FormatCapnslog, level: LevelWarn, time: "2018-12-15T03:37:33.398062Z", msg: "sync duration of 4.136231954s, expected less than 1s", class: SlowFdatasync, took: 4136231954},
		{name: "kubectl --prefix", line: "[pod/etcd-node1/etcd] " + zap, format: FormatZapJSON, level: LevelWarn, time: "2022-08-30T09:19:17.672Z", host: "etcd-node1", msg: "slow fdatasync", class: SlowFdatasync, took: 1263337456},
		{name: "CRI log file", line: "2022-08-30T09:19:17.672839Z stderr F " + zap, format: FormatZapJSON, level: LevelWarn, time: "2022-08-30T09:19:17.672Z", msg: "slow fdatasync", class: SlowFdatasync, took: 1263337456},
		{name: "journalctl -o short-iso", line: "2018-12-15T04:37:33+0000 master-0 etcd[812]: " + capns, format: FormatCapnslog, level: LevelWarn, time: "2018-12-15T04:37:33Z", host: "master-0", msg: "sync duration of 4.136231954s, expected less than 1s", class: SlowFdatasync, took: 4136231954},
		{name: "journalctl -o short-iso-precise, bare", line: "2018-12-15T04:37:33.398062+01:00 master-0 etcd[812]: server is likely overloaded", format: FormatBare, time: "2018-12-15T03:37:33.398062Z", host: "master-0", msg: "server is likely overloaded", class: ServerOverloaded},
		{name: "journalctl -o json", line: `{"__REALTIME_TIMESTAMP":"1544848653398062","_HOSTNAME":"master-0","PRIORITY":"4","SYSLOG_IDENTIFIER":"etcd","MESSAGE":"sync duration of 4.136231954s, expected less than 1s"}`, format: FormatBare, level: LevelWarn, time: "2018-12-15T04:37:33.398062Z", host: "master-0", msg: "sync duration of 4.136231954s, expected less than 1s", class: SlowFdatasync, took: 4136231954},
		{name: "journalctl -o json around zap", line: `{"__REALTIME_TIMESTAMP":"1661851157672999","_HOSTNAME":"n1","PRIORITY":"6","MESSAGE":"{\"level\":\"warn\",\"ts\":\"2022-08-30T09:19:17.672Z\",\"msg\":\"slow fdatasync\",\"took\":\"2s\"}"}`, format: FormatZapJSON, level: LevelWarn, time: "2022-08-30T09:19:17.672Z", host: "n1", msg: "slow fdatasync", class: SlowFdatasync, took: 2 * time.Second},
		{name: "docker json-file", line: `{"log":"2018-12-15 04:37:33.398062 W | wal: sync duration of 4.1s, expected less than 1s\n","stream":"stderr","time":"2018-12-15T04:37:33.39807Z"}`, format: FormatCapnslog, level: LevelWarn, time: "2018-12-15T04:37:33.39807Z", msg: "sync duration of 4.1s, expected less than 1s", class: SlowFdatasync, took: 4100 * time.Millisecond},
		{name: "zap console with logger and fields", line: "2025-01-01T10:00:00.123456Z\twarn\traft\tv3@v3.7.0/node.go:463\t8e9e05c52164694d A tick missed to fire. Node blocks too long!", format: FormatZapConsole, level: LevelWarn, time: "2025-01-01T10:00:00.123456Z", msg: "8e9e05c52164694d A tick missed to fire. Node blocks too long!", class: TickMissed},
		{name: "zap console with fields", line: "2025-01-01T10:00:00.123456Z\tWARN\twal/wal.go:849\tslow fdatasync\t{\"took\": \"1.5s\", \"expected-duration\": \"1s\"}", format: FormatZapConsole, level: LevelWarn, time: "2025-01-01T10:00:00.123456Z", msg: "slow fdatasync", class: SlowFdatasync, took: 1500 * time.Millisecond},
		{name: "zap with a float ts and seconds", line: `{"level":"warn","ts":1661851157.672,"caller":"wal/wal.go:802","msg":"slow fdatasync","took":1.5}`, format: FormatZapJSON, level: LevelWarn, time: "2022-08-30T09:19:17.672Z", msg: "slow fdatasync", class: SlowFdatasync, took: 1500 * time.Millisecond},
		{name: "zap with nanosecond durations", line: `{"level":"warn","ts":"2022-08-30T09:19:17Z","msg":"slow fdatasync","took":1500000000}`, format: FormatZapJSON, level: LevelWarn, time: "2022-08-30T09:19:17Z", msg: "slow fdatasync", class: SlowFdatasync, took: 1500 * time.Millisecond},
		{name: "compose", line: "etcd-2  | " + zap, format: FormatZapJSON, level: LevelWarn, time: "2022-08-30T09:19:17.672Z", host: "etcd-2", msg: "slow fdatasync", class: SlowFdatasync, took: 1263337456},
		{name: "a log viewer's table row", line: "etcd-2 | etcd | 2022-08-30 09:19:17.672 | " + zap, format: FormatZapJSON, level: LevelWarn, time: "2022-08-30T09:19:17.672Z", host: "etcd-2", msg: "slow fdatasync", class: SlowFdatasync, took: 1263337456},
		{name: "klog is not etcd", line: `I0927 21:59:52.167318    2130 kubelet.go:2618] "Housekeeping took longer than expected"`},
		{name: "empty object", line: `{}`},
		{name: "msg not a string", line: `{"level":"warn","msg":1}`},
		{name: "capnslog with an unknown level", line: `2018-12-15 04:37:33.398062 X | wal: sync duration of 4s`},
		{name: "kubectl timestamp on a shell line", line: `2018-12-15T04:37:33Z + exec etcd --name m1`},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := NewParser(ParserOptions{Location: c.loc, Year: 2018})
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
			if e.Format != c.format || e.Level != c.level || got != c.time || string(e.Host) != c.host || string(e.Msg) != c.msg {
				t.Errorf("got %s %q %s host %q msg %q", e.Format, e.Level, got, e.Host, e.Msg)
			}
			var ev Event
			if new(Classifier).Classify(&e, &ev) != (c.class != ClassNone) || ev.Class != c.class || ev.Took != c.took {
				t.Errorf("classified %s took %v, want %s %v", ev.Class.ID(), ev.Took, c.class.ID(), c.took)
			}
		})
	}
}

// journalctl -o short does not print the year; without one given, a date
// that would lie in the future is last year's.
func TestSyslogYear(t *testing.T) {
	now := time.Now().UTC()
	future := now.Add(7 * 24 * time.Hour)
	line := future.Format("Jan _2 15:04:05") + " host etcd[1]: server is likely overloaded"
	var e Entry
	if !NewParser(ParserOptions{}).Parse([]byte(line), &e) {
		t.Fatal("not parsed")
	}
	if e.Time.Year() != future.Year()-1 && !(future.Year() != now.Year() && e.Time.Year() == now.Year()) {
		t.Errorf("%s read as %s", line, e.Time)
	}
	if !NewParser(ParserOptions{Year: 2016}).Parse([]byte(line), &e) || e.Time.Year() != 2016 {
		t.Errorf("with Year 2016: %s", e.Time)
	}
}

func TestKeyPrefix(t *testing.T) {
	for _, c := range []struct{ key, end, want string }{
		{"/registry/pods/default/web-0", "", "/registry/pods/"},
		{"/registry/pods/", "/registry/pods0", "/registry/pods/"},
		{"/registry/leases", "/registry/leaset", "/registry/leases"},
		{"/registry/health", "", "/registry/"},
		{"/registry/crd.projectcalico.org/ippools/default", "", "/registry/crd.projectcalico.org/ippools/"},
		{"locks/6783699117b39cdd", "", "locks/"},
		{"foo", "", "foo"},
		{"", "", ""},
	} {
		if got := KeyPrefix(c.key, c.end); got != c.want {
			t.Errorf("KeyPrefix(%q, %q) = %q, want %q", c.key, c.end, got, c.want)
		}
	}
}

func TestParseDur(t *testing.T) {
	for _, c := range []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"1.530802357s", 1530802357, true}, {"707.213µs", 707213, true}, {"707.213us", 707213, true},
		{"1m22.15s", 82150 * time.Millisecond, true}, {"100ms", 100 * time.Millisecond, true}, {"1h", time.Hour, true},
		{"0.003502721", 3502721, true}, {"1500000000", 1500 * time.Millisecond, true}, {"12", 12 * time.Second, true},
		{"", 0, false}, {"now", 0, false}, {"-1s", 0, false}, {"1x", 0, false}, {"s", 0, false}, {"724.9550", 724955 * time.Millisecond, true},
	} {
		got, ok := parseDur([]byte(c.in))
		if got != c.want || ok != c.ok {
			t.Errorf("parseDur(%q) = %v, %v; want %v, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}
