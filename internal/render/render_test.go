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
