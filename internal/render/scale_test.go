package render

import (
	"bytes"
	"encoding/csv"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/etcdperf/etcdperf/internal/result"
	"github.com/etcdperf/etcdperf/internal/testutil"
)

// scale-embedded.json is the Result of a real run of `etcdperf scale
// --objects pods=4000,services=400,events=400 --steps 4`; the golden files
// hold its text and CSV.
func TestScaleTextAndCSVGolden(t *testing.T) {
	res, err := result.ReadFile(filepath.Join("testdata", "scale-embedded.json"))
	if err != nil {
		t.Fatal(err)
	}
	sc := res.Scale
	var txt bytes.Buffer
	if err := Text(&txt, res); err != nil {
		t.Fatal(err)
	}
	out := txt.String()
	lines := strings.Split(out, "\n")
	header := -1
	for i, l := range lines {
		if strings.HasPrefix(l, "step  objects") {
			header = i
		}
	}
	if header < 0 {
		t.Fatalf("no steps table:\n%s", out)
	}
	for i, st := range sc.Steps {
		f := strings.Fields(lines[header+1+i])
		if f[0] != strconv.Itoa(st.Step) || f[1] != strconv.FormatInt(st.Objects, 10) {
			t.Errorf("row %d: %q", i, lines[header+1+i])
		}
	}
	for _, want := range []string{"list pods", "list services", "list events", "log warnings", "leased for 60s", "Verdict: " + strings.ToUpper(string(res.Verdict))} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
	testutil.Golden(t, "scale-embedded.txt", txt.Bytes())

	var c bytes.Buffer
	if err := CSV(&c, res); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(bytes.NewReader(c.Bytes())).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != len(sc.Steps)+1 {
		t.Fatalf("%d CSV rows for %d steps", len(rows), len(sc.Steps))
	}
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	for _, h := range []string{"objects", "pods", "events", "db_size", "db_size_in_use", "rss", "wal_fsync_p99", "backend_commit_p99", "put_p99",
		"list_pods_p50", "list_events_max", "watch_lag_p99", "proposals_pending", "slow_applies", "errors"} {
		if _, ok := col[h]; !ok {
			t.Errorf("no column %q in %v", h, rows[0])
		}
	}
	for i, st := range sc.Steps {
		row := rows[i+1]
		if row[col["objects"]] != strconv.FormatInt(st.Objects, 10) || row[col["db_size"]] != strconv.FormatFloat(st.DBSize, 'f', -1, 64) || row[col["put_p99"]] != strconv.FormatFloat(st.Put.P99, 'f', -1, 64) {
			t.Errorf("row %d %v for step %+v", i+1, row, st)
		}
	}
	testutil.Golden(t, "scale-embedded.csv", c.Bytes())
}
