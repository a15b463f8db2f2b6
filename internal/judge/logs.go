package judge

import (
	"fmt"

	"github.com/etcdperf/etcdperf/internal/limits"
	"github.com/etcdperf/etcdperf/internal/result"
)

// Logs judges etcd's logs by the findings they support; there is no
// limit to check.
func Logs(r *result.Result, _ []limits.Criterion) {
	r.Checks = nil
	conclude(r)
	r.Summary = logsSummary(r)
	logsTuning(r)
}

// logsBlindSpot is what etcd's logs cannot show.
const logsBlindSpot = "etcd logs an fdatasync only when it takes over 1s and an apply over 100ms, and nothing for a slow peer link " +
	"that loses no message, so a disk, a CPU or a link slower than etcd's limits but under those leaves no line: etcdperf metrics measures them"

func logsSummary(r *result.Result) string {
	l := r.Logs
	if l == nil {
		return ""
	}
	var span string
	if l.First != nil && l.Last != nil {
		span = fmt.Sprintf(" from %s to %s UTC", l.First.UTC().Format("2006-01-02 15:04"), l.Last.UTC().Format("2006-01-02 15:04"))
	}
	var events int64
	for _, n := range l.Classes {
		events += n
	}
	n := l.Lines - l.Unparsed - l.OutsideWindow
	lines, members := "lines", "members"
	if n == 1 {
		lines = "line"
	}
	if len(l.Members) == 1 {
		members = "member"
	}
	head := fmt.Sprintf("%d etcd log %s from %d %s%s", n, lines, len(l.Members), members, span)
	for _, f := range r.Findings {
		if f.Severity == result.Critical || f.Severity == result.Warning {
			return head + ": " + f.Title + "."
		}
	}
	what := ": no warning etcd would log when its disk, network or CPU is too slow"
	if events > 0 {
		what = fmt.Sprintf(": %d events, none that points to a problem", events)
		if events == 1 {
			what = ": 1 event, which does not point to a problem"
		}
	}
	return head + what + "; " + logsBlindSpot + "."
}
