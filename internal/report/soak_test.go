package report

import (
	"html"
	"strings"
	"testing"
	"time"

	"github.com/etcdperf/etcdperf/internal/judge"
	"github.com/etcdperf/etcdperf/internal/limits"
	"github.com/etcdperf/etcdperf/internal/result"
	"github.com/etcdperf/etcdperf/internal/units"
)

// soakDoctor is a doctor of two locations with a soak of 2 minutes each,
// a sample every 10 s, judged as doctor judges it: a volume whose burst
// credits ran out after 60 s (3,000 writes/s, then 900, the WAL fsync p99
// from 2ms to 41ms) and a disk that held its rate throughout.
func soakDoctor() *result.Result {
	start := time.Date(2026, 11, 26, 4, 10, 0, 0, time.UTC)
	soak := func(drop bool) *result.Soak {
		s := &result.Soak{Rate: 1000, RateFrom: "capacity", Clients: 200, ValueSize: 1024, KeySize: 256, Seconds: 120, IntervalSeconds: 10}
		for t := 10.0; t <= 120; t += 10 {
			x := result.SoakSample{T: t, Seconds: 10, Achieved: 1000, WALFsyncP99: 0.001, WALFsyncBound: true, BackendCommitP99: 0.004,
				WALFsyncs: 700, DeviceIOPS: 3000, DeviceUtil: 0.4, DeviceAwait: 0.0003, DeviceWriteBytes: 12e6}
			if drop && t > 60 {
				x = result.SoakSample{T: t, Seconds: 10, Achieved: 310, WALFsyncP99: 0.041, BackendCommitP99: 0.06,
					WALFsyncs: 210, DeviceIOPS: 900, DeviceUtil: 1, DeviceAwait: 0.04, DeviceWriteBytes: 3.6e6}
			}
			s.Series = append(s.Series, x)
		}
		judge.Soak(s, limits.Table)
		return s
	}
	location := func(dir, device string, s *result.Soak) result.Result {
		return result.Result{Schema: result.Schema, Kind: "doctor", Name: dir, Tool: result.Tool{Name: "etcdperf", Version: "devel"},
			Started: start, Finished: start.Add(3 * time.Minute), Verdict: result.Pass,
			Env:  &result.Env{Hostname: "vm", OS: "linux", Arch: "amd64", CPUs: 2, Dir: dir, FSType: "ext4", Device: device},
			Soak: s, Summary: dir + ": " + s.Answer}
	}
	return &result.Result{Schema: result.Schema, Kind: "doctor", Tool: result.Tool{Name: "etcdperf", Version: "devel"},
		Started: start, Finished: start.Add(6 * time.Minute), Verdict: result.Pass,
		Env:  &result.Env{Hostname: "vm", OS: "linux", Arch: "amd64", CPUs: 2},
		Runs: []result.Result{location("/mnt/gp2", "nvme1n1", soak(true)), location("/var/lib/etcd", "nvme0n1", soak(false))}}
}

// A soak is drawn per location: etcd's p99s over the rate achieved, the
// device's writes over its MB/s, its utilisation over its await; the
// last part marked in each panel, the drop where there was one, the
// sustained figure across the rate and stated in the caption (the
// answer).
func TestSoakSection(t *testing.T) {
	doc := soakDoctor()
	burst, steady := doc.Runs[0].Soak, doc.Runs[1].Soak
	if burst.Drop == nil || steady.Drop != nil || burst.SustainedPutsPerS <= 0 || burst.SustainedPutsPerS >= 1000 || steady.SustainedPutsPerS != 1000 {
		t.Fatalf("the fixture is not judged as meant: %+v / %+v", burst, steady)
	}
	page := pageOf(t, doc)
	sec := sectionHTML(t, page, "soak")
	if sec == "" {
		t.Fatal("no soak section")
	}
	if n := strings.Count(sec, "<svg"); n != 6 {
		t.Errorf("%d figures, want 3 per location", n)
	}
	figs := strings.Split(sec, "<figure>")[1:]
	if len(figs) != 6 {
		t.Fatalf("%d figures", len(figs))
	}
	for i, s := range []*result.Soak{burst, steady} {
		etcd, writes, busy := figs[3*i], figs[3*i+1], figs[3*i+2]
		if !strings.Contains(etcd, html.EscapeString(s.Answer)+"</figcaption>") {
			t.Errorf("location %d: the answer is not the caption of etcd's figure", i+1)
		}
		for _, want := range []string{"WAL fsync p99", "backend commit p99", "WAL fsync limit 10ms", "achieved puts/s",
			"held 1,000/s offered", "sustained ~" + units.Thousands(s.SustainedPutsPerS) + "/s", "last part from " + "80s", "seconds into the soak"} {
			if !strings.Contains(etcd, html.EscapeString(want)) {
				t.Errorf("location %d: etcd's figure lacks %q", i+1, want)
			}
		}
		for _, want := range []string{"device writes/s", "etcd&#39;s WAL fsyncs/s", "MB/s written"} {
			if !strings.Contains(writes, want) {
				t.Errorf("location %d: the writes figure lacks %q", i+1, want)
			}
		}
		for _, want := range []string{"device utilisation", "write await"} {
			if !strings.Contains(busy, want) {
				t.Errorf("location %d: the busy figure lacks %q", i+1, want)
			}
		}
		// The drop: named once in each figure's upper panel, only where
		// there was one.
		fell := "fell after 60s"
		for j, f := range []string{etcd, writes, busy} {
			if n, want := strings.Count(f, fell), map[bool]int{true: 1}[s.Drop != nil]; n != want {
				t.Errorf("location %d figure %d: %q %d times, want %d", i+1, j+1, fell, n, want)
			}
		}
	}
	if !strings.Contains(figs[1], "After 60s the device&#39;s writes fell from 3,000 to 900/s (12.0 to 3.6 MB/s).") {
		t.Errorf("the burst's writes figure does not say the drop: %s", figs[1][:200])
	}
	for _, want := range []string{"sustained puts/s (soak&#39;s last part)", "dropped after this", "last part"} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	// Without the device's figures, etcd's figure alone; without a soak,
	// no section.
	for i := range doc.Runs {
		for j := range doc.Runs[i].Soak.Series {
			x := &doc.Runs[i].Soak.Series[j]
			x.DeviceIOPS, x.DeviceUtil, x.DeviceAwait, x.DeviceWriteBytes = 0, 0, 0, 0
		}
	}
	if sec := sectionHTML(t, pageOf(t, doc), "soak"); strings.Count(sec, "<svg") != 2 || strings.Contains(sec, `class="error"`) {
		t.Errorf("without the device's figures: %d figures", strings.Count(sec, "<svg"))
	}
	for i := range doc.Runs {
		doc.Runs[i].Soak = nil
	}
	if strings.Contains(pageOf(t, doc), `id="soak"`) {
		t.Error("a soak section without a soak")
	}
}
