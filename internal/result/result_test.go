package result

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestWorse(t *testing.T) {
	cases := [][3]Verdict{{Pass, Warn, Warn}, {Warn, Pass, Warn}, {Fail, Warn, Fail}, {"", Pass, Pass}, {"", Fail, Fail}, {Warn, Fail, Fail}}
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
