package etcdlog

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/etcdperf/etcdperf/internal/result"
)

// FuzzParse feeds arbitrary lines through the parser, the classifier and a
// summary: nothing may panic, and what comes out must hold together. The
// seeds are every real line in testdata/real plus testdata/fuzz/FuzzParse.
//
//	go test ./internal/etcdlog -run - -fuzz FuzzParse -fuzztime 1m
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob("testdata/real/*.log")
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			f.Add(append([]byte(nil), sc.Bytes()...))
		}
	}
	p := NewParser(ParserOptions{Year: 2020})
	var cl Classifier
	f.Fuzz(func(t *testing.T, line []byte) {
		var e Entry
		if p.Parse(line, &e) {
			if e.Format == FormatUnknown || len(e.Msg) > len(line)+len(p.inner[0])+len(p.inner[1]) {
				t.Fatalf("parsed entry %+v", e)
			}
			var ev Event
			if cl.Classify(&e, &ev) {
				if ev.Class == ClassNone || ev.Class >= numClasses || ev.Also >= numClasses {
					t.Fatalf("class %d also %d", ev.Class, ev.Also)
				}
				if ev.Took < 0 || ev.Expected < 0 {
					t.Fatalf("negative durations %v %v", ev.Took, ev.Expected)
				}
				if !bytes.HasPrefix(ev.Key, ev.Prefix) {
					t.Fatalf("prefix %q of key %q", ev.Prefix, ev.Key)
				}
			}
		}
		// The same line through the whole scan, twice and with a blank
		// line between: every non-blank line is counted once.
		s := NewSummary(SummaryOptions{MaxEvents: 10, MaxPrefixes: 2, MaxBuckets: 4})
		var src result.LogSource
		in := bytes.Join([][]byte{line, {}, line}, []byte("\n"))
		if err := ScanReader(context.Background(), bytes.NewReader(in), "fuzz", "m", NewParser(ParserOptions{Year: 2020}), s, 1<<16, &src); err != nil {
			t.Fatal(err)
		}
		var want int64
		for _, seg := range bytes.Split(in, []byte("\n")) {
			if !isBlank(seg) {
				want++
			}
		}
		l := s.Result()
		if l.Unparsed > l.Lines || l.Lines != want || src.Lines != want {
			t.Fatalf("lines %d unparsed %d source %+v", l.Lines, l.Unparsed, src)
		}
		if l.Timeline != nil && l.Timeline.Buckets > 4 {
			t.Fatalf("%d buckets", l.Timeline.Buckets)
		}
	})
}
