package result

import (
	"bytes"
	"strings"
	"testing"
)

func encoded(t *testing.T, r *Result) string {
	t.Helper()
	var b bytes.Buffer
	if err := Encode(&b, r); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestExtractAmongLogLines(t *testing.T) {
	a := New("bench")
	a.Name = "pod-0"
	a.Runs = []Result{*New("disk")} // nested objects must not count twice
	b := New("bench")
	b.Name = "pod-1"
	compact := strings.ReplaceAll(strings.ReplaceAll(encoded(t, b), "\n", ""), "  ", "")
	in := "I1122 08:00:00 starting shard 0 of 2 {rate: 100}\n" +
		`{"level":"info","msg":"a zap JSON log line"}` + "\n" +
		encoded(t, a) +
		"done.\n" +
		"2026-11-22T08:00:01Z stdout F " + compact + "\n" +
		"trailing line\n"
	got, err := Extract([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Name != "pod-0" || got[1].Name != "pod-1" || len(got[0].Runs) != 1 {
		t.Fatalf("got %d results: %+v", len(got), got)
	}
}

func TestExtractErrors(t *testing.T) {
	whole := encoded(t, New("disk"))
	cases := map[string]string{
		"nothing":      "just\nlog lines {not json\n",
		"cut short":    "log\n" + whole[:len(whole)/2],
		"other schema": `{"schema":"etcdperf/v9","kind":"disk"}`,
		"wrong types":  `{"schema":"etcdperf/v1","disk":"fast"}`,
		"empty":        "",
	}
	for name, in := range cases {
		if _, err := Extract([]byte(in)); err == nil {
			t.Errorf("%s: accepted %q", name, in)
		}
	}
	_, err := Extract([]byte("a\nb\n" + whole[:len(whole)-5]))
	if err == nil || !strings.Contains(err.Error(), "line 3") || !strings.Contains(err.Error(), "cut short") {
		t.Errorf("error does not say where: %v", err)
	}
}

func FuzzExtract(f *testing.F) {
	f.Add([]byte("log\n{\"schema\":\"etcdperf/v1\",\"kind\":\"disk\"}\nlog\n"))
	f.Add([]byte("{\"schema\":\"etcdperf/v1\",\"runs\":[\n{\"schema\":\"etcdperf/v1\"}]}"))
	f.Add([]byte("{{{\n{\"schema\":\n"))
	f.Add([]byte(`{"schema":["etcdperf/v1"]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		rs, err := Extract(b)
		if err == nil && len(rs) == 0 {
			t.Error("no error and no Result")
		}
		for _, r := range rs {
			if r.Schema != Schema {
				t.Errorf("accepted schema %q", r.Schema)
			}
		}
	})
}
