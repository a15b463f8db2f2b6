package etcdlog

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/etcdperf/etcdperf/internal/result"
)

func event(c Class, t time.Time, took time.Duration, prefix string) *Event {
	ev := &Event{Class: c, Time: t, Took: took, Count: -1, Size: -1}
	if prefix != "" {
		ev.Key = []byte(prefix + "x")
		ev.Prefix = []byte(prefix)
		ev.Count = 3
	}
	return ev
}

func noSource() string { return "test:1" }

// The timeline keeps its bucket count under the limit by doubling the
// width, and its counts add up to the events.
func TestTimelineWidens(t *testing.T) {
	s := NewSummary(SummaryOptions{Bucket: time.Minute, MaxBuckets: 10})
	m := s.member([]byte("a"))
	start := time.Date(2024, 1, 1, 0, 0, 30, 0, time.UTC)
	for i := 0; i < 100; i++ { // one event per minute for 100 minutes
		s.Event(m, event(SlowApply, start.Add(time.Duration(i)*time.Minute), time.Second, ""), noSource)
	}
	tl := s.Result().Timeline
	if tl.Buckets > 10 || tl.Bucket != 16*60 || len(tl.Series) != 1 {
		t.Fatalf("%d buckets of %vs, %d series", tl.Buckets, tl.Bucket, len(tl.Series))
	}
	var sum int64
	for _, n := range tl.Series[0].Counts {
		sum += n
	}
	if sum != 100 || tl.Start.After(start) || tl.Start.Add(time.Duration(tl.Buckets)*16*time.Minute).Before(start.Add(99*time.Minute)) {
		t.Errorf("sum %d, start %s, %d buckets", sum, tl.Start, tl.Buckets)
	}
}

// With two members, per-member series follow the totals.
func TestTimelinePerMember(t *testing.T) {
	s := NewSummary(SummaryOptions{Bucket: time.Hour})
	t0 := time.Date(2024, 1, 1, 10, 0, 0, 0, time.UTC)
	s.Event(s.member([]byte("b")), event(HeartbeatLate, t0, time.Millisecond, ""), noSource)
	s.Event(s.member([]byte("a")), event(HeartbeatLate, t0.Add(2*time.Hour), time.Millisecond, ""), noSource)
	tl := s.Result().Timeline
	got := fmt.Sprint(tl.Buckets, tl.Series)
	want := "3 [{heartbeat_late  [1 0 1]} {heartbeat_late a [0 0 1]} {heartbeat_late b [1 0 0]}]"
	if got != want {
		t.Errorf("timeline %s, want %s", got, want)
	}
}

// A member per line (a hostile log, or a fleet's syslog) does not grow the
// members without bound: those beyond maxMembers are counted as one.
func TestMembersBounded(t *testing.T) {
	s := NewSummary(SummaryOptions{})
	t0 := time.Date(2024, 1, 1, 10, 0, 0, 0, time.UTC)
	for i := 0; i < maxMembers+100; i++ {
		s.Event(s.member([]byte(fmt.Sprintf("host-%d", i))), event(HeartbeatLate, t0, time.Millisecond, ""), noSource)
	}
	l := s.Result()
	if len(l.Members) != maxMembers+1 {
		t.Fatalf("%d members, want %d", len(l.Members), maxMembers+1)
	}
	if n := l.Stats[0].Members[otherMembers]; n != 100 {
		t.Errorf("%s has %d events, want 100", otherMembers, n)
	}
	if s.member([]byte("host-0")) != 0 {
		t.Error("a member seen first lost its own index")
	}
}

// Prefixes beyond the tracked number evict the least counted one; the
// survivor's counts are marked as upper bounds.
func TestPrefixSpaceSaving(t *testing.T) {
	s := NewSummary(SummaryOptions{MaxPrefixes: 2, Top: 3})
	m := s.member([]byte("a"))
	t0 := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	for i, p := range []string{"/a/", "/a/", "/a/", "/b/", "/c/", "/a/"} {
		s.Event(m, event(SlowReadOnlyRange, t0, time.Duration(i+1)*time.Second, p), noSource)
	}
	l := s.Result()
	if len(l.TopPrefixes) != 2 || l.TopPrefixes[0].Prefix != "/a/" || l.TopPrefixes[0].Count != 4 || l.TopPrefixes[0].Approximate {
		t.Fatalf("prefixes %+v", l.TopPrefixes)
	}
	if p := l.TopPrefixes[1]; p.Prefix != "/c/" || p.Count != 2 || !p.Approximate {
		t.Errorf("evicting prefix %+v", p)
	}
	if len(l.TopRequests) != 3 || l.TopRequests[0].Took != 6 || l.TopRequests[2].Took != 4 {
		t.Errorf("top requests %+v", l.TopRequests)
	}
}

