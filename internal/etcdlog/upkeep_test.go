package etcdlog

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/etcdperf/etcdperf/internal/result"
)

// scanFile reads one file of testdata/real into a Summary.
func scanFile(t *testing.T, name string, year int) *Summary {
	t.Helper()
	f, err := os.Open("testdata/real/" + name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s := NewSummary(SummaryOptions{MaxEvents: 100})
	var src result.LogSource
	if err := ScanReader(context.Background(), f, name, "file", NewParser(ParserOptions{Year: year}), s, DefaultMaxLine, &src); err != nil {
		t.Fatal(err)
	}
	return s
}

// The same member's scheduled compactions (etcd-io/etcd#12185), as
// journald wrote them and as a log viewer's table exports them (name |
// container | time | line, newest first): each wrapper gives the three
// compactions, of the member the line names, at etcd's own times.
func TestCompactionsInEveryWrapper(t *testing.T) {
	for _, name := range []string{"compaction-12185.log", "table-export.log"} {
		t.Run(name, func(t *testing.T) {
			lr := scanFile(t, name, 2020).Result()
			if lr.Unparsed != 0 {
				t.Errorf("%d of %d lines unparsed", lr.Unparsed, lr.Lines)
			}
			var got []time.Time
			for _, ev := range lr.Events {
				if ev.Class == Classes[Compaction].ID {
					got = append(got, ev.Time.UTC())
					if ev.Member != "master-02" {
						t.Errorf("compaction of member %q, want master-02", ev.Member)
					}
				}
			}
			if len(got) != 3 {
				t.Fatalf("%d compactions, want 3: %v", len(got), got)
			}
			for _, ts := range got {
				if ts.Second() != 59 || ts.Hour() != 10 {
					t.Errorf("compaction at %s, want etcd's time 10:xx:59Z", ts.Format(time.RFC3339Nano))
				}
			}
		})
	}
}

// The compactions' view of a member: how often, how long, and which of its
// slow lines fall within seconds of one.
func TestCompactionsSummary(t *testing.T) {
	for _, name := range []string{"compaction-12185.log", "table-export.log"} {
		t.Run(name, func(t *testing.T) {
			cs := scanFile(t, name, 2020).Result().Compactions
			if len(cs) != 1 {
				t.Fatalf("compactions %+v, want one member's", cs)
			}
			c := cs[0]
			if c.Member != "master-02" || c.Count != 3 || c.Period < 299.9 || c.Period > 300.1 || !c.Regular || c.TookMax != 0.009506858 || c.TookP50 != 0.00307747 || c.Spikes != 0 {
				t.Errorf("got %+v, want 3 compactions every 300s, took p50 3.07747ms, max 9.506858ms, no spikes", c)
			}
		})
	}
	// etcd v3.7.3 with a 1µs --warning-apply-duration: its slow applies
	// in the seconds of the compaction count as near it.
	cs := scanFile(t, "embed-3.7.3-json.log", 0).Result().Compactions
	if len(cs) != 1 || cs[0].Count != 1 || cs[0].Regular || cs[0].Near == 0 || cs[0].Near > cs[0].Spikes {
		t.Errorf("embedded 3.7.3: %+v, want one compaction with some of the slow lines near it", cs)
	}
}
