package etcdlog

import (
	"fmt"
	"testing"
	"time"
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
