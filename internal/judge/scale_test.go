package judge

import (
	"strings"
	"testing"

	"github.com/etcdperf/etcdperf/internal/limits"
	"github.com/etcdperf/etcdperf/internal/result"
)

// stopReason: failed requests, a broken limit, and a database that the
// next step would take past the quota's limit.
func TestStopReason(t *testing.T) {
	lat := func(p99 float64) *result.Latency { return &result.Latency{Count: 10, P99: p99, P50: p99} }
	ok := result.ScaleStep{Step: 2, Objects: 2000, Put: lat(0.01), DBSize: 100 << 20,
		Lists: []result.ScaleList{{Kind: "pods", Latency: lat(0.5)}}}
	prev := result.ScaleStep{Step: 1, Objects: 1000, DBSize: 50 << 20}
	if why := StopReason(ok, &prev, 1<<30, limits.Table); why != "" {
		t.Errorf("a healthy step stops: %q", why)
	}
	failed := ok
	failed.Errors = map[string]int64{"put: Unavailable: etcdserver: request timed out": 3, "list: x": 1}
	if why := StopReason(failed, &prev, 1<<30, limits.Table); !strings.Contains(why, "4 requests failed at 2000 objects (step 2)") || !strings.Contains(why, "request timed out") {
		t.Errorf("errors: %q", why)
	}
	slowList := ok
	slowList.Lists = []result.ScaleList{{Kind: "pods", Latency: lat(31)}}
	if why := StopReason(slowList, &prev, 1<<30, limits.Table); !strings.Contains(why, "list of a whole resource") || !strings.Contains(why, "31s") {
		t.Errorf("slow list: %q", why)
	}
	// 700 MiB of a 1 GiB quota passes (under 80%), but the next step adds
	// 650 MiB.
	big := ok
	big.DBSize = 700 << 20
	if why := StopReason(big, &prev, 1<<30, limits.Table); !strings.Contains(why, "the next step would take the database to 1.3 GiB") {
		t.Errorf("quota: %q", why)
	}
	// Without a quota from etcd, its default 2 GiB.
	if why := StopReason(big, &prev, 0, limits.Table); why != "" {
		t.Errorf("700 MiB growing by 650 MiB against 2 GiB stops: %q", why)
	}
}

// A run that went through every step but whose etcd fsync p99 over the
// whole run broke its limit says so in its summary, not only in a check.
func TestJudgeScaleSaysWhyItFailed(t *testing.T) {
	lat := func(p99 float64) *result.Latency { return &result.Latency{Count: 10, P99: p99, P50: p99} }
	res := result.New("scale")
	res.Scale = &result.Scale{Planned: 1, Seconds: 2, Quota: 1 << 30,
		Steps: []result.ScaleStep{{Step: 1, Objects: 500, Put: lat(0.01), DBSize: 10 << 20}}}
	res.Server = &result.Server{WALFsync: lat(0.030)}
	Judge(res, limits.Table)
	if res.Verdict != result.Fail || !strings.Contains(res.Summary, "WAL fsync") || !strings.Contains(res.Summary, "over its limit") {
		t.Errorf("verdict %s, summary %q", res.Verdict, res.Summary)
	}
	res = result.New("scale")
	res.Scale = &result.Scale{Planned: 1, Seconds: 2, Quota: 1 << 30,
		Steps: []result.ScaleStep{{Step: 1, Objects: 500, Put: lat(0.01), DBSize: 10 << 20}}}
	res.Server = &result.Server{WALFsync: lat(0.002)}
	Judge(res, limits.Table)
	if res.Verdict == result.Fail || strings.Contains(res.Summary, "over its limit") {
		t.Errorf("a healthy run: verdict %s, summary %q", res.Verdict, res.Summary)
	}
}
