package result

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestWorse(t *testing.T) {
	cases := [][3]Verdict{{Pass, Warn, Warn}, {Warn, Pass, Warn}, {Fail, Warn, Fail}, {"", Pass, Pass}, {"", Fail, Fail}, {Warn, Fail, Fail},
		{Fail, Incomplete, Incomplete}, {Incomplete, Pass, Incomplete}, {"", Incomplete, Incomplete}}
	for _, c := range cases {
		if got := Worse(c[0], c[1]); got != c[2] {
			t.Errorf("Worse(%q, %q) = %q, want %q", c[0], c[1], got, c[2])
		}
	}
}

func TestEncodeDecode(t *testing.T) {
	r := New("disk")
	r.Disk = &Disk{Ops: 3, SyncLatency: &Latency{Count: 3, P99: 0.004}}
	r.Verdict = Pass
	r.Finish()
	var buf bytes.Buffer
	if err := Encode(&buf, r); err != nil {
		t.Fatal(err)
	}
	for _, field := range []string{`"schema": "etcdperf/v1"`, `"kind": "disk"`, `"sync_latency"`, `"p99": 0.004`, `"verdict": "pass"`} {
		if !strings.Contains(buf.String(), field) {
			t.Errorf("JSON lacks %s:\n%s", field, buf.String())
		}
	}
	if strings.Contains(buf.String(), `"bench"`) {
		t.Error("an absent section was written")
	}
	back, err := Decode(&buf)
	if err != nil || back.Disk.SyncLatency.P99 != 0.004 {
		t.Fatalf("decode: %v %+v", err, back)
	}
}

func TestDecodeRejects(t *testing.T) {
	for _, in := range []string{``, `{}`, `{"schema":"etcdperf/v9"}`, `[1,2]`, `{"schema":`} {
		if _, err := Decode(strings.NewReader(in)); err == nil {
			t.Errorf("Decode(%q) accepted", in)
		}
	}
}

func TestWriteFileAtomic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "r.json")
	if err := WriteFile(path, New("disk")); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadFile(path); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("temporary files left: %v", entries)
	}
	if err := WriteFile(filepath.Join(dir, "missing", "r.json"), New("disk")); err == nil {
		t.Error("writing into a missing directory succeeded")
	}
}

func FuzzDecode(f *testing.F) {
	f.Add([]byte(`{"schema":"etcdperf/v1","kind":"disk","disk":{"ops":1}}`))
	f.Add([]byte(`{"schema":"etcdperf/v1","runs":[{"schema":"etcdperf/v1"}]}`))
	f.Add([]byte(`not json`))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := Decode(bytes.NewReader(b))
		if err == nil && r.Schema != Schema {
			t.Errorf("accepted schema %q", r.Schema)
		}
	})
}

// A run that ended early reads as incomplete, whatever its checks said of
// the part it measured; a complete one keeps its verdict.
func TestFinishMarksIncomplete(t *testing.T) {
	for _, v := range []Verdict{Pass, Warn, Fail} {
		r := New("disk")
		r.Verdict, r.Summary = v, "fast enough for etcd"
		r.Finish()
		if r.Verdict != v || r.Summary != "fast enough for etcd" {
			t.Errorf("complete %s run: verdict %q, summary %q", v, r.Verdict, r.Summary)
		}
		r.Error = "interrupted"
		r.Finish()
		if r.Verdict != Incomplete || r.Summary != IncompleteSummary {
			t.Errorf("interrupted %s run: verdict %q, summary %q", v, r.Verdict, r.Summary)
		}
	}
	// A cleanup that fails after the judgement also makes it incomplete.
	r := New("bench")
	r.Verdict = Pass
	r.Finish()
	r.AddError("close etcd: timeout")
	if r.Verdict != Incomplete || r.Error != "close etcd: timeout" {
		t.Errorf("verdict %q, error %q", r.Verdict, r.Error)
	}
}

// The same error seen by two stages (the probe, then the doctor) is said
// once.
func TestJoinError(t *testing.T) {
	for _, c := range [][3]string{
		{"", "", ""},
		{"", "interrupted", "interrupted"},
		{"interrupted", "", "interrupted"},
		{"interrupted", "interrupted", "interrupted"},
		{"interrupted; interrupted", "interrupted", "interrupted"},
		{"read a: EOF", "interrupted", "read a: EOF; interrupted"},
		{"read a: EOF; interrupted", "interrupted; close: x", "read a: EOF; interrupted; close: x"},
	} {
		if got := JoinError(c[0], c[1]); got != c[2] {
			t.Errorf("JoinError(%q, %q) = %q, want %q", c[0], c[1], got, c[2])
		}
	}
}
