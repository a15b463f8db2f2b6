package judge

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/etcdperf/etcdperf/internal/limits"
	"github.com/etcdperf/etcdperf/internal/result"
	"github.com/etcdperf/etcdperf/internal/units"
)

// Soak judges a held rate's steady state from its series, by the limits a
// step of the capacity sweep holds (so that a soak at a rate confirms or
// refutes the sweep's answer there): the last part
// (soak_last_part of its intervals) is the figure that held; a fall of the
// device's write IOPS or MB/s or of the achieved rate there under
// soak_drop of the first part's, or a WAL fsync p99 risen soak_p99_rise
// times and past its limit, is a drop, named with the time it came. The
// sustained rate is the last part's achieved rate when it held every limit
// (the WAL fsync and backend commit p99s, the throughput); when it broke
// them after a drop of the device's writes, the held rate scaled by the
// writes that remained. The limits judged are the WAL fsync, backend
// commit and request p99s (the medians of the last part's intervals') and
// the throughput.
func Soak(s *result.Soak, criteria []limits.Criterion) {
	s.LastFrom, s.SustainedPutsPerS, s.SustainedFrom, s.Broke, s.Drop = 0, 0, "", nil, nil
	s.LastAchieved, s.LastWALFsyncP99, s.LastWALFsyncBound, s.LastBackendCommitP99, s.LastRequestP99 = 0, 0, false, 0, 0
	n := len(s.Series)
	if n == 0 {
		s.Answer = "the soak recorded no interval"
		if s.Rate <= 0 && s.RateFrom == result.SoakRateCapacity {
			s.Answer = "the capacity sweep held no rate: nothing to hold"
		}
		return
	}
	lastN := lastPart(n, criteria)
	firstN := min(lastN, n-lastN)
	last := s.Series[n-lastN:]
	if n-lastN > 0 {
		s.LastFrom = s.Series[n-lastN-1].T
	}
	late := soakPart(last)
	s.LastAchieved, s.LastWALFsyncP99, s.LastWALFsyncBound, s.LastBackendCommitP99, s.LastRequestP99 = late.achieved, late.wal, late.walBound, late.commit, late.request
	walLimit, commitLimit := limits.LimitOf(criteria, limits.WALFsyncP99), limits.LimitOf(criteria, limits.BackendCommitP99)
	if late.wal >= walLimit {
		s.Broke = append(s.Broke, limits.WALFsyncP99)
	}
	if late.commit >= commitLimit {
		s.Broke = append(s.Broke, limits.BackendCommitP99)
	}
	if limit := limits.LimitOf(criteria, limits.RequestP99); limit > 0 && late.request >= limit {
		s.Broke = append(s.Broke, limits.RequestP99)
	}
	if s.Rate > 0 && late.achieved < limits.LimitOf(criteria, limits.Throughput)*s.Rate {
		s.Broke = append(s.Broke, limits.Throughput)
	}
	if firstN > 0 {
		s.Drop = soakDrop(s.Series, firstN, lastN, late, criteria)
	}

	s.SustainedPutsPerS, s.SustainedFrom = late.achieved, "achieved"
	if d := s.Drop; len(s.Broke) > 0 && d != nil {
		// The rate held before the drop needed the writes of then; what
		// remains carries its share of it: by the device's writes when
		// they fell, else by etcd's own fsyncs. Not by the fsyncs when the
		// device's writes fell: etcd then packs more puts into each fsync
		// (its backend's commits and compactions taking the writes), and
		// they fall much further than what it serves
		// (docs/evidence.md, "Notes behind the rules").
		switch {
		case d.IOPSBefore > 0 && d.IOPSAfter < d.IOPSBefore && contains(d.Fell, "device_iops"):
			s.SustainedPutsPerS, s.SustainedFrom = math.Min(late.achieved, s.Rate*d.IOPSAfter/d.IOPSBefore), "device_iops"
		case d.WALFsyncsBefore > 0 && contains(d.Fell, "wal_fsyncs"):
			if v := s.Rate * d.WALFsyncsAfter / d.WALFsyncsBefore; v < s.SustainedPutsPerS {
				s.SustainedPutsPerS, s.SustainedFrom = v, "wal_fsyncs"
			}
		}
	}
	s.Answer = soakAnswer(s, late)
}

