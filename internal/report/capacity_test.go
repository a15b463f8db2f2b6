package report

import (
	"bytes"
	"html"
	"image/png"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/etcdperf/etcdperf/internal/judge"
	"github.com/etcdperf/etcdperf/internal/limits"
	"github.com/etcdperf/etcdperf/internal/result"
	"github.com/etcdperf/etcdperf/internal/testutil"
)

// capacityDoctor is a doctor of two locations with their capacity sweeps,
// as `etcdperf doctor --data-dir /var/lib/etcd --data-dir /mnt/etcd-capped
// --demand 600` writes it (2 CPUs, 2s steps): a local NVMe that held up to
// 2,800 puts/s, its backend commit broken at 4,000 while the device
// answered fast (its disk or its CPU); and a volume whose member's cgroup
// caps its writes at 500 IOPS, broken at 1,000 puts/s by the WAL fsync p99
// (the IOPS cap), that held 390. The answers are judge.Capacity's.
func capacityDoctor() *result.Result {
	start := time.Date(2026, 11, 25, 4, 10, 0, 0, time.UTC)
	type step struct {
		offered, achieved  float64
		clients            int
		wal, commit, req   float64
		walBound, comBound bool
		fsyncs             float64
		devIOPS, util, aw  float64
		capped             float64 // the cgroup's writes/s (cap 500 on vdb)
		etcd, client, host float64
		broke              []string
	}
	sweep := func(steps []step, capIOPS float64) *result.Capacity {
		c := &result.Capacity{ValueSize: 1024, KeySize: 256, StepSeconds: 2, Demand: 600, DemandFrom: "--demand"}
		for _, s := range steps {
			st := result.CapacityStep{Offered: s.offered, Achieved: s.achieved, Clients: s.clients, Seconds: 2,
				WALFsyncP99: s.wal, WALFsyncBound: s.walBound, BackendCommitP99: s.commit, BackendCommitBound: s.comBound,
				WALFsyncs: s.fsyncs, RequestP99: s.req, DeviceIOPS: s.devIOPS, DeviceUtil: s.util, DeviceAwait: s.aw,
				HostCPUBusy: s.host, EtcdCPU: s.etcd, ClientCPU: s.client, Broke: s.broke}
			if capIOPS > 0 {
				st.IOPSCap, st.CappedWriteIOPS, st.CapDevice = capIOPS, s.capped, "vdb"
			}
			if len(s.broke) > 0 {
				st.Cause = "disk" // as the verdict's rules name it; the sweep refines it
			}
			c.Steps = append(c.Steps, st)
		}
		judge.Capacity(c, limits.Table)
		return c
	}
	plain := sweep([]step{
		{offered: 150, achieved: 150, clients: 50, wal: 0.001, walBound: true, commit: 0.0021, req: 0.0041, fsyncs: 150,
			devIOPS: 312, util: 0.04, aw: 0.00011, etcd: 0.08, client: 0.03, host: 0.09},
		{offered: 1000, achieved: 999, clients: 200, wal: 0.001, walBound: true, commit: 0.0037, req: 0.0062, fsyncs: 884,
			devIOPS: 1874, util: 0.19, aw: 0.00012, etcd: 0.52, client: 0.21, host: 0.38},
		{offered: 2000, achieved: 1996, clients: 300, wal: 0.0019, commit: 0.0083, req: 0.0114, fsyncs: 1406,
			devIOPS: 2968, util: 0.31, aw: 0.00011, etcd: 0.94, client: 0.41, host: 0.7},
		{offered: 4000, achieved: 3718, clients: 400, wal: 0.0031, commit: 0.0412, req: 0.0474, fsyncs: 1731,
			devIOPS: 3781, util: 0.37, aw: 0.000108, etcd: 1.31, client: 0.55, host: 0.88, broke: []string{limits.BackendCommitP99}},
		{offered: 2800, achieved: 2793, clients: 349, wal: 0.0023, commit: 0.0163, req: 0.0189, fsyncs: 1588,
			devIOPS: 3402, util: 0.35, aw: 0.00011, etcd: 1.12, client: 0.48, host: 0.81},
	}, 0)
	capped := sweep([]step{
		{offered: 150, achieved: 150, clients: 50, wal: 0.001, walBound: true, commit: 0.0018, req: 0.0036, fsyncs: 150,
			devIOPS: 318, util: 0.05, aw: 0.0002, capped: 318, etcd: 0.07, client: 0.03, host: 0.08},
		{offered: 1000, achieved: 962, clients: 200, wal: 0.0231, commit: 0.0198, req: 0.0612, fsyncs: 238,
			devIOPS: 497, util: 0.18, aw: 0.0004, capped: 497, etcd: 0.21, client: 0.19, host: 0.27, broke: []string{limits.WALFsyncP99}},
		{offered: 390, achieved: 390, clients: 126, wal: 0.0052, commit: 0.0071, req: 0.0098, fsyncs: 305,
			devIOPS: 486, util: 0.12, aw: 0.0003, capped: 486, etcd: 0.15, client: 0.08, host: 0.16},
	}, 500)

	location := func(dir, device string, c *result.Capacity, wal, commit, req float64) result.Result {
		r := result.Result{Schema: result.Schema, Kind: "doctor", Name: dir, Tool: result.Tool{Name: "etcdperf", Version: "devel"},
			Started: start, Finished: start.Add(40 * time.Second),
			Env:      &result.Env{Hostname: "vm", OS: "linux", Arch: "amd64", CPUs: 2, Dir: dir, FSType: "ext4", Device: device, EtcdVersion: "3.7.3"},
			Capacity: c}
		for _, o := range []struct {
			id    string
			v     float64
			bound bool
		}{{limits.Throughput, 1.0, false}, {limits.RequestP99, req, false}, {limits.WALFsyncP99, wal, true}, {limits.BackendCommitP99, commit, false},
			{limits.CapacityHeadroom, c.Headroom, false}} {
			cr, _ := limits.Lookup(limits.Table, o.id)
			ch := limits.Evaluate(cr, o.v)
			ch.Bound = o.bound
			r.Checks = append(r.Checks, ch)
		}
		r.Verdict = limits.Verdict(r.Checks)
		r.Summary = dir + ": " + c.Answer
		return r
	}
	root := &result.Result{Schema: result.Schema, Kind: "doctor", Tool: result.Tool{Name: "etcdperf", Version: "devel"},
		Started: start, Finished: start.Add(80 * time.Second),
		Env:    &result.Env{Hostname: "vm", OS: "linux", Arch: "amd64", CPUs: 2},
		Params: result.RawParams{"data_dirs": []any{"/var/lib/etcd", "/mnt/etcd-capped"}, "load": "s", "rate": 150.0, "clients": 50.0, "capacity_step": 2.0, "demand": 600.0},
		Runs: []result.Result{
			location("/var/lib/etcd", "nvme0n1", plain, 0.001, 0.0021, 0.0041),
			location("/mnt/etcd-capped", "vdb", capped, 0.001, 0.0018, 0.0036),
		}}
	for _, r := range root.Runs {
		root.Verdict = result.Worse(root.Verdict, r.Verdict)
	}
	root.Summary = "/var/lib/etcd carries 2,800 puts/s, 4.7x the peak demand of 600; /mnt/etcd-capped carries 390: under the peak demand (its IOPS cap)"
	return root
}

