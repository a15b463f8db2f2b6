package etcdlog

import (
	"container/heap"
	"sort"
	"time"

	"github.com/etcdperf/etcdperf/internal/hist"
	"github.com/etcdperf/etcdperf/internal/result"
)

// SummaryOptions bound what a Summary keeps.
type SummaryOptions struct {
	// Since and Until, when set, keep the lines of that time window
	// (Since included, Until not); the lines outside it are only counted.
	// Lines without a timestamp are kept.
	Since, Until time.Time
	// Bucket is the timeline's bucket width (default one hour).
	Bucket time.Duration
	// MaxBuckets bounds the timeline: the width doubles until the span of
	// the logs fits (default 10000).
	MaxBuckets int
	// Top is how many slow requests and key prefixes are reported
	// (default 10).
	Top int
	// MaxEvents is how many events the Result lists (0: none; the others
	// are only counted).
	MaxEvents int
	// MaxPrefixes is how many distinct key prefixes are tracked exactly
	// (default 1000); beyond it the counts become upper bounds.
	MaxPrefixes int
}

func (o *SummaryOptions) defaults() {
	if o.Bucket <= 0 {
		o.Bucket = time.Hour
	}
	if o.MaxBuckets <= 0 {
		o.MaxBuckets = 10000
	}
	if o.Top <= 0 {
		o.Top = 10
	}
	if o.MaxPrefixes <= 0 {
		o.MaxPrefixes = 1000
	}
}

// Summary folds lines and events into the logs section of a Result, in
// memory bounded by its options whatever the size of the logs.
type Summary struct {
	o        SummaryOptions
	lines    int64
	unparsed int64
	outside  int64
	bytes    int64
	formats  [len(formatNames)]int64
	first    time.Time
	last     time.Time

	classes   [numClasses]classAcc
	members   []*memberAcc
	memberIdx map[string]int

	width   time.Duration // current timeline bucket width
	tl      map[tlKey]int64
	tlMin   int64
	tlMax   int64
	tlEmpty bool

	top      topHeap
	prefixes map[string]*prefixAcc
	evicted  bool

	events  []result.LogEvent
	omitted int64
	sources []result.LogSource

	upkeepBy map[int]*upkeepAcc // by member: compactions, defrags, spikes
}

type classAcc struct {
	count       int64
	first, last time.Time
	took        *hist.Histogram
	expected    time.Duration
}

type memberAcc struct {
	name                  string
	id, etcdName, version string
	// heartbeat and election are its timers at its last start, or the
	// heartbeat a late heartbeat's line named (timersAtStart false).
	heartbeat, election time.Duration
	timersAtStart       bool
	lines               int64
	classes             [numClasses]int64
	first, last         time.Time
	changes             [32]time.Time // ring of the last leader changes
	nChanges            int
	maxChanges15m       int
}

type tlKey struct {
	bucket int64
	class  Class
	member int32
}

type prefixAcc struct {
	count    int64
	took     float64
	max      float64
	maxCount int64
	approx   bool
}

// NewSummary returns an empty Summary.
func NewSummary(o SummaryOptions) *Summary {
	o.defaults()
	return &Summary{
		o:         o,
		memberIdx: map[string]int{},
		width:     o.Bucket,
		tl:        map[tlKey]int64{},
		tlEmpty:   true,
		prefixes:  map[string]*prefixAcc{},
	}
}

// maxMembers bounds the members a Summary tells apart. Lines name their
// member (journald's host, a kubectl or compose prefix), so a syslog file of
// a whole fleet, or a hostile one with a new host on every line, would
// otherwise grow the members, and the per-member timeline, without bound.
// The lines of the members beyond it are counted under otherMembers.
const maxMembers = 256

// otherMembers is the member under which the lines of the members beyond
// the first 256 are counted.
const otherMembers = "(other members)"

// member returns the index of the member called name, adding it.
func (s *Summary) member(name []byte) int {
	if i, ok := s.memberIdx[string(name)]; ok {
		return i
	}
	n := string(name)
	if len(s.members) >= maxMembers {
		n = otherMembers
		if i, ok := s.memberIdx[n]; ok {
			return i
		}
	}
	s.members = append(s.members, &memberAcc{name: n})
	s.memberIdx[n] = len(s.members) - 1
	return len(s.members) - 1
}

// Source records an input that was read (or skipped).
func (s *Summary) Source(src result.LogSource) { s.sources = append(s.sources, src) }