// lastPart is how many of n intervals are a soak's last part, the part
// judged (soak_last_part of them, at least one).
func lastPart(n int, criteria []limits.Criterion) int {
	share := limits.LimitOf(criteria, limits.SoakLastPart)
	if share <= 0 || share > 1 {
		share = 1.0 / 3
	}
	return min(n, max(1, int(math.Ceil(float64(n)*share))))
}

// holdP99s are the limits hold judges on a confirm step's intervals.
var holdP99s = []string{limits.WALFsyncP99, limits.BackendCommitP99, limits.RequestP99}

// hold judges a confirm step of the capacity sweep (a hold) from its
// intervals as Soak judges a soak's: its WAL fsync, backend commit and
// request p99s are the medians of its intervals', each judged by its limit
// and warning level; its other limits stay as the whole step judged them.
// Every interval counts, not a soak's last part only: a hold runs on an
// etcd that the sweep's steps have already loaded, with no fresh
// database's start to leave out. A p99 over a whole hold, or over a short
// interval, rests on a few dozen backend commits (about ten a second),
// which one slow commit pushes past its limit; the soak that checks the
// answer judges the median of its intervals', and a hold judged otherwise
// answers another question. No intervals: the step as it was judged.
func hold(st *result.CapacityStep, intervals []result.SoakSample, criteria []limits.Criterion) {
	if len(intervals) == 0 {
		return
	}
	st.Intervals = intervals
	late := soakPart(intervals)
	st.WALFsyncP99, st.WALFsyncBound, st.BackendCommitP99, st.RequestP99 = late.wal, late.walBound, late.commit, late.request
	st.BackendCommitBound = st.BackendCommitBound && late.commit <= 0.001
	values := map[string]float64{limits.WALFsyncP99: late.wal, limits.BackendCommitP99: late.commit, limits.RequestP99: late.request}
	keep := func(names []string) []string {
		return slices.DeleteFunc(slices.Clone(names), func(n string) bool { return slices.Contains(holdP99s, n) })
	}
	st.Broke, st.Tight = keep(st.Broke), keep(st.Tight)
	for _, name := range holdP99s {
		ch, ok := limits.Judge(criteria, name, values[name])
		switch {
		case !ok:
		case ch.Status == result.StatusFail:
			st.Broke = append(st.Broke, name)
		case ch.Status == result.StatusWarn:
			st.Tight = append(st.Tight, name)
		}
	}
}

// HoldDecided says whether a hold of n intervals is decided with the
// intervals it has measured so far, and whether it broke: it broke once
// the median of its intervals' WAL fsync, backend commit or request p99s
// (hold) passes its limit even if every interval still to come measured
// 0, or its first interval passed twice a limit (past the histogram
// bucket that holds the limit: a queue, not how many of an interval's
// few dozen commits land in that bucket); it held once every median is
// under its limit even if every interval to come measured without bound.
// Of three intervals, two that agree decide it: a third could not change
// the median. The sweep ends a decided hold early. Never with all n
// measured, or none.
func HoldDecided(intervals []result.SoakSample, n int, criteria []limits.Criterion) (decided, broke bool) {
	if len(intervals) == 0 || len(intervals) >= n {
		return false, false
	}
	first := intervals[0]
	for name, v := range map[string]float64{limits.WALFsyncP99: first.WALFsyncP99, limits.BackendCommitP99: first.BackendCommitP99, limits.RequestP99: first.RequestP99} {
		if limit := limits.LimitOf(criteria, name); limit > 0 && v >= 2*limit {
			return true, true
		}
	}
	if holdMedianFails(intervals, n, 0, criteria) {
		return true, true
	}
	if !holdMedianFails(intervals, n, math.Inf(1), criteria) {
		return true, false
	}
	return false, false
}

