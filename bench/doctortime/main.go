// Command doctortime measures etcdperf doctor's time to verdict at its
// defaults, and whether its verdicts agree with a load as long as etcdctl
// check perf's (60s, and the probe's former 15s), on three locations: a
// directory of the disk, a tmpfs, and a view of the disk that adds 15ms to
// every fsync (--simulate-fsync-delay; root and /dev/fuse needed):
//
//	go run ./bench/doctortime --runs 10 --long-runs 3 --disk /var/tmp --tmpfs /dev/shm
//
// --with adds flags to the runs at the defaults, to try a candidate
// default against the long runs; --all adds flags to every run (e.g.
// --capacity=false, the verdict's load alone). It prints each run's wall time and
// verdict (with the checks that failed), then per location the
// verdicts at the defaults, how many agree with the long runs' verdict,
// and the median and slowest time; then one run on two locations (the
// disk and the tmpfs) for the time of a pair.
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// location is one place doctor judges.
type location struct {
	name string
	args []string
}

func main() {
	runs := flag.Int("runs", 10, "doctor runs at the defaults per location")
	longRuns := flag.Int("long-runs", 3, "runs per location with --duration 60s --disk-runtime 15s, for the reference verdict")
	disk := flag.String("disk", "/var/tmp", "a directory on a disk")
	tmpfs := flag.String("tmpfs", "/dev/shm", "a directory on tmpfs")
	with := flag.String("with", "", "flags added to the runs at the defaults, e.g. \"--duration 20s\": a candidate default against the long runs")
	all := flag.String("all", "", "flags added to every run, e.g. \"--capacity=false\": the verdict's load alone")
	flag.Parse()
	if err := run(*runs, *longRuns, *disk, *tmpfs, strings.Fields(*with), strings.Fields(*all)); err != nil {
		fmt.Fprintln(os.Stderr, "doctortime:", err)
		os.Exit(2)
	}
}

func run(runs, longRuns int, disk, tmpfs string, with, all []string) error {
	tmp, err := os.MkdirTemp("", "doctortime-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	bin := filepath.Join(tmp, "etcdperf")
	if out, err := exec.Command("go", "build", "-o", bin, "./cmd/etcdperf").CombinedOutput(); err != nil {
		return fmt.Errorf("build etcdperf (run from the repository root): %v\n%s", err, out)
	}
	var dirs []string
	for _, parent := range []string{disk, tmpfs} {
		d, err := os.MkdirTemp(parent, "doctortime-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(d)
		dirs = append(dirs, d)
	}
	locs := []location{
		{"disk", []string{"--data-dir", dirs[0]}},
		{"tmpfs", []string{"--data-dir", dirs[1]}},
		{"slow disk (+15ms)", []string{"--data-dir", dirs[0], "--simulate-fsync-delay", "15ms"}},
	}
	fmt.Printf("%-18s %-9s %4s %9s  %s\n", "location", "defaults", "run", "seconds", "verdict (limited by)")
	type summary struct {
		ref     map[string]int
		got     []string
		seconds []float64
	}
	sums := make([]summary, len(locs))
	for i, l := range locs {
		sums[i].ref = map[string]int{}
		for r := 1; r <= longRuns; r++ {
			v, why, secs, err := doctor(bin, append(append([]string{"--duration", "60s", "--disk-runtime", "15s"}, all...), l.args...))
			if err != nil {
				return err
			}
			sums[i].ref[v]++
			fmt.Printf("%-18s %-9s %4d %9.1f  %s%s\n", l.name, "60s/15s", r, secs, v, why)
		}
		for r := 1; r <= runs; r++ {
			v, why, secs, err := doctor(bin, append(append(append([]string(nil), l.args...), all...), with...))
			if err != nil {
				return err
			}
			sums[i].got = append(sums[i].got, v)
			sums[i].seconds = append(sums[i].seconds, secs)
			fmt.Printf("%-18s %-9s %4d %9.1f  %s%s\n", l.name, "default", r, secs, v, why)
		}
	}
	fmt.Printf("\n%-18s %-26s %-22s %9s %9s\n", "location", "reference (60s/15s)", "agreeing at defaults", "median s", "slowest s")
	for i, l := range locs {
		ref, n := "", 0
		for v, c := range sums[i].ref {
			if c > n {
				ref, n = v, c
			}
		}
		agree := 0
		for _, v := range sums[i].got {
			if v == ref {
				agree++
			}
		}
		s := append([]float64(nil), sums[i].seconds...)
		sort.Float64s(s)
		fmt.Printf("%-18s %-26s %2d of %-16d %9.1f %9.1f\n", l.name, fmt.Sprintf("%s (%d of %d)", ref, n, longRuns), agree, len(sums[i].got), s[len(s)/2], s[len(s)-1])
	}
	v, why, secs, err := doctor(bin, append(append([]string{"--data-dir", dirs[0], "--data-dir", dirs[1]}, all...), with...))
	if err != nil {
		return err
	}
	fmt.Printf("\na pair (disk and tmpfs) at the defaults: %.1f s, %s%s\n", secs, v, why)
	return nil
}

// doctor runs etcdperf doctor with args and returns its verdict (with
// what limited each location), the checks that failed (its printed
// verdict's reason, not compared), and its wall time.
func doctor(bin string, args []string) (string, string, float64, error) {
	cmd := exec.Command(bin, append([]string{"doctor", "--no-report", "-q", "-o", "json"}, args...)...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	start := time.Now()
	out, err := cmd.Output()
	secs := time.Since(start).Seconds()
	var ee *exec.ExitError
	if err != nil && (!errors.As(err, &ee) || ee.ExitCode() != 1) {
		return "", "", secs, fmt.Errorf("%v: %v\n%s", cmd.Args, err, stderr.String())
	}
	var res struct {
		Verdict string `json:"verdict"`
		Runs    []struct {
			Checks []struct {
				Name     string  `json:"name"`
				Status   string  `json:"status"`
				Observed float64 `json:"observed"`
			} `json:"checks"`
		} `json:"runs"`
		Doctor struct {
			Targets []struct {
				LimitedBy string `json:"limited_by"`
			} `json:"targets"`
		} `json:"doctor"`
	}
	if err := json.Unmarshal(out, &res); err != nil {
		return "", "", secs, fmt.Errorf("doctor's output is not a Result: %v", err)
	}
	var by, failed []string
	for _, t := range res.Doctor.Targets {
		by = append(by, t.LimitedBy)
	}
	for _, r := range res.Runs {
		for _, c := range r.Checks {
			if c.Status == "fail" {
				failed = append(failed, fmt.Sprintf("%s %g", c.Name, c.Observed))
			}
		}
	}
	detail := ""
	if len(failed) > 0 {
		detail = "; failed: " + strings.Join(failed, ", ")
	}
	return fmt.Sprintf("%s (%s)", res.Verdict, strings.Join(by, ", ")), detail, secs, nil
}