// Outside reports whether a line of time t is out of the window, and then
// counts it as such.
func (s *Summary) Outside(t time.Time, n int) bool {
	o := s.o
	if t.IsZero() || ((o.Since.IsZero() || !t.Before(o.Since)) && (o.Until.IsZero() || t.Before(o.Until))) {
		return false
	}
	s.lines++
	s.outside++
	s.bytes += int64(n)
	return true
}

// Unparsed counts a line that was not an etcd log line.
func (s *Summary) Unparsed(n int) {
	s.lines++
	s.unparsed++
	s.bytes += int64(n)
}

// Line counts a parsed line of member m (an index from member).
func (s *Summary) Line(m int, e *Entry, n int) {
	s.lines++
	s.bytes += int64(n)
	s.formats[e.Format]++
	ma := s.members[m]
	ma.lines++
	if t := e.Time; !t.IsZero() {
		if s.first.IsZero() || t.Before(s.first) {
			s.first = t
		}
		if t.After(s.last) {
			s.last = t
		}
		if ma.first.IsZero() || t.Before(ma.first) {
			ma.first = t
		}
		if t.After(ma.last) {
			ma.last = t
		}
	}
}

// Facts records what a member's lines say about it. Its timers are those
// of its last start; a late heartbeat's line tells the heartbeat interval
// only while no start was seen.
func (s *Summary) Facts(m int, f memberFacts) {
	ma := s.members[m]
	if f.id != "" && ma.id == "" {
		ma.id = f.id
	}
	if f.name != "" && ma.etcdName == "" {
		ma.etcdName = f.name
	}
	if f.version != "" {
		ma.version = f.version
	}
	switch {
	case f.atStart:
		if !ma.timersAtStart {
			ma.heartbeat, ma.election = 0, 0
		}
		ma.timersAtStart = true
		if f.heartbeat > 0 {
			ma.heartbeat = f.heartbeat
		}
		if f.election > 0 {
			ma.election = f.election
		}
	case f.heartbeat > 0 && !ma.timersAtStart:
		ma.heartbeat = f.heartbeat
	}
}

// needFacts reports whether member m still lacks its id, name, version
// or timers.
func (s *Summary) needFacts(m int) bool {
	ma := s.members[m]
	return ma.id == "" || ma.etcdName == "" || ma.version == "" || ma.heartbeat == 0 || ma.election == 0
}

// Event adds a classified line of member m, once for its class and once
// for its second class, if any. src is where it came from ("file:line").
func (s *Summary) Event(m int, ev *Event, src func() string) {
	s.add(m, ev.Class, ev, src)
	if ev.Also != ClassNone {
		s.add(m, ev.Also, ev, src)
	}
	if len(ev.Self) > 0 && s.members[m].id == "" {
		s.members[m].id = string(ev.Self)
	}
}

func (s *Summary) add(m int, c Class, ev *Event, src func() string) {
	ca := &s.classes[c]
	ca.count++
	t := ev.Time
	if !t.IsZero() {
		if ca.first.IsZero() || t.Before(ca.first) {
			ca.first = t
		}
		if t.After(ca.last) {
			ca.last = t
		}
		s.timeline(t, c, m)
	}
	if ev.Took > 0 && c == ev.Class && Classes[c].Took != "" {
		if ca.took == nil {
			ca.took = hist.New()
		}
		ca.took.Record(ev.Took)
	}
	if ev.Expected > ca.expected && c == ev.Class {
		ca.expected = ev.Expected
	}
	ma := s.members[m]
	ma.classes[c]++
	s.upkeep(m, c, ev)
	if (c == LeaderElected || c == LeaderChanged) && !t.IsZero() {
		ma.leaderChange(t)
	}
	if c == ev.Class && (c == SlowApply || c == SlowReadOnlyRange || c == SlowReadOnlyTxn) {
		s.request(m, c, ev)
	}
	if s.o.MaxEvents > len(s.events) {
		s.events = append(s.events, s.logEvent(m, c, ev, src()))
	} else {
		s.omitted++
	}
}

// leaderChange records a leader change and the most changes within 15
// minutes so far (etcd's mixin alerts at 4 in 15 minutes).
func (ma *memberAcc) leaderChange(t time.Time) {
	n := len(ma.changes)
	ma.changes[ma.nChanges%n] = t
	ma.nChanges++
	k := 0
	for i := 0; i < min(ma.nChanges, n); i++ {
		c := ma.changes[i]
		if !c.After(t) && t.Sub(c) <= 15*time.Minute {
			k++
		}
	}
	ma.maxChanges15m = max(ma.maxChanges15m, k)
}

