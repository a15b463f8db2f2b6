package judge

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/etcdperf/etcdperf/internal/diagnose"
	"github.com/etcdperf/etcdperf/internal/limits"
	"github.com/etcdperf/etcdperf/internal/result"
	"github.com/etcdperf/etcdperf/internal/units"
)

// etcd's auto-compaction flags.
const (
	FlagCompactionMode      = "auto-compaction-mode"
	FlagCompactionRetention = "auto-compaction-retention"
	compactionGuide         = "etcd maintenance guide, https://etcd.io/docs/v3.6/op-guide/maintenance/#auto-compaction"
	// apiserverCompaction is how often kube-apiserver compacts etcd by
	// default (--etcd-compaction-interval).
	apiserverCompaction = 5 * time.Minute
	// noCompactionSpan is the least history in which no compaction at all
	// says that nothing compacts: twelve of kube-apiserver's intervals,
	// and an hour, the retention etcd's guide starts from.
	noCompactionSpan = time.Hour
)

// compactionFigures are what the auto-compaction flags are computed
// from: the scheduled compactions a run saw per member, how long it
// looked, and whether its source would have shown them.
type compactionFigures struct {
	seen []result.Compactions
	span float64
	// sees says the run read a source that shows every compaction over
	// its span (a history of etcd's compaction histogram); a log may be
	// filtered to warnings, and a short window holds none.
	sees bool
}

// compactionTuning adds the auto-compaction flags to r's tuning.
func compactionTuning(r *result.Result) {
	f := compactionFigures{}
	f.seen, _ = r.UpkeepSeen()
	switch {
	case r.Prom != nil:
		f.span, f.sees = r.Prom.End.Sub(r.Prom.Start).Seconds(), true
	case r.Logs != nil && r.Logs.First != nil && r.Logs.Last != nil:
		// A log filtered to warnings holds no compaction line: its
		// silence does not say that nothing compacts.
		f.span = r.Logs.Last.Sub(*r.Logs.First).Seconds()
	case r.Metrics != nil:
		f.span = r.Metrics.Seconds
	case r.Server != nil && r.Server.Demand != nil:
		// doctor --node's window, from the members' scrapes around it.
		f.span = r.Server.Demand.Seconds
	}
	tuneCompaction(r.Tuning, f, diagnose.LimitOf(r, limits.CompactionSpikeShare), diagnose.LimitOf(r, limits.CompactionsRegular))
}

// tuneCompaction suggests etcd's auto-compaction from the compactions a
// run saw. A regular schedule is kept, whoever runs it (etcd's own
// --auto-compaction-retention, or a client's: kube-apiserver compacts
// every 5 minutes); when the member's latency spikes come with its
// compactions (compaction_spike_share of them or more), compacting twice
// as often halves what each compaction removes. No compaction at all in
// an hour or more of history means nothing compacts: etcd's periodic
// auto-compaction keeping an hour is suggested.
func tuneCompaction(t *result.Tuning, f compactionFigures, share, regular float64) {
	retention, etcdCompacts := t.Value(FlagCompactionRetention)
	etcdCompacts = etcdCompacts && retention.Text != "" && retention.Text != "0"
	mode, _ := t.Value(FlagCompactionMode)
	var sched *result.Compactions
	total := int64(0)
	for i, c := range f.seen {
		total += c.Count
		if c.Regular && float64(c.Count) >= regular && (sched == nil || c.Near > sched.Near) {
			sched = &f.seen[i]
		}
	}
	switch {
	case sched != nil:
		keepSchedule(t, *sched, share, etcdCompacts, retention, mode)
	case total > 0:
		t.Notes = append(t.Notes, fmt.Sprintf("The auto-compaction flags are not computed: %s showed no regular schedule (%s; a period needs %.0f at regular intervals).",
			units.Count(total, "scheduled compaction"), f.seen[0].Source, regular))
	case !f.sees || f.span < noCompactionSpan.Seconds():
		in := ""
		if f.span > 0 {
			in = " in " + spanWords(f.span)
		}
		t.Notes = append(t.Notes, fmt.Sprintf("The auto-compaction flags are not computed: the run saw no scheduled compaction%s, and kube-apiserver's default "+
			"schedule compacts every %s; etcdperf prom check over hours shows the schedule.", in, units.ShortDuration(apiserverCompaction)))
	default:
		why := fmt.Sprintf("no scheduled compaction in %s of history: nothing compacts etcd's history (no kube-apiserver, no etcd auto-compaction), "+
			"so every revision stays until the space quota raises the NOSPACE alarm; periodic auto-compaction keeping an hour of history bounds it", spanWords(f.span))
		m := result.TunedFlag{Name: FlagCompactionMode, SuggestedArg: "periodic", Why: why, Source: compactionGuide}
		currentArg(&m, mode, func(v string) bool { return v == "periodic" })
		rt := result.TunedFlag{Name: FlagCompactionRetention, SuggestedArg: "1h", Why: why, Source: compactionGuide}
		currentArg(&rt, retention, func(string) bool { return false })
		t.Flags = append(t.Flags, m, rt)
	}
}

