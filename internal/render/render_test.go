package render

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/etcdperf/etcdperf/internal/result"
	"github.com/etcdperf/etcdperf/internal/testutil"
)

// textAndCSV renders testdata/name.json as text and CSV; recs is the CSV
// read back, which fails the test when its rows are not aligned.
func textAndCSV(t *testing.T, name string) (res *result.Result, txt, tab *bytes.Buffer, recs [][]string) {
	t.Helper()
	res, err := result.ReadFile(filepath.Join("testdata", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	txt, tab = &bytes.Buffer{}, &bytes.Buffer{}
	if err := Text(txt, res); err != nil {
		t.Fatal(err)
	}
	if err := CSV(tab, res); err != nil {
		t.Fatal(err)
	}
	recs, err = csv.NewReader(bytes.NewReader(tab.Bytes())).ReadAll()
	if err != nil {
		t.Fatalf("CSV is not aligned: %v", err)
	}
	return res, txt, tab, recs
}

// The inputs are Results written by real `etcdperf disk` runs on ext4 and
// tmpfs; the golden files hold their text view.
func TestDiskTextGolden(t *testing.T) {
	for _, name := range []string{"disk-ext4", "disk-tmpfs", "disk-fail"} {
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
			// The verdict line and every check appear, whatever the layout.
			if !strings.Contains(out, "Verdict: "+strings.ToUpper(string(res.Verdict))) {
				t.Errorf("no verdict line:\n%s", out)
			}
			for _, c := range res.Checks {
				if !strings.Contains(out, c.Name+":") {
					t.Errorf("check %s missing:\n%s", c.Name, out)
				}
			}
			testutil.Golden(t, name+".txt", buf.Bytes())
		})
	}
}

func TestJSONRoundTrip(t *testing.T) {
	res, err := result.ReadFile(filepath.Join("testdata", "disk-ext4.json"))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := JSON(&buf, res); err != nil {
		t.Fatal(err)
	}
	back, err := result.Decode(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if back.Disk.SyncLatency.P99 != res.Disk.SyncLatency.P99 || back.Verdict != res.Verdict || back.Env.FSType != res.Env.FSType {
		t.Error("JSON round trip changed the Result")
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errWrite }

var errWrite = bytes.ErrTooLarge

func TestTextReportsWriteErrors(t *testing.T) {
	res, err := result.ReadFile(filepath.Join("testdata", "disk-ext4.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := Text(failWriter{}, res); err != errWrite {
		t.Errorf("write error lost: %v", err)
	}
}

// A run that ended early says "Incomplete" and why, once, after what it
// measured, and no verdict line, even in a Result written before such runs
// had the verdict incomplete.
func TestIncompleteHasNoVerdict(t *testing.T) {
	res, err := result.ReadFile(filepath.Join("testdata", "disk-ext4.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []result.Verdict{res.Verdict, result.Incomplete} {
		r := *res
		r.Error = "interrupted"
		r.Verdict = v
		var buf bytes.Buffer
		if err := Text(&buf, &r); err != nil {
			t.Fatal(err)
		}
		out := buf.String()
		if strings.Contains(out, "Verdict:") || strings.Count(out, "interrupted") != 1 || !strings.Contains(out, "\nIncomplete: interrupted.") {
			t.Errorf("verdict %q:\n%s", v, out)
		}
		// What it measured is still shown.
		if !strings.Contains(out, "disk_sync_p99:") {
			t.Errorf("the checks of what was measured are missing:\n%s", out)
		}
	}
}

// `etcdperf report run.json` reads as the command did: every command's
// Result, written to JSON and read back, renders the same text and CSV, and
// keeps its params as they were written (ints stay ints: a disk run of 2
// jobs still says so).
func TestTextOfResultReadBack(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	cases := map[string]*result.Result{}
	for _, f := range files {
		res, err := result.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		cases[filepath.Base(f)] = res
	}
	// Results as the commands build them, before any JSON.
	jobs := *cases["disk-ext4.json"]
	jobs.Params = &result.DiskParams{Engine: "native", Dir: "/work/tmp/fiot", BS: 2300, Size: 2 << 20, Prealloc: true, Sync: "fdatasync", RW: "write", Jobs: 2, Runtime: 60}
	cases["disk --jobs 2"] = &jobs
	cases["doctor --node"] = nodeLogDoctor()
	kinds := map[string]bool{}
	for name, res := range cases {
		t.Run(name, func(t *testing.T) {
			kinds[res.Kind] = true
			var js bytes.Buffer
			if err := result.Encode(&js, res); err != nil {
				t.Fatal(err)
			}
			written := js.String()
			back, err := result.Decode(&js)
			if err != nil {
				t.Fatal(err)
			}
			for _, view := range []func(io.Writer, *result.Result) error{Text, CSV} {
				// A kind without a CSV view says so, read back or not.
				var live, read bytes.Buffer
				lerr, rerr := view(&live, res), view(&read, back)
				if fmt.Sprint(lerr) != fmt.Sprint(rerr) {
					t.Errorf("as built: %v; read back: %v", lerr, rerr)
				}
				if live.String() != read.String() {
					t.Errorf("read back from JSON, it reads differently:\n--- as built\n%s\n--- read back\n%s", live.String(), read.String())
				}
			}
			var again bytes.Buffer
			if err := result.Encode(&again, back); err != nil {
				t.Fatal(err)
			}
			if a, b := paramsOf(t, written), paramsOf(t, again.String()); !reflect.DeepEqual(a, b) {
				t.Errorf("params written again differ:\n%v\n%v", a, b)
			}
		})
	}
	if live := cases["disk --jobs 2"]; !strings.Contains(textOf(t, live), ", 2 jobs; engine native") {
		t.Errorf("no jobs in the disk header:\n%s", textOf(t, live))
	}
	for _, k := range []string{result.KindDisk, result.KindBench, result.KindCheck, result.KindDatascale, result.KindDoctor,
		result.KindLogs, result.KindMetrics, result.KindPromExport, result.KindPromCheck, result.KindScale} {
		if !kinds[k] {
			t.Errorf("no Result of kind %s read back", k)
		}
	}
}

// paramsOf is the params of a Result's JSON and of its runs, as JSON
// decodes them.
func paramsOf(t *testing.T, js string) []any {
	t.Helper()
	var doc struct {
		Params any               `json:"params"`
		Runs   []json.RawMessage `json:"runs"`
	}
	if err := json.Unmarshal([]byte(js), &doc); err != nil {
		t.Fatal(err)
	}
	out := []any{doc.Params}
	for _, r := range doc.Runs {
		out = append(out, paramsOf(t, string(r)))
	}
	return out
}

func textOf(t *testing.T, r *result.Result) string {
	t.Helper()
	var buf bytes.Buffer
	if err := Text(&buf, r); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

// The db views of two real files: a snapshot of scale's objects, and a
// member's database fragmented by deletes, near a small quota.
func TestDBTextAndCSVGolden(t *testing.T) {
	for _, name := range []string{"db-scale", "db-fragmented"} {
		t.Run(name, func(t *testing.T) {
			res, txt, tab, recs := textAndCSV(t, name)
			testutil.Golden(t, name+".txt", txt.Bytes())
			testutil.Golden(t, name+".csv", tab.Bytes())
			if len(recs) != len(res.DB.Resources)+1 {
				t.Errorf("CSV has %d rows for %d resources", len(recs), len(res.DB.Resources))
			}
		})
	}
}