// TestCapacityFixture keeps the doctor in testdata, where `etcdperf report`
// reads it like any file (-update rewrites it).
func TestCapacityFixture(t *testing.T) {
	var buf bytes.Buffer
	if err := result.Encode(&buf, capacityDoctor()); err != nil {
		t.Fatal(err)
	}
	testutil.Golden(t, "doctor-capacity.json", buf.Bytes())
}

// sectionHTML is the page's section with the given id.
func sectionHTML(t *testing.T, page, id string) string {
	t.Helper()
	i := strings.Index(page, `<section id="`+id+`">`)
	if i < 0 {
		return ""
	}
	j := strings.Index(page[i:], "</section>")
	return page[i : i+j]
}

// A doctor of two locations with their sweeps: one figure each, side by
// side on the same scales, with etcd's limits, what held and what broke,
// the answer as caption, and the steps as tables.
func TestCapacitySection(t *testing.T) {
	rep := New(Combine(load(t, "doctor-capacity.json")))
	page := pageOf(t, rep.Root)
	sec := sectionHTML(t, page, "capacity")
	if sec == "" {
		t.Fatal("no capacity section")
	}
	if n := strings.Count(sec, "<figure>"); n != 2 || strings.Count(sec, "<svg") != 2 {
		t.Errorf("%d figures, want one per location", n)
	}
	for _, r := range rep.Runs {
		c := r.Result.Capacity
		// The caption: the location, then its answer.
		if !strings.Contains(sec, "<figcaption><b>"+html.EscapeString(r.Label)+"</b> "+html.EscapeString(c.Answer)+"</figcaption>") {
			t.Errorf("%s: no caption with its answer %q", r.Label, c.Answer)
		}
	}
	for _, want := range []string{
		"WAL fsync limit 10ms", "backend commit limit 25ms", // the limits, in each figure
		"held 2,800/s", "broke at 4,000/s", "held 390/s", "broke at 1,000/s",
		"at 4,000 the backend commit p99 broke (41.2ms): its disk or its CPU limits it there",
		"at 1,000 the WAL fsync p99 broke (23.1ms): the volume was at its IOPS limit",
		"/var/lib/etcd: the steps in the order they ran (1.0 KiB values, 2s each)",
		"497 (500 on vdb)", "3,781 (37%)", "1.31 / 0.55",
	} {
		if n := strings.Count(sec, html.EscapeString(want)); n == 0 {
			t.Errorf("capacity section lacks %q", want)
		}
	}
	for _, l := range []string{"WAL fsync limit 10ms", "backend commit limit 25ms"} {
		if n := strings.Count(sec, l); n != 2 {
			t.Errorf("%q drawn %d times, want once per figure", l, n)
		}
	}
	// A p99 in etcd's lowest bucket is drawn at 1ms and reads "<= 1ms" in
	// the figure (once per step) and in the table; never its interpolation.
	figs := regexp.MustCompile(`(?s)<svg.*?</svg>`).FindAllString(sec, -1)
	if len(figs) != 2 {
		t.Fatalf("%d SVGs", len(figs))
	}
	for i, want := range []int{2, 1} { // plain: 150 and 1,000/s; capped: 150/s
		if n := strings.Count(figs[i], "&lt;= 1ms"); n != want {
			t.Errorf("figure %d: %d \"<= 1ms\" labels, want %d", i+1, n, want)
		}
	}
	// The steps, as they ran.
	b := capacityBlock(rep.Runs)
	if len(b.Tables) != 2 || len(b.Tables[0].Rows) != 5 || len(b.Tables[1].Rows) != 3 {
		t.Fatalf("steps tables %+v", b.Tables)
	}
	if row := b.Tables[0].Rows[4]; row[1] != "2,800" || row[3] != "349" {
		t.Errorf("the last step of the plain sweep is the knee's (2,800/s, 349 clients): %v", row)
	}
	if row := b.Tables[0].Rows[3]; row[len(row)-1] != limits.BackendCommitP99 {
		t.Errorf("the step that broke: %v", row)
	}
	if row := b.Tables[1].Rows[0]; row[4] != "<= 1ms" || row[5] != "1.8ms" {
		t.Errorf("the first step of the capped sweep: %v", row)
	}
	// Side by side on the same scales.
	if len(b.Charts) != 2 {
		t.Fatalf("%d charts", len(b.Charts))
	}
	a, c := b.Charts[0], b.Charts[1]
	for _, p := range [][2]float64{{a.Plot.X.Min, c.Plot.X.Min}, {a.Plot.X.Max, c.Plot.X.Max}, {a.Plot.Y.Min, c.Plot.Y.Min}, {a.Plot.Y.Max, c.Plot.Y.Max},
		{a.Lower.Y.Min, c.Lower.Y.Min}, {a.Lower.Y.Max, c.Lower.Y.Max}, {a.Lower.X.Min, a.Plot.X.Min}, {a.Lower.X.Max, a.Plot.X.Max}} {
		if p[0] != p[1] {
			t.Errorf("the figures' axes differ: %v", p)
		}
	}
	if a.Plot.Y.Min > 0.001 || a.Plot.Y.Max < 0.025 || a.Plot.X.Min > 150 || a.Plot.X.Max < 4000 {
		t.Errorf("the p99 axis %g..%g or the offered %g..%g misses the data or the limits", a.Plot.Y.Min, a.Plot.Y.Max, a.Plot.X.Min, a.Plot.X.Max)
	}
	// The summary compares the capacities and the headroom.
	for _, want := range []string{"capacity (puts/s within etcd&#39;s limits)", "2800/s", "390/s", "capacity over peak write demand", "4.67x", "0.65x"} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	// PNGs of the two-panel figures.
	paths, err := New(Combine(load(t, "doctor-capacity.json"))).WritePNGs(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range paths {
		if !strings.Contains(p, "capacity-") {
			continue
		}
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(f)
		f.Close()
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if n := testutil.NonWhite(img); n < 5000 {
			t.Errorf("%s: only %d pixels drawn", p, n)
		}
	}
}

// No sweep, no section; markup in a sweep is escaped; odd steps draw what
// they can.
func TestCapacitySectionFollowsTheData(t *testing.T) {
	doc := capacityDoctor()
	for i := range doc.Runs {
		doc.Runs[i].Capacity = nil
	}
	p := pageOf(t, doc)
	if strings.Contains(p, `id="capacity"`) || strings.Contains(p, "capacity (puts/s") || strings.Contains(p, "broke at") {
		t.Error("a report without capacity has a capacity section")
	}
	for _, f := range []string{"disk-ext4.json", "bench-nvme.json"} {
		if p := pageOf(t, Combine(load(t, f))); strings.Contains(p, `id="capacity"`) {
			t.Errorf("%s: a capacity section", f)
		}
	}

	doc = capacityDoctor()
	doc.Runs[0].Name = `<b>disk</b>`
	doc.Runs[0].Capacity.Answer = `carries <script>alert(1)</script> puts/s`
	doc.Runs[1].Capacity.Steps = append(doc.Runs[1].Capacity.Steps,
		result.CapacityStep{Offered: 0}, result.CapacityStep{Offered: 8000, Achieved: -1, WALFsyncP99: -3, BackendCommitP99: 0})
	p = pageOf(t, doc)
	if strings.Contains(p, "<script") || strings.Contains(p, "<b>disk</b>") {
		t.Error("markup from a sweep reached the page unescaped")
	}
	sec := sectionHTML(t, p, "capacity")
	if strings.Count(sec, "<svg") != 2 || strings.Contains(sec, `class="error"`) {
		t.Errorf("odd steps cost a figure:\n%s", sec)
	}
}

// The page opens in a real browser and the capacity figures are drawn:
// each location's colour over many pixels, and the red of what broke.
func TestCapacityInChromium(t *testing.T) {
	dir := t.TempDir()
	page := filepath.Join(dir, "capacity.html")
	var buf bytes.Buffer
	if err := New(Combine(load(t, "doctor-capacity.json"))).HTML(&buf); err != nil {
		t.Fatal(err)
	}
	// Only the capacity section, so that the screenshot is of it.
	s := buf.String()
	i, j := strings.Index(s, "<main>"), strings.Index(s, "</main>")
	s = s[:i] + "<main>" + sectionHTML(t, s, "capacity") + "</section>" + s[j:]
	if err := os.WriteFile(page, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	img := testutil.Screenshot(t, page, 1200, 1000)
	count := map[[3]uint32]int{}
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			for _, c := range [][3]uint32{{0x00, 0x72, 0xB2}, {0xD5, 0x5E, 0x00}, {0xC0, 0x1B, 0x1B}} {
				if near(r, c[0]) && near(g, c[1]) && near(bl, c[2]) {
					count[c]++
				}
			}
		}
	}
	t.Logf("screenshot: %v pixels of blue, vermillion and red", count)
	for c, what := range map[[3]uint32]string{{0x00, 0x72, 0xB2}: "the first location's blue", {0xD5, 0x5E, 0x00}: "the second location's vermillion",
		{0xC0, 0x1B, 0x1B}: "the red of the limits and what broke"} {
		if count[c] < 300 {
			t.Errorf("the screenshot has %d pixels of %s", count[c], what)
		}
	}
}

// near compares a 16-bit colour channel with an 8-bit value.
func near(v uint32, want uint32) bool {
	d := int(v>>8) - int(want)
	return d >= -24 && d <= 24
}
