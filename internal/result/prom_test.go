package result

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"
)

func TestPromValueJSON(t *testing.T) {
	cells := []PromValue{PromSample(0.25), {}, PromSample(math.NaN()), PromSample(math.Inf(1)), PromSample(math.Inf(-1)), PromSample(0)}
	b, err := json.Marshal(cells)
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != `[0.25,null,"NaN","+Inf","-Inf",0]` {
		t.Errorf("JSON %s", b)
	}
	var back []PromValue
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back[0] != cells[0] || back[1].Present || !math.IsNaN(back[2].V) || !math.IsInf(back[3].V, 1) || !math.IsInf(back[4].V, -1) || !back[5].Present {
		t.Errorf("round trip %+v", back)
	}
	for _, bad := range []string{`"1"`, `"inf"`, `true`, `{}`} {
		var p PromValue
		if err := json.Unmarshal([]byte(bad), &p); err == nil {
			t.Errorf("%s accepted as %+v", bad, p)
		}
	}
	if got := []string{cells[0].String(), cells[1].String(), cells[2].String(), cells[3].String()}; strings.Join(got, ",") != "0.25,,NaN,+Inf" {
		t.Errorf("strings %v", got)
	}
}

func TestPromSectionInResult(t *testing.T) {
	r := New("prom")
	r.Prom = &Prom{URL: "http://prometheus:9090", Step: 15, Queries: []PromQuery{{Name: "up", Expr: "up", Series: 1}},
		Table: &PromTable{Columns: []PromColumn{{Name: "up", Query: "up"}}, Time: []float64{1714557600}, Rows: [][]PromValue{{PromSample(math.NaN())}}}}
	var buf bytes.Buffer
	if err := Encode(&buf, r); err != nil {
		t.Fatal(err)
	}
	back, err := Decode(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if back.Prom == nil || back.Prom.Table == nil || !math.IsNaN(back.Prom.Table.Rows[0][0].V) || back.Prom.Queries[0].Name != "up" {
		t.Errorf("prom section after a round trip: %+v", back.Prom)
	}
}

// A table whose rows do not match its times or columns (a Result from
// elsewhere) is refused when read, not indexed past by a view later.
func TestPromTableShape(t *testing.T) {
	head := `{"schema":"etcdperf/v1","kind":"prom","prom":{"url":"u","step":1,"table":`
	cases := map[string]string{
		`{"columns":[{"name":"a","query":"a"}],"time":[1,2],"rows":[[1],[null]]}`:    "",
		`{"columns":[{"name":"a","query":"a"}],"time":[1],"rows":[[1],[2]]}`:         "2 rows but 1 times",
		`{"columns":[{"name":"a","query":"a"}],"time":[1,2],"rows":[[1],[2,3]]}`:     "row 2 of the prom table has 2 cells for 1 columns",
		`{"columns":[{"name":"a","query":"a"},{"name":"b"}],"time":[1],"rows":[[]]}`: "row 1 of the prom table has 0 cells for 2 columns",
	}
	for table, want := range cases {
		_, err := Extract([]byte(head + table + "}}\n"))
		if want == "" {
			if err != nil {
				t.Errorf("%s: %v", table, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want %q", table, err, want)
		}
	}
}
