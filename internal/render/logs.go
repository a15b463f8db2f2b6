package render

import (
	"encoding/csv"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/etcdperf/etcdperf/internal/result"
	"github.com/etcdperf/etcdperf/internal/units"
)

func init() {
	RegisterText("logs", logsText)
	RegisterCSV("logs", logsCSV)
}

const logTime = "2006-01-02 15:04:05"

func fmtTime(t *time.Time) string {
	if t == nil {
		return "-"
	}
	return t.UTC().Format(logTime)
}

// logsText is the logs summary: what was read, the events per class with
// their durations, the members, the busiest buckets and the slow requests.
func logsText(w io.Writer, r *result.Result) error {
	l := r.Logs
	if l == nil {
		return nil
	}
	read := 0
	for _, s := range l.Sources {
		if s.Skipped == "" {
			read++
		}
	}
	fmt.Fprintf(w, "etcdperf logs: %s, %s", plural(int64(read), "source"), plural(int64(l.Lines), "line"))
	if l.Unparsed > 0 {
		if l.Unparsed == 1 {
			fmt.Fprint(w, " (1 not an etcd log line)")
		} else {
			fmt.Fprintf(w, " (%d not etcd log lines)", l.Unparsed)
		}
	}
	if l.OutsideWindow > 0 {
		fmt.Fprintf(w, " (%d outside --since/--until, left out)", l.OutsideWindow)
	}
	fmt.Fprintln(w)
	if l.First != nil && l.Last != nil {
		fmt.Fprintf(w, "  from %s to %s UTC (%s)\n", fmtTime(l.First), fmtTime(l.Last), span(l.Last.Sub(*l.First)))
	}
	if len(l.Formats) > 0 {
		fmt.Fprintf(w, "  formats: %s\n", countsLine(l.Formats))
	}
	for _, s := range l.Sources {
		if s.Skipped != "" {
			fmt.Fprintf(w, "  skipped %s: %s\n", s.Name, s.Skipped)
		}
	}
	if len(l.Members) > 0 {
		fmt.Fprintln(w, "\nmembers:")
		for _, m := range l.Members {
			var facts []string
			if m.EtcdName != "" && m.EtcdName != m.Name {
				facts = append(facts, "name "+m.EtcdName)
			}
			if m.ID != "" {
				facts = append(facts, "id "+m.ID)
			}
			if m.Version != "" {
				facts = append(facts, "etcd "+m.Version)
			}
			if len(facts) > 0 {
				fmt.Fprintf(w, "  %-24s %9d %-5s  (%s)\n", m.Name, m.Lines, pluralWord(m.Lines, "line"), strings.Join(facts, ", "))
			} else {
				fmt.Fprintf(w, "  %-24s %9d %s\n", m.Name, m.Lines, pluralWord(m.Lines, "line"))
			}
		}
	}
	if len(l.Stats) == 0 {
		fmt.Fprintln(w, "\nno events: none of the warnings etcd logs when its disk, network or CPU is too slow.")
	} else {
		fmt.Fprintln(w, "\nevents:")
		fmt.Fprintf(w, "  %-22s %8s  %-19s  %-19s  %9s %9s %9s %9s\n", "class", "count", "first (UTC)", "last (UTC)", "took p50", "p99", "max", "limit")
		for _, st := range l.Stats {
			p50, p99, mx, lim := "", "", "", ""
			if st.Took != nil {
				p50, p99, mx = units.Seconds(st.Took.P50), units.Seconds(st.Took.P99), units.Seconds(st.Took.Max)
			}
			if st.Expected > 0 {
				lim = units.Seconds(st.Expected)
			}
			fmt.Fprintf(w, "  %-22s %8d  %-19s  %-19s  %9s %9s %9s %9s\n", st.Class, st.Count, fmtTime(st.First), fmtTime(st.Last), p50, p99, mx, lim)
		}
		if len(l.Members) > 1 {
			fmt.Fprintln(w, "\nevents per member:")
			for _, st := range l.Stats {
				fmt.Fprintf(w, "  %-22s %s\n", st.Class, countsLine(st.Members))
			}
		}
	}
	busiestBuckets(w, l.Timeline, 5)
	if len(l.TopRequests) > 0 {
		fmt.Fprintln(w, "\nslowest requests:")
		for _, q := range l.TopRequests {
			fmt.Fprintf(w, "  %9s  %-20s %-16s %s", units.Seconds(q.Took), q.Class, q.Member, fmtTime(q.Time))
			if q.Key != "" {
				fmt.Fprintf(w, "  %s", q.Key)
			}
			if q.Count > 0 {
				fmt.Fprintf(w, "  (%s)", plural(q.Count, "key"))
			}
			if q.Size > 0 {
				fmt.Fprintf(w, "  (%s)", units.Bytes(float64(q.Size)))
			}
			fmt.Fprintln(w)
		}
	}
	if len(l.TopPrefixes) > 0 {
		fmt.Fprintln(w, "\nkey prefixes in slow requests:")
		for _, p := range l.TopPrefixes {
			approx := ""
			if p.Approximate {
				approx = "<="
			}
			fmt.Fprintf(w, "  %-40s %s%s, %s in all, longest %s", p.Prefix, approx, plural(p.Count, "request"), units.Seconds(p.Took), units.Seconds(p.Max))
			if p.MaxCount > 0 {
				fmt.Fprintf(w, ", up to %s", plural(p.MaxCount, "key"))
			}
			fmt.Fprintln(w)
		}
	}
	upkeepText(w, l.Compactions, l.Defrags)
	if l.EventsOmitted > 0 {
		if l.EventsOmitted == 1 {
			fmt.Fprintln(w, "\n1 event is counted but not listed in the Result (raise --max-events to list it)")
		} else {
			fmt.Fprintf(w, "\n%d events are counted but not listed in the Result (raise --max-events to list them)\n", l.EventsOmitted)
		}
	}
	return nil
}

