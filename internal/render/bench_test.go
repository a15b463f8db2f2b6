package render

import (
	"bytes"
	"encoding/csv"
	"path/filepath"
	"strings"
	"testing"

	"github.com/etcdperf/etcdperf/internal/result"
	"github.com/etcdperf/etcdperf/internal/testutil"
)

// The inputs are Results of real `etcdperf bench` runs: put on tmpfs (every
// WAL fsync under 1ms), txn-mixed with a rate, watch-latency, and put on a
// 3-member embedded cluster.
func TestBenchTextGolden(t *testing.T) {
	for _, name := range []string{"bench-put-tmpfs", "bench-txn-mixed-rate", "bench-watch", "bench-put-3members"} {
		t.Run(name, func(t *testing.T) {
			res, err := result.ReadFile(filepath.Join("testdata", name+".json"))
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			if err := Text(&buf, res); err != nil {
				t.Fatal(err)
			}
			out := buf.String()
			for _, want := range []string{"Summary:", "Requests/sec:", "Response time histogram:", "Latency distribution:", "Server (etcd's /metrics", "Verdict: "} {
				if !strings.Contains(out, want) {
					t.Errorf("no %q in:\n%s", want, out)
				}
			}
			testutil.Golden(t, name+".txt", buf.Bytes())
		})
	}
}

func TestBenchTextSaysAtMostOneMillisecond(t *testing.T) {
	res, err := result.ReadFile(filepath.Join("testdata", "bench-put-tmpfs.json"))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := Text(&buf, res); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "p99 <= 1ms") || strings.Contains(buf.String(), "990µs") {
		t.Errorf("a WAL fsync p99 in etcd's lowest bucket must read <= 1ms:\n%s", buf.String())
	}
}

func TestBenchTextServiceTimeAndErrors(t *testing.T) {
	res, err := result.ReadFile(filepath.Join("testdata", "bench-txn-mixed-rate.json"))
	if err != nil {
		t.Fatal(err)
	}
	res.Bench.Errors = map[string]int64{"Unavailable: etcdserver: leader changed": 3, "DeadlineExceeded: no response within --command-timeout 5s": 7}
	var buf bytes.Buffer
	if err := Text(&buf, res); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{"Service time, from the actual send", "Read summary:", "Write summary:", "Error distribution:\n  [7]\tDeadlineExceeded", "  [3]\tUnavailable: etcdserver: leader changed"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in:\n%s", want, out)
		}
	}
}

func TestBenchCSV(t *testing.T) {
	res, err := result.ReadFile(filepath.Join("testdata", "bench-txn-mixed-rate.json"))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := CSV(&buf, res); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != len(res.Bench.Series)+1 || strings.Join(rows[0], ",") != "t,ops,p50,p99,max,errors" {
		t.Fatalf("rows %v", rows)
	}
	var ops int
	for _, r := range rows[1:] {
		var n int
		for _, c := range r[1] {
			n = n*10 + int(c-'0')
		}
		ops += n
	}
	if int64(ops) != res.Bench.Ops {
		t.Errorf("the series counts %d ops, the run %d", ops, res.Bench.Ops)
	}
}