func (s *Summary) logEvent(m int, c Class, ev *Event, src string) result.LogEvent {
	le := result.LogEvent{
		Member: s.members[m].name, Class: c.ID(), Level: ev.Level.String(),
		Took: ev.Took.Seconds(), Expected: ev.Expected.Seconds(),
		Key: string(ev.Key), Prefix: string(ev.Prefix), Peer: string(ev.Peer), Leader: string(ev.Leader), Term: ev.Term,
		Remote: string(ev.Remote), Message: clip(ev.Msg, maxMsg), Source: src,
		Count: max(ev.Count, 0), Size: max(ev.Size, 0), Time: timePtr(ev.Time),
	}
	return le
}

func (s *Summary) timeline(t time.Time, c Class, m int) {
	idx := floorDiv(t.UnixNano(), int64(s.width))
	if s.tlEmpty {
		s.tlMin, s.tlMax, s.tlEmpty = idx, idx, false
	}
	s.tlMin, s.tlMax = min(s.tlMin, idx), max(s.tlMax, idx)
	s.tl[tlKey{bucket: idx, class: c, member: int32(m)}]++
	for s.tlMax-s.tlMin+1 > int64(s.o.MaxBuckets) {
		s.widen()
	}
}

// widen doubles the bucket width, merging pairs of buckets.
func (s *Summary) widen() {
	s.width *= 2
	merged := make(map[tlKey]int64, len(s.tl)/2+1)
	for k, v := range s.tl {
		k.bucket = floorDiv(k.bucket, 2)
		merged[k] += v
	}
	s.tl = merged
	s.tlMin, s.tlMax = floorDiv(s.tlMin, 2), floorDiv(s.tlMax, 2)
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && (a < 0) != (b < 0) {
		q--
	}
	return q
}

// request records a slow request in the top list and its key prefix.
func (s *Summary) request(m int, c Class, ev *Event) {
	if ev.Took > 0 && (s.top.Len() < s.o.Top || ev.Took.Seconds() > s.top[0].Took) {
		r := result.LogRequest{
			Member: s.members[m].name, Class: c.ID(), Took: ev.Took.Seconds(),
			Key: string(ev.Key), Prefix: string(ev.Prefix), Request: clip(ev.Request, maxRequest), Response: clip(ev.Response, maxRequest),
			Count: max(ev.Count, 0), Size: max(ev.Size, 0), Time: timePtr(ev.Time),
		}
		if s.top.Len() < s.o.Top {
			heap.Push(&s.top, r)
		} else if r.Took > s.top[0].Took {
			s.top[0] = r
			heap.Fix(&s.top, 0)
		}
	}
	if len(ev.Prefix) == 0 {
		return
	}
	pa, ok := s.prefixes[string(ev.Prefix)]
	if !ok {
		pa = &prefixAcc{}
		if len(s.prefixes) >= s.o.MaxPrefixes {
			// Space-saving: the new prefix replaces the least counted one
			// and inherits its count as an upper bound.
			var minK string
			var minV *prefixAcc
			for k, v := range s.prefixes {
				if minV == nil || v.count < minV.count || v.count == minV.count && k < minK {
					minK, minV = k, v
				}
			}
			delete(s.prefixes, minK)
			pa.count, pa.approx = minV.count, true
			s.evicted = true
		}
		s.prefixes[string(ev.Prefix)] = pa
	}
	pa.count++
	took := ev.Took.Seconds()
	pa.took += took
	pa.max = max(pa.max, took)
	pa.maxCount = max(pa.maxCount, ev.Count)
}

// topHeap is a min-heap of requests by Took.
type topHeap []result.LogRequest