// holdMedianFails says whether a hold of n intervals, those not measured
// yet at rest, breaks a limit on the medians of its p99s.
func holdMedianFails(intervals []result.SoakSample, n int, rest float64, criteria []limits.Criterion) bool {
	wals, commits, requests := make([]float64, n), make([]float64, n), make([]float64, n)
	for i := range n {
		wals[i], commits[i], requests[i] = rest, rest, rest
	}
	for i, s := range intervals {
		wals[i], commits[i], requests[i] = s.WALFsyncP99, s.BackendCommitP99, s.RequestP99
	}
	values := map[string]float64{limits.WALFsyncP99: median(wals), limits.BackendCommitP99: median(commits), limits.RequestP99: median(requests)}
	for _, name := range holdP99s {
		if ch, ok := limits.Judge(criteria, name, values[name]); ok && ch.Status == result.StatusFail {
			return true
		}
	}
	return false
}

// soakFigures are a part's figures: rates and the device's over its time,
// the p99s the median of its intervals' (percentiles are not averaged).
type soakFigures struct {
	achieved, iops, bps, wal, commit float64
	request                          float64
	fsyncs                           float64
	walBound                         bool
	device                           bool
}

func soakPart(ss []result.SoakSample) soakFigures {
	var f soakFigures
	secs, devSecs := 0.0, 0.0
	var wals, commits, requests []float64
	bound := 0
	for _, s := range ss {
		secs += s.Seconds
		f.achieved += s.Achieved * s.Seconds
		f.fsyncs += s.WALFsyncs * s.Seconds
		if s.DeviceIOPS > 0 || s.DeviceUtil > 0 || s.DeviceWriteBytes > 0 {
			devSecs += s.Seconds
			f.iops += s.DeviceIOPS * s.Seconds
			f.bps += s.DeviceWriteBytes * s.Seconds
		}
		wals, commits = append(wals, s.WALFsyncP99), append(commits, s.BackendCommitP99)
		if s.RequestP99 > 0 {
			requests = append(requests, s.RequestP99)
		}
		if s.WALFsyncBound {
			bound++
		}
	}
	if secs > 0 {
		f.achieved /= secs
		f.fsyncs /= secs
	}
	if devSecs > 0 {
		f.iops, f.bps, f.device = f.iops/devSecs, f.bps/devSecs, true
	}
	f.wal, f.commit, f.request = median(wals), median(commits), median(requests)
	f.walBound = bound*2 > len(ss)
	return f
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	v = slices.Clone(v)
	slices.Sort(v)
	if len(v)%2 == 1 {
		return v[len(v)/2]
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2
}

// soakDrop finds a drop: the first part's device writes or achieved rate
// fallen in the last part under soak_drop of it, or its WAL fsync p99
// risen soak_p99_rise times and past its limit. It came after the last
// interval (before the last part) still at least halfway from the first
// part's extreme to the last part's level. The device, or etcd's WAL
// fsyncs, writing less is a drop only when etcd fared worse for it (it
// served fewer puts, or its WAL fsyncs slowed past their limit): else
// etcd only asked less of the storage.
func soakDrop(ss []result.SoakSample, firstN, lastN int, late soakFigures, criteria []limits.Criterion) *result.SoakDrop {
	early := soakPart(ss[:firstN])
	dropShare, rise := limits.LimitOf(criteria, limits.SoakDrop), limits.LimitOf(criteria, limits.SoakP99Rise)
	walLimit, tput := limits.LimitOf(criteria, limits.WALFsyncP99), limits.LimitOf(criteria, limits.Throughput)
	// Fewer writes are the storage's drop only when etcd fared worse for
	// them: it served fewer puts than in the first part (under the
	// throughput limit of them), or its WAL fsyncs slowed past their
	// limit, soak_p99_rise times. Fewer writes for as many puts is etcd
	// putting more puts in each fsync (a busy CPU's batching), or asking
	// less of the device: a RAM disk's fsyncs fell from 2,828/s to 1,661/s
	// at 7,200 puts/s served throughout, WAL fsync p99 1.1 to 2.2 ms.
	worse := late.achieved < tput*early.achieved || late.wal >= walLimit && late.wal >= rise*math.Max(early.wal, 0.001)
	var fell []string
	// onsetOf is the index of the last interval before the last part at
	// least halfway from the early level to the late one (-1: none).
	type metric struct {
		name        string
		early, late float64
		of          func(result.SoakSample) float64
		falls       bool
	}
	ms := []metric{
		{"device_iops", early.iops, late.iops, func(s result.SoakSample) float64 { return s.DeviceIOPS }, true},
		{"device_write_bytes", early.bps, late.bps, func(s result.SoakSample) float64 { return s.DeviceWriteBytes }, true},
		{"achieved", early.achieved, late.achieved, func(s result.SoakSample) float64 { return s.Achieved }, true},
		{"wal_fsyncs", early.fsyncs, late.fsyncs, func(s result.SoakSample) float64 { return s.WALFsyncs }, true},
		{"wal_fsync_p99", early.wal, late.wal, func(s result.SoakSample) float64 { return s.WALFsyncP99 }, false},
	}
	onset := -1
	for _, m := range ms {
		switch {
		case m.falls && strings.HasPrefix(m.name, "device") && !(early.device && late.device && worse):
			continue
		case m.name == "wal_fsyncs" && !worse:
			continue
		case m.falls && !(m.early > 0 && m.late < dropShare*m.early):
			continue
		case !m.falls && !(m.late >= walLimit && m.late >= rise*math.Max(m.early, 0.001)):
			continue
		}
		fell = append(fell, m.name)
		if onset >= 0 {
			continue // the first named sets the time
		}
		// Halfway from the first part's level at its extreme (its
		// highest for a fall): a first part that took the drop in holds
		// the interval it came in, half at each level.
		top := m.of(ss[0])
		for _, x := range ss[:firstN] {
			if v := m.of(x); m.falls && v > top || !m.falls && v < top {
				top = v
			}
		}
		mid := (top + m.late) / 2
		for i := len(ss) - lastN - 1; i >= 0; i-- {
			v := m.of(ss[i])
			if m.falls && v >= mid || !m.falls && v <= mid {
				onset = i
				break
			}
		}
	}
	if len(fell) == 0 {
		return nil
	}
	if onset < 0 {
		onset = 0 // it was down from the first interval's end on
	}
	// The first interval holds etcd's start-up writes (its database's
	// first pages): the level before is from the next on, when there is one.
	from := 0
	if onset >= 1 {
		from = 1
	}
	before := soakPart(ss[from : onset+1])
	return &result.SoakDrop{
		After: ss[onset].T, Fell: fell,
		IOPSBefore: before.iops, IOPSAfter: late.iops, WriteBytesBefore: before.bps, WriteBytesAfter: late.bps,
		AchievedBefore: before.achieved, AchievedAfter: late.achieved, WALFsyncsBefore: before.fsyncs, WALFsyncsAfter: late.fsyncs,
		WALFsyncP99Before: before.wal, WALFsyncP99After: late.wal,
	}
}

// soakAnswer says what held over the last part, the drop and the
// sustained figure.
func soakAnswer(s *result.Soak, late soakFigures) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s puts/s offered for %s", units.Thousands(s.Rate), units.Seconds(s.Seconds))
	if d := s.Drop; d != nil {
		var what []string
		if d.IOPSAfter < d.IOPSBefore && contains(d.Fell, "device_iops") {
			what = append(what, fmt.Sprintf("the device's writes fell from %s to %s IOPS", units.Thousands(d.IOPSBefore), units.Thousands(d.IOPSAfter)))
		} else if contains(d.Fell, "device_write_bytes") {
			what = append(what, fmt.Sprintf("the device's writes fell from %s/s to %s/s", units.Bytes(d.WriteBytesBefore), units.Bytes(d.WriteBytesAfter)))
		}
		if len(what) == 0 && contains(d.Fell, "wal_fsyncs") {
			what = append(what, fmt.Sprintf("etcd's WAL fsyncs fell from %s/s to %s/s", units.Thousands(d.WALFsyncsBefore), units.Thousands(d.WALFsyncsAfter)))
		}
		if contains(d.Fell, "achieved") {
			what = append(what, fmt.Sprintf("the puts etcd served fell from %s/s to %s/s", units.Thousands(d.AchievedBefore), units.Thousands(d.AchievedAfter)))
		}
		if d.WALFsyncP99After > d.WALFsyncP99Before {
			what = append(what, fmt.Sprintf("the WAL fsync p99 rose from %s to %s", units.Seconds(d.WALFsyncP99Before), units.Seconds(d.WALFsyncP99After)))
		}
		fmt.Fprintf(&b, ": after %s %s: burst credits or a write cache ran out", units.Seconds(d.After), strings.Join(what, " and "))
	} else if len(s.Broke) == 0 {
		b.WriteString(", steady")
	}
	last := fmt.Sprintf("its last %s", units.Seconds(s.Seconds-s.LastFrom))
	switch {
	case len(s.Broke) == 0:
		fmt.Fprintf(&b, "; %s held every limit (WAL fsync p99 %s): the sustained capacity is ~%s puts/s", last, units.P99(late.wal, late.walBound), units.Thousands(s.SustainedPutsPerS))
	case s.SustainedFrom == "wal_fsyncs":
		fmt.Fprintf(&b, "; %s broke %s: the sustained capacity is ~%s puts/s (%s puts/s scaled by the %s WAL fsyncs/s that remained of %s)",
			last, soakBrokeWords(s, late), units.Thousands(s.SustainedPutsPerS), units.Thousands(s.Rate), units.Thousands(s.Drop.WALFsyncsAfter), units.Thousands(s.Drop.WALFsyncsBefore))
	case s.SustainedFrom == "device_iops":
		fmt.Fprintf(&b, "; %s broke %s: the sustained capacity is ~%s puts/s (%s puts/s scaled by the %s IOPS that remained of %s)",
			last, soakBrokeWords(s, late), units.Thousands(s.SustainedPutsPerS), units.Thousands(s.Rate), units.Thousands(s.Drop.IOPSAfter), units.Thousands(s.Drop.IOPSBefore))
	default:
		fmt.Fprintf(&b, "; %s broke %s: the sustained capacity is under %s puts/s (it served %s there)", last, soakBrokeWords(s, late), units.Thousands(s.Rate), units.Thousands(late.achieved))
	}
	return b.String()
}

// soakBrokeWords says which limits the last part broke, with its values.
func soakBrokeWords(s *result.Soak, late soakFigures) string {
	var ws []string
	for _, id := range s.Broke {
		switch id {
		case limits.WALFsyncP99:
			ws = append(ws, "the WAL fsync p99 ("+units.Seconds(late.wal)+")")
		case limits.BackendCommitP99:
			ws = append(ws, "the backend commit p99 ("+units.Seconds(late.commit)+")")
		case limits.RequestP99:
			ws = append(ws, "the request p99 ("+units.Seconds(late.request)+")")
		case limits.Throughput:
			ws = append(ws, fmt.Sprintf("the throughput (%s of %s puts/s)", units.Thousands(late.achieved), units.Thousands(s.Rate)))
		}
	}
	return strings.Join(ws, " and ")
}
