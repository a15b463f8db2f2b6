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
