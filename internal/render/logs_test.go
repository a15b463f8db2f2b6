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

// logs-real.json is the Result of `etcdperf logs` over the real lines in
// internal/etcdlog/testdata/real; the golden files hold its text and CSV.
func TestLogsTextAndCSVGolden(t *testing.T) {
	res, err := result.ReadFile(filepath.Join("testdata", "logs-real.json"))
	if err != nil {
		t.Fatal(err)
	}
	var txt bytes.Buffer
	if err := Text(&txt, res); err != nil {
		t.Fatal(err)
	}
	out := txt.String()
	for _, st := range res.Logs.Stats {
		if !strings.Contains(out, st.Class) {
			t.Errorf("class %s missing from the text", st.Class)
		}
	}
	if !strings.Contains(out, "Verdict: "+strings.ToUpper(string(res.Verdict))) {
		t.Errorf("no verdict line:\n%s", out)
	}
	testutil.Golden(t, "logs-real.txt", txt.Bytes())

	var c bytes.Buffer
	if err := CSV(&c, res); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(bytes.NewReader(c.Bytes())).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != len(res.Logs.Events)+1 || rows[0][0] != "time" || rows[0][2] != "class" {
		t.Fatalf("%d CSV rows for %d events", len(rows), len(res.Logs.Events))
	}
	for i, e := range res.Logs.Events {
		if rows[i+1][2] != e.Class || rows[i+1][1] != e.Member || rows[i+1][len(rows[0])-1] != e.Message {
			t.Errorf("row %d %v for event %+v", i+1, rows[i+1], e)
		}
	}
	testutil.Golden(t, "logs-real.csv", c.Bytes())
}