func plural(n int64, what string) string { return units.Count(n, what) }

// pluralWord is what, with an s unless n is 1.
func pluralWord(n int64, what string) string {
	if n == 1 {
		return what
	}
	return what + "s"
}

// span prints a time span in the largest units that keep it short:
// 45s, 3h27m, 12d4h.
func span(d time.Duration) string {
	switch {
	case d >= 48*time.Hour:
		return fmt.Sprintf("%dd%dh", d/(24*time.Hour), (d%(24*time.Hour))/time.Hour)
	case d >= time.Hour:
		return fmt.Sprintf("%dh%dm", d/time.Hour, (d%time.Hour)/time.Minute)
	}
	return d.Round(time.Second).String()
}

// countsLine prints a map of counts as "a 3, b 2", largest first.
func countsLine(m map[string]int64) string {
	type kv struct {
		k string
		v int64
	}
	var kvs []kv
	for k, v := range m {
		kvs = append(kvs, kv{k, v})
	}
	sort.Slice(kvs, func(i, j int) bool {
		if kvs[i].v != kvs[j].v {
			return kvs[i].v > kvs[j].v
		}
		return kvs[i].k < kvs[j].k
	})
	parts := make([]string, len(kvs))
	for i, e := range kvs {
		parts[i] = fmt.Sprintf("%s %d", e.k, e.v)
	}
	return strings.Join(parts, ", ")
}

// busiestBuckets prints the n timeline buckets with the most events.
func busiestBuckets(w io.Writer, tl *result.LogTimeline, n int) {
	if tl == nil || tl.Buckets == 0 {
		return
	}
	totals := make([]int64, tl.Buckets)
	for _, s := range tl.Series {
		if s.Member != "" {
			continue
		}
		for i, c := range s.Counts {
			totals[i] += c
		}
	}
	idx := make([]int, 0, tl.Buckets)
	for i, t := range totals {
		if t > 0 {
			idx = append(idx, i)
		}
	}
	sort.SliceStable(idx, func(a, b int) bool { return totals[idx[a]] > totals[idx[b]] })
	if len(idx) > n {
		idx = idx[:n]
	}
	width := time.Duration(tl.Bucket * float64(time.Second))
	fmt.Fprintf(w, "\nbusiest %s buckets (%d of %d with events):\n", span(width), min(n, len(idx)), countNonZero(totals))
	for _, i := range idx {
		start := tl.Start.Add(time.Duration(i) * width)
		per := map[string]int64{}
		for _, s := range tl.Series {
			if s.Member == "" && s.Counts[i] > 0 {
				per[s.Class] = s.Counts[i]
			}
		}
		fmt.Fprintf(w, "  %s  %6d  %s\n", start.UTC().Format(logTime), totals[i], countsLine(per))
	}
}

func countNonZero(v []int64) int {
	n := 0
	for _, x := range v {
		if x > 0 {
			n++
		}
	}
	return n
}

// logsCSV writes one row per event listed in the Result.
func logsCSV(w io.Writer, r *result.Result) error {
	cw := csv.NewWriter(w)
	if err := cw.Write([]string{"time", "member", "class", "level", "took_seconds", "expected_seconds", "key", "prefix",
		"count", "size_bytes", "peer", "leader", "term", "remote", "source", "message"}); err != nil {
		return err
	}
	if r.Logs != nil {
		for _, e := range r.Logs.Events {
			t := ""
			if e.Time != nil {
				t = e.Time.UTC().Format(time.RFC3339Nano)
			}
			rec := []string{t, e.Member, e.Class, e.Level, csvFloat(e.Took), csvFloat(e.Expected), e.Key, e.Prefix,
				csvInt(e.Count), csvInt(e.Size), e.Peer, e.Leader, csvInt(int64(e.Term)), e.Remote, e.Source, e.Message}
			if err := cw.Write(rec); err != nil {
				return err
			}
		}
	}
	cw.Flush()
	return cw.Error()
}

func csvFloat(v float64) string {
	if v == 0 {
		return ""
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

func csvInt(v int64) string {
	if v == 0 {
		return ""
	}
	return strconv.FormatInt(v, 10)
}