func (h topHeap) Len() int           { return len(h) }
func (h topHeap) Less(i, j int) bool { return h[i].Took < h[j].Took }
func (h topHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *topHeap) Push(x any)        { *h = append(*h, x.(result.LogRequest)) }
func (h *topHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

func timePtr(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

// Result returns the logs section.
func (s *Summary) Result() *result.Logs {
	l := &result.Logs{
		Sources:       s.sources,
		Lines:         s.lines,
		Unparsed:      s.unparsed,
		OutsideWindow: s.outside,
		Bytes:         s.bytes,
		First:         timePtr(s.first),
		Last:          timePtr(s.last),
		Classes:       map[string]int64{},
		Events:        s.events,
		EventsOmitted: s.omitted,
	}
	for f, n := range s.formats {
		if n > 0 {
			if l.Formats == nil {
				l.Formats = map[string]int64{}
			}
			l.Formats[Format(f).String()] = n
		}
	}
	for c := Class(1); c < numClasses; c++ {
		ca := &s.classes[c]
		if ca.count == 0 {
			continue
		}
		l.Classes[c.ID()] = ca.count
		st := result.LogClassStats{
			Class: c.ID(), Title: c.Title(), Count: ca.count,
			First: timePtr(ca.first), Last: timePtr(ca.last),
			Expected: ca.expected.Seconds(),
			Members:  map[string]int64{},
		}
		for _, ma := range s.members {
			if n := ma.classes[c]; n > 0 {
				st.Members[ma.name] = n
			}
		}
		if ca.took != nil && ca.took.Count() > 0 {
			lat := ca.took.Latency(false)
			st.Took = &lat
		}
		l.Stats = append(l.Stats, st)
	}
	for _, ma := range s.members {
		lm := result.LogMember{
			Name: ma.name, ID: ma.id, EtcdName: ma.etcdName, Version: ma.version,
			HeartbeatInterval: ma.heartbeat.Seconds(), ElectionTimeout: ma.election.Seconds(), TimersAtStart: ma.timersAtStart,
			Lines: ma.lines, First: timePtr(ma.first), Last: timePtr(ma.last),
			MaxLeaderChanges15m: ma.maxChanges15m,
		}
		for c := Class(1); c < numClasses; c++ {
			if n := ma.classes[c]; n > 0 {
				if lm.Classes == nil {
					lm.Classes = map[string]int64{}
				}
				lm.Classes[c.ID()] = n
			}
		}
		l.Members = append(l.Members, lm)
	}
	sort.Slice(l.Members, func(i, j int) bool { return l.Members[i].Name < l.Members[j].Name })
	l.Timeline = s.timelineResult()
	s.upkeepResult(l)
	top := append(topHeap(nil), s.top...)
	sort.SliceStable(top, func(i, j int) bool { return top[i].Took > top[j].Took })
	l.TopRequests = top
	for p, pa := range s.prefixes {
		l.TopPrefixes = append(l.TopPrefixes, result.LogKeyPrefix{
			Prefix: p, Count: pa.count, Took: pa.took, Max: pa.max, MaxCount: pa.maxCount, Approximate: pa.approx,
		})
	}
	sort.Slice(l.TopPrefixes, func(i, j int) bool {
		a, b := l.TopPrefixes[i], l.TopPrefixes[j]
		if a.Count != b.Count {
			return a.Count > b.Count
		}
		if a.Took != b.Took {
			return a.Took > b.Took
		}
		return a.Prefix < b.Prefix
	})
	if len(l.TopPrefixes) > s.o.Top {
		l.TopPrefixes = l.TopPrefixes[:s.o.Top]
	}
	return l
}

func (s *Summary) timelineResult() *result.LogTimeline {
	if s.tlEmpty {
		return nil
	}
	n := int(s.tlMax - s.tlMin + 1)
	tl := &result.LogTimeline{
		Start:   time.Unix(0, s.tlMin*int64(s.width)).UTC(),
		Bucket:  s.width.Seconds(),
		Buckets: n,
	}
	type sk struct {
		c Class
		m int32
	}
	totals := map[Class][]int64{}
	per := map[sk][]int64{}
	for k, v := range s.tl {
		i := k.bucket - s.tlMin
		if totals[k.class] == nil {
			totals[k.class] = make([]int64, n)
		}
		totals[k.class][i] += v
		if len(s.members) > 1 {
			key := sk{k.class, k.member}
			if per[key] == nil {
				per[key] = make([]int64, n)
			}
			per[key][i] += v
		}
	}
	for c := Class(1); c < numClasses; c++ {
		if counts, ok := totals[c]; ok {
			tl.Series = append(tl.Series, result.LogTimelineSeries{Class: c.ID(), Counts: counts})
		}
	}
	order := make([]int, len(s.members))
	for i := range order {
		order[i] = i
	}
	sort.Slice(order, func(i, j int) bool { return s.members[order[i]].name < s.members[order[j]].name })
	for c := Class(1); c < numClasses; c++ {
		for _, m := range order {
			if counts, ok := per[sk{c, int32(m)}]; ok {
				tl.Series = append(tl.Series, result.LogTimelineSeries{Class: c.ID(), Member: s.members[m].name, Counts: counts})
			}
		}
	}
	return tl
}
