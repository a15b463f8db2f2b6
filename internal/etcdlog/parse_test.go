package etcdlog

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/etcdperf/etcdperf/internal/testutil"
)

// describe prints what the parser and classifier read from one line, for
// the golden files: one line per input line.
func describe(ok bool, e *Entry, classified bool, ev *Event) string {
	if !ok {
		return "UNPARSED"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s", e.Format, e.Level)
	if !e.Time.IsZero() {
		fmt.Fprintf(&b, " %s", e.Time.Format(time.RFC3339Nano))
	}
	if len(e.Host) > 0 {
		fmt.Fprintf(&b, " host=%s", e.Host)
	}
	if len(e.Component) > 0 {
		fmt.Fprintf(&b, " comp=%s", e.Component)
	}
	if !classified {
		return b.String() + " -"
	}
	fmt.Fprintf(&b, " => %s", ev.Class.ID())
	if ev.Also != ClassNone {
		fmt.Fprintf(&b, "+%s", ev.Also.ID())
	}
	if ev.Took > 0 {
		fmt.Fprintf(&b, " took=%s", ev.Took)
	}
	if ev.Expected > 0 {
		fmt.Fprintf(&b, " expected=%s", ev.Expected)
	}
	for _, kv := range []struct {
		k string
		v []byte
	}{{"key", ev.Key}, {"prefix", ev.Prefix}, {"self", ev.Self}, {"peer", ev.Peer}, {"leader", ev.Leader}, {"remote", ev.Remote}} {
		if len(kv.v) > 0 {
			fmt.Fprintf(&b, " %s=%s", kv.k, kv.v)
		}
	}
	if ev.Term > 0 {
		fmt.Fprintf(&b, " term=%d", ev.Term)
	}
	if ev.Count >= 0 {
		fmt.Fprintf(&b, " count=%d", ev.Count)
	}
	if ev.Size >= 0 {
		fmt.Fprintf(&b, " size=%d", ev.Size)
	}
	return b.String()
}

// The real lines in testdata/real (see SOURCES.md for where each came
// from) are read one by one; the golden files hold what was understood.
func TestRealLinesGolden(t *testing.T) {
	files, err := filepath.Glob("testdata/real/*.log")
	if err != nil || len(files) < 4 {
		t.Fatalf("testdata/real holds %d logs: %v", len(files), err)
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".log")
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			// journald's short format does not say the year; these lines
			// are from reports written in the years below.
			year := map[string]int{"wrapped": 2016}[name]
			p := NewParser(ParserOptions{Year: year})
			var out bytes.Buffer
			sc := bufio.NewScanner(bytes.NewReader(data))
			sc.Buffer(nil, 1<<20)
			n := 0
			for sc.Scan() {
				n++
				var e Entry
				var ev Event
				ok := p.Parse(sc.Bytes(), &e)
				c := ok && new(Classifier).Classify(&e, &ev)
				fmt.Fprintf(&out, "%d: %s\n", n, describe(ok, &e, c, &ev))
			}
			testutil.Golden(t, filepath.Join("real", name+".golden"), out.Bytes())
		})
	}
}
