package etcdlog

import (
	"bytes"
	"context"
	"testing"

	"github.com/etcdperf/etcdperf/internal/result"
	"github.com/etcdperf/etcdperf/internal/testutil"
)

// BenchmarkScan parses, classifies and summarises a 64 MiB synthetic log
// of a loaded cluster (testutil.WriteEtcdLog); MB/s is the throughput:
//
//	go test ./internal/etcdlog -run - -bench Scan -benchtime 5x
func BenchmarkScan(b *testing.B) {
	var log bytes.Buffer
	lines, err := testutil.WriteEtcdLog(&log, 64<<20)
	if err != nil {
		b.Fatal(err)
	}
	data := log.Bytes()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		s := NewSummary(SummaryOptions{MaxEvents: 1000})
		var src result.LogSource
		if err := ScanReader(context.Background(), bytes.NewReader(data), "bench", "bench", NewParser(ParserOptions{}), s, DefaultMaxLine, &src); err != nil {
			b.Fatal(err)
		}
		if src.Lines != lines || src.Unparsed != 0 {
			b.Fatalf("read %d lines, %d unparsed; wrote %d", src.Lines, src.Unparsed, lines)
		}
	}
}
