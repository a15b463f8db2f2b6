package render

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/etcdperf/etcdperf/internal/result"
	"github.com/etcdperf/etcdperf/internal/testutil"
)

// The inputs are Results of real runs on a 2-CPU machine: check --load s
// for 5s; check datascale with 5000 keys; doctor on an ext4 directory and
// a tmpfs one, on a 15ms slow view of the disk, and with --noise (each for
// 5s, the probe for 2s).
func TestCheckAndDoctorTextGolden(t *testing.T) {
	cases := []struct {
		name string
		want []string
	}{
		{"check-s", []string{"etcdperf check: profile s (etcdctl check perf --load=s): 50 clients at 150 puts/s for 5s",
			"Load: ", "CPU used: etcd ", "PASS throughput: ", "wal_fsync_p99: ", "Verdict: "}},
		{"datascale-s", []string{"5000 key-value pairs of 1024 bytes", "Approximate system memory used: ", "PASS request_errors: 0"}},
		{"doctor-disk-tmpfs", []string{"== /var/tmp/etcd-disk (ext4", "== /dev/shm/etcd-ram (tmpfs", "disk probe: fdatasync p50 ",
			"Side by side (x: the ratio to /var/tmp/etcd-disk):", "tmpfs (memory, not durable)", "etcd WAL fsync p99", "<= 1ms", "fast but not durable"}},
		{"doctor-slowdisk", []string{"on a slow view of the disk (fsync +15ms)", "[critical] The disk of etcdperf-1 is too slow for etcd",
			"[info] This was a simulated slow disk", "the disk limits it"}},
		{"doctor-noise", []string{"then again with a neighbour writing bulk data", "With a neighbour writing bulk data on the device (",
			"etcd's WAL fsync p99 ", "A neighbour's bulk writes on the same device"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res, err := result.ReadFile(filepath.Join("testdata", c.name+".json"))
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			if err := Text(&buf, res); err != nil {
				t.Fatal(err)
			}
			for _, w := range c.want {
				if !strings.Contains(buf.String(), w) {
					t.Errorf("no %q in:\n%s", w, buf.String())
				}
			}
			// One verdict line at the top level; per location only when
			// there are several.
			if n := strings.Count(buf.String(), "\nVerdict: "); n != 1 {
				t.Errorf("%d top-level verdict lines", n)
			}
			if res.Kind == "doctor" {
				per := strings.Count(buf.String(), "  Verdict: ")
				if want := len(res.Runs); (want > 1 && per != want) || (want == 1 && per != 0) {
					t.Errorf("%d verdict lines for %d locations", per, want)
				}
			}
			testutil.Golden(t, c.name+".txt", buf.Bytes())
		})
	}
}

func TestRatio(t *testing.T) {
	for v, want := range map[float64]string{7616.4: "7616x", 45.93: "45.9x", 1: "1.00x", 0.6371: "0.64x", 0.00268: "0.0027x", 0.0000712: "0.000071x"} {
		if got := Ratio(v); got != want {
			t.Errorf("Ratio(%v) = %q, want %q", v, got, want)
		}
	}
}

func TestIndent(t *testing.T) {
	if got := indent("a\n\n b\n", "  "); got != "  a\n\n   b\n" {
		t.Errorf("indent: %q", got)
	}
}

// doctor stopped in its second location: the first keeps its verdict, the
// second shows what it measured, and the run says "Incomplete" once, with
// no verdict of its own.
func TestDoctorIncompleteText(t *testing.T) {
	res, err := result.ReadFile(filepath.Join("testdata", "doctor-disk-tmpfs.json"))
	if err != nil {
		t.Fatal(err)
	}
	res.Runs[1].Error = "interrupted"
	res.Runs[1].MarkIncomplete()
	res.Doctor.Targets[1].Verdict = res.Runs[1].Verdict
	res.Error = "interrupted"
	res.MarkIncomplete()
	var buf bytes.Buffer
	if err := Text(&buf, res); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	first := strings.Index(out, "== /dev/shm/etcd-ram")
	if first < 0 {
		t.Fatalf("no second location:\n%s", out)
	}
	if strings.Count(out, "Verdict:") != 1 || !strings.Contains(out[:first], "  Verdict: "+strings.ToUpper(string(res.Runs[0].Verdict))) {
		t.Errorf("want the first location's verdict and no other:\n%s", out)
	}
	if strings.Count(out, "interrupted") != 1 || !strings.Contains(out, "\nIncomplete: interrupted.") || !strings.Contains(out[first:], "disk probe: fdatasync") {
		t.Errorf("want the second location's figures and one Incomplete line:\n%s", out)
	}
}

// doctor --node's log line counts in words that agree with the numbers.
func TestDoctorNodeLogLine(t *testing.T) {
	top := nodeLogDoctor()
	var buf bytes.Buffer
	if err := Text(&buf, top); err != nil {
		t.Fatal(err)
	}
	if want := "log (/var/log/pods/etcd/0.log): 1 line during the run, 1 warning etcd counts against its limits (2 earlier lines not read)"; !strings.Contains(buf.String(), want) {
		t.Errorf("no %q in:\n%s", want, buf.String())
	}
}

// nodeLogDoctor is doctor --node's Result with a member's log read.
func nodeLogDoctor() *result.Result {
	run := result.Result{Schema: result.Schema, Kind: result.KindDoctor, Name: "member cp-1", Params: &result.CheckParams{NodeLogParams: result.NodeLogParams{LogFile: "/var/log/pods/etcd/0.log"}},
		Logs:   &result.Logs{Lines: 3, OutsideWindow: 2, Classes: map[string]int64{"slow_apply": 1}},
		Doctor: &result.Doctor{Targets: []result.DoctorTarget{{Name: "member cp-1"}}}}
	return &result.Result{Schema: result.Schema, Kind: result.KindDoctor, Runs: []result.Result{run}, Doctor: &result.Doctor{Targets: run.Doctor.Targets},
		Params: &result.DoctorParams{Duration: 60, Node: "kubeadm /etc/kubernetes/manifests/etcd.yaml", DataDir: "/var/lib/etcd", ObserveOnly: new(true)}}
}
