package result

import (
	"fmt"
	"strings"
	"testing"
)

// A Result read back holds its params in its kind's type, a doctor's
// targets their load's; params it cannot type stay as JSON decodes them.
func TestParamsReadBackInTheirKindsType(t *testing.T) {
	for _, c := range []struct{ doc, want string }{
		{`{"kind":"disk","params":{"jobs":2}}`, "*result.DiskParams"},
		{`{"kind":"bench","params":{"workload":"put"}}`, "*result.BenchParams"},
		{`{"kind":"check","params":{"load":"s"}}`, "*result.CheckParams"},
		{`{"kind":"datascale","params":{"load":"s"}}`, "*result.CheckParams"},
		{`{"kind":"doctor","params":{"load":"s"},"runs":[{"kind":"doctor","params":{"load":"s"}}]}`, "*result.DoctorParams *result.CheckParams"},
		{`{"kind":"doctor","params":{"load":"s"},"runs":[{"kind":"doctor","runs":[{"kind":"doctor","params":{}}]}]}`, "*result.DoctorParams <nil> *result.CheckParams"},
		{`{"kind":"compare","runs":[{"kind":"doctor","params":{"load":"s"}}]}`, "<nil> *result.DoctorParams"},
		{`{"kind":"scale","params":{"objects":"pods=1"}}`, "*result.ScaleParams"},
		{`{"kind":"scale","kube":{},"params":{"objects":"pods=1"}}`, "*result.KubeScaleParams"},
		{`{"kind":"metrics","params":{"interval":1}}`, "*result.MetricsParams"},
		{`{"kind":"logs","params":{"bucket":60}}`, "*result.LogsParams"},
		{`{"kind":"prom","params":{"step":5}}`, "*result.PromParams"},
		{`{"kind":"prom-check","params":{"step":5}}`, "*result.PromParams"},
		{`{"kind":"discover","params":{"root":"/"}}`, "*result.DiscoverParams"},
		{`{"kind":"future","params":{"x":1}}`, "result.RawParams"},
		{`{"kind":"bench","params":{"tls":{"cert":"c"}}}`, "result.RawParams"},
		{`{"kind":"bench"}`, "<nil>"},
	} {
		r, err := Decode(strings.NewReader(`{"schema":"etcdperf/v1",` + c.doc[1:]))
		if err != nil {
			t.Fatalf("%s: %v", c.doc, err)
		}
		if got := strings.Join(typesOf(r), " "); got != c.want {
			t.Errorf("%s: params %s, want %s", c.doc, got, c.want)
		}
	}
	r, err := Decode(strings.NewReader(`{"schema":"etcdperf/v1","kind":"disk","params":{"jobs":2,"bs":2300,"runtime":1.5}}`))
	if err != nil {
		t.Fatal(err)
	}
	if p := r.Params.(*DiskParams); p.Jobs != 2 || p.BS != 2300 || p.Runtime != 1.5 {
		t.Errorf("disk params %+v", p)
	}
}

func typesOf(r *Result) []string {
	out := []string{fmt.Sprintf("%T", r.Params)}
	for i := range r.Runs {
		out = append(out, typesOf(&r.Runs[i])...)
	}
	return out
}
