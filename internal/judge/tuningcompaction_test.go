package judge

import (
	"strings"
	"testing"

	"github.com/etcdperf/etcdperf/internal/result"
)

// A regular schedule is kept, whoever runs it; latency spikes that come
// with it halve its period (etcd's retention when etcd compacts, else
// kube-apiserver's interval, in a note); no compaction in an hour of a
// history means nothing compacts; a short run or a log computes nothing.
func TestTuneCompaction(t *testing.T) {
	sched := func(spikes, near int64) []result.Compactions {
		return []result.Compactions{{Member: "m1", Count: 12, Period: 300, Regular: true, Spikes: spikes, Near: near, Window: 10, Source: "etcd_debugging_mvcc_db_compaction_total_duration_milliseconds"}}
	}
	etcd := []result.FlagValue{{Name: FlagCompactionMode, Text: "periodic", From: "/etc/etcd/etcd.conf.yml"}, {Name: FlagCompactionRetention, Text: "5m", From: "/etc/etcd/etcd.conf.yml"}}
	for _, c := range []struct {
		name  string
		f     compactionFigures
		known []result.FlagValue
		flags string // name=action:arg, joined by spaces
		note  string
	}{
		{"kube-apiserver's schedule, quiet: leave etcd's off", compactionFigures{seen: sched(4, 1), span: 3600, sees: true}, nil, "", "Leave etcd's auto-compaction off: m1 compacted every 5m ("},
		{"etcd's own schedule, quiet: kept", compactionFigures{seen: sched(0, 0), span: 3600, sees: true}, etcd, "auto-compaction-retention=keep:5m", ""},
		{"etcd's schedule with the spikes: halved", compactionFigures{seen: sched(6, 5), span: 3600, sees: true}, etcd, "auto-compaction-retention=change:2m30s", ""},
		{"kube-apiserver's schedule with the spikes: its interval halved", compactionFigures{seen: sched(6, 3), span: 3600, sees: true}, nil, "", "--etcd-compaction-interval=2m30s"},
		{"etcd's hourly schedule with the spikes: a note, not a shorter retention", compactionFigures{seen: []result.Compactions{{Member: "m1", Count: 6, Period: 3600, Regular: true, Spikes: 6, Near: 5, Window: 10, Source: "log"}}, span: 86400, sees: true},
			[]result.FlagValue{{Name: FlagCompactionMode, Text: "periodic", From: "f"}, {Name: FlagCompactionRetention, Text: "24", From: "f"}}, "", "runs on its own clock"},
		{"one spike in three near: not the compactions'", compactionFigures{seen: sched(6, 2), span: 3600, sees: true}, etcd, "auto-compaction-retention=keep:5m", ""},
		{"nothing compacts in a day of history", compactionFigures{span: 86400, sees: true}, nil, "auto-compaction-mode=change:periodic auto-compaction-retention=change:1h", ""},
		{"nothing compacts, etcd's defaults known", compactionFigures{span: 86400, sees: true},
			[]result.FlagValue{{Name: FlagCompactionMode, Text: "periodic", From: "default"}, {Name: FlagCompactionRetention, Text: "0", From: "default"}},
			"auto-compaction-mode=keep:periodic auto-compaction-retention=change:1h", ""},
		{"half an hour of history is too short to say", compactionFigures{span: 1800, sees: true}, nil, "", "saw no scheduled compaction in 30 minutes"},
		{"a log's silence says nothing", compactionFigures{span: 86400}, nil, "", "saw no scheduled compaction in 24 hours"},
		{"no span known: none said", compactionFigures{}, nil, "", "saw no scheduled compaction, and"},
		{"irregular compactions", compactionFigures{seen: []result.Compactions{{Member: "m1", Count: 2, Source: "log"}}, span: 86400, sees: true}, nil, "", "showed no regular schedule"},
	} {
		t.Run(c.name, func(t *testing.T) {
			tu := &result.Tuning{Known: c.known}
			tuneCompaction(tu, c.f, 0.5, 3)
			var got []string
			for _, f := range tu.Flags {
				got = append(got, f.Name+"="+f.Action+":"+f.SuggestedArg)
			}
			if strings.Join(got, " ") != c.flags {
				t.Errorf("flags %q, want %q", strings.Join(got, " "), c.flags)
			}
			notes := strings.Join(tu.Notes, " | ")
			if c.note == "" && notes != "" || !strings.Contains(notes, c.note) {
				t.Errorf("notes %q, want %q", notes, c.note)
			}
		})
	}
}