// Leader changes are counted within sliding 15 minutes per member.
func TestLeaderChangesWindow(t *testing.T) {
	s := NewSummary(SummaryOptions{MaxEvents: 3})
	m := s.member([]byte("a"))
	t0 := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, min := range []int{0, 20, 21, 22, 50, 60, 61, 62, 63} {
		s.Event(m, event(LeaderElected, t0.Add(time.Duration(min)*time.Minute), 0, ""), noSource)
	}
	l := s.Result()
	if got := l.Members[0].MaxLeaderChanges15m; got != 5 { // 50, 60, 61, 62, 63
		t.Errorf("max changes in 15m: %d, want 5", got)
	}
	if len(l.Events) != 3 || l.EventsOmitted != 6 || l.Classes["leader_elected"] != 9 {
		t.Errorf("%d events listed, %d omitted", len(l.Events), l.EventsOmitted)
	}
}

// A member's timers come from its startup lines (zap's "starting an etcd
// server", capnslog's "heartbeat = " and "election = "), the last start
// winning; without one, a late heartbeat's line names the heartbeat
// interval. The lines are etcd 3.4.23's and 3.7's own.
func TestMemberTimers(t *testing.T) {
	for _, c := range []struct {
		name, log   string
		beat, elect float64
		atStart     bool
	}{
		{"capnslog start", "2026-11-29 00:37:46.686184 I | embed: heartbeat = 150ms\n2026-11-29 00:37:46.686226 I | embed: election = 1500ms\n", 0.15, 1.5, true},
		{"zap start", `{"level":"info","ts":"2026-11-29T00:37:46.686Z","caller":"embed/etcd.go:310","msg":"starting an etcd server","etcd-version":"3.4.23","name":"default","heartbeat-interval":"150ms","election-timeout":"1.5s"}` + "\n", 0.15, 1.5, true},
		// Its id, name and version known from the first start, the
		// second start's timers are still read.
		{"zap restarted with other timers", `{"level":"info","ts":"2026-11-29T00:37:46.686Z","caller":"embed/etcd.go:310","msg":"starting an etcd server","etcd-version":"3.4.23","name":"default","heartbeat-interval":"150ms","election-timeout":"1.5s"}` + "\n" +
			`{"level":"info","ts":"2026-11-29T00:37:46.700Z","caller":"etcdserver/server.go:527","msg":"starting local member","local-member-id":"8e9e05c52164694d","cluster-id":"cdf818194e3a8c32"}` + "\n" +
			`{"level":"info","ts":"2026-11-29T01:37:46.686Z","caller":"embed/etcd.go:310","msg":"starting an etcd server","etcd-version":"3.4.23","name":"default","heartbeat-interval":"300ms","election-timeout":"3s"}` + "\n", 0.3, 3, true},
		{"zap late heartbeat only", `{"level":"warn","ts":"2022-08-30T09:17:30.387Z","caller":"etcdserver/raft.go:369","msg":"leader failed to send out heartbeat on time; took too long, leader is overloaded likely from slow disk","to":"63b75c3d731594fc","heartbeat-interval":"100ms","expected-duration":"200ms","exceeded-duration":"61.150187ms"}` + "\n", 0.1, 0, false},
		{"capnslog late heartbeat only", "2019-05-02 10:15:31.424816 W | etcdserver: failed to send out heartbeat on time (exceeded the 100ms timeout for 401.80886ms, to 5dbbb8ef1fbd1ef4)\n", 0.1, 0, false},
		{"a late heartbeat after a start keeps the start's", "2026-11-29 00:37:46.686184 I | embed: heartbeat = 150ms\n2026-11-29 00:37:46.686226 I | embed: election = 1500ms\n" +
			"2026-11-29 00:39:31.424816 W | etcdserver: failed to send out heartbeat on time (exceeded the 100ms timeout for 401.80886ms, to 5dbbb8ef1fbd1ef4)\n", 0.15, 1.5, true},
		{"nothing said", "2026-11-29 00:37:46.686184 I | embed: name = default\n", 0, 0, false},
	} {
		s := NewSummary(SummaryOptions{MaxEvents: 3})
		if err := ScanReader(context.Background(), strings.NewReader(c.log), c.name, "m", &Parser{}, s, 1<<20, &result.LogSource{}); err != nil {
			t.Fatal(err)
		}
		m := s.Result().Members[0]
		if m.HeartbeatInterval != c.beat || m.ElectionTimeout != c.elect || m.TimersAtStart != c.atStart {
			t.Errorf("%s: heartbeat %g election %g at start %v; want %g %g %v", c.name, m.HeartbeatInterval, m.ElectionTimeout, m.TimersAtStart, c.beat, c.elect, c.atStart)
		}
	}
}