// keepSchedule keeps a regular compaction schedule, or halves its period
// when the member's latency spikes come with its compactions.
func keepSchedule(t *result.Tuning, c result.Compactions, share float64, etcdCompacts bool, retention, mode result.FlagValue) {
	period := time.Duration(c.Period * float64(time.Second)).Round(time.Second)
	figure := fmt.Sprintf("%s compacted every %s (%d scheduled compactions, %s", c.Member, units.ShortDuration(period), c.Count, c.Source)
	if c.TookMax > 0 {
		figure += fmt.Sprintf(", the longest %s", units.Seconds(c.TookMax))
	}
	figure += ")"
	spiky := c.Spikes > 0 && c.Near >= 2 && float64(c.Near) >= share*float64(c.Spikes)
	if spiky {
		figure += fmt.Sprintf("; %d of its %d latency spikes came within %s of one (%s: %.0f%%)", c.Near, c.Spikes, units.Seconds(c.Window), limits.CompactionSpikeShare, share*100)
	}
	half := units.ShortDuration((period / 2).Round(time.Second))
	who := "a client's schedule, kube-apiserver's every " + units.ShortDuration(apiserverCompaction) + " by default (its --etcd-compaction-interval)"
	if etcdCompacts {
		who = "etcd's own, --" + FlagCompactionRetention + "=" + retention.Text
		if mode.Text != "" {
			who += " in " + mode.Text + " mode"
		}
	}
	if !spiky {
		if etcdCompacts {
			t.Flags = append(t.Flags, result.TunedFlag{Name: FlagCompactionRetention, Action: result.TuneKeep,
				CurrentArg: retention.Text, CurrentFrom: retention.From, SuggestedArg: retention.Text,
				Why: figure + ": the schedule in force keeps the history bounded, and the latency spikes do not come with it", Source: compactionGuide})
			return
		}
		t.Notes = append(t.Notes, fmt.Sprintf("Leave etcd's auto-compaction off: %s, by %s; a second compactor would only add work.", figure, who))
		return
	}
	todo := fmt.Sprintf("compacting twice as often (every %s) halves what each compaction removes, and so each spike", half)
	if etcdCompacts && mode.Text != "revision" && retentionOf(retention.Text) >= time.Hour {
		t.Notes = append(t.Notes, fmt.Sprintf("%s, by %s: %s; but with a retention of an hour or more etcd's periodic compaction runs on its own clock, "+
			"and a shorter retention keeps less history: compact from the client (kube-apiserver's --etcd-compaction-interval) if the history can be shorter.", figure, who, todo))
		return
	}
	if !etcdCompacts || mode.Text == "revision" {
		t.Notes = append(t.Notes, fmt.Sprintf("%s, by %s: %s; for kube-apiserver, set --etcd-compaction-interval=%s.", figure, who, todo, half))
		return
	}
	t.Flags = append(t.Flags, result.TunedFlag{Name: FlagCompactionRetention, Action: result.TuneChange,
		CurrentArg: retention.Text, CurrentFrom: retention.From, SuggestedArg: half,
		Why: figure + ": " + todo + " (periodic mode compacts every retention period under an hour)", Source: compactionGuide})
}

// currentArg fills a flag's value in force where it is a word ("periodic",
// "1h") and its action, as current does for numbers.
func currentArg(f *result.TunedFlag, v result.FlagValue, ok func(string) bool) {
	switch {
	case v.From == "":
		f.Action = result.TuneChange
	case ok(v.Text):
		f.CurrentArg, f.CurrentFrom, f.Action, f.SuggestedArg = v.Text, v.From, result.TuneKeep, v.Text
	default:
		f.CurrentArg, f.CurrentFrom, f.Action = v.Text, v.From, result.TuneChange
	}
	if f.CurrentArg == "" && f.CurrentFrom != "" {
		f.CurrentArg = strings.TrimSpace(fmt.Sprintf("%g", v.Value))
	}
}

// retentionOf reads a periodic retention as etcd does: a duration, or a
// bare number of hours; 0 when it is neither.
func retentionOf(s string) time.Duration {
	if d, err := time.ParseDuration(s); err == nil {
		return d
	}
	if h, err := strconv.ParseFloat(s, 64); err == nil {
		return time.Duration(h * float64(time.Hour))
	}
	return 0
}
