// Command capacity measures whether etcdperf doctor's capacity is what the
// storage holds: per storage, doctor at its defaults --runs times, then,
// after each run, 60 s soaks of the same writes (the sweep's key space and
// compactions) at 0.8x and 1.25x its answer (--soak). An answer is right
// when 0.8x holds and 1.25x breaks. The storages (root; --only picks one):
//
//   - ram: ext4 on a RAM disk of its own (zram), no latency of its own
//   - disk: a directory of the disk under --disk
//   - loop: ext4 on a direct-I/O loop device over a file on that disk
//     (--fault 1:volume-iops=1000000: a cap far above what the disk does)
//   - loop-1500, loop-600: the same, its writes capped at 1,500 and 600
//     IOPS below the loop device, where the member cannot see the cap
//
// It prints each run's time, answer, cause and steps, and the soaks'
// outcomes, then per storage the counts and doctor's median and slowest
// time:
//
//	go run ./bench/capacity --runs 5 --soak 60s --disk /var/tmp
//
// With --curve, it runs no doctor: per storage, --runs soaks at each of the
// rates given, and says how many held at each, with their last part's
// figures. That is how repeatable the soak itself is: an answer can hold
// at 0.8x and break at 1.25x in 4 of 5 runs only where the soaks go from
// holding 4 of 5 to breaking 4 of 5 within those 1.56x.
//
//	go run ./bench/capacity --runs 3 --curve 1600,2000,2500,3100 --only loop
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

type storage struct {
	name string
	// dir makes the storage's directory; done removes it.
	dir  func() (dir string, done func(), err error)
	args []string
}

// doctorRun is one doctor run's capacity.
type doctorRun struct {
	puts    float64
	cause   string
	seconds float64
	// steps is the sweep's steps in the order they ran, each its offered
	// rate and a mark: "x" broke a limit, "~" came near one (its warning
	// level), "/8s" held for a confirm of that long.
	steps string
}

// soakRun is one soak's outcome.
type soakRun struct {
	rate      float64
	broke     []string
	sustained float64
	// The last part's achieved rate and p99s (seconds).
	achieved, wal, commit, request float64
}

func (s soakRun) held() bool { return len(s.broke) == 0 }

func (s soakRun) String() string {
	if s.held() {
		return fmt.Sprintf("%.0f held", s.rate)
	}
	return fmt.Sprintf("%.0f broke %s (sustained ~%.0f)", s.rate, strings.Join(s.broke, "+"), s.sustained)
}

func main() {
	runs := flag.Int("runs", 5, "doctor runs at the defaults per storage")
	soak := flag.Duration("soak", time.Minute, "how long each soak at 0.8x and 1.25x of an answer holds (0: no soaks)")
	disk := flag.String("disk", "/var/tmp", "a directory on the machine's disk")
	only := flag.String("only", "", "run only the storages of these names, comma-separated (ram, disk, loop, loop-1500, loop-600)")
	keep := flag.String("keep", "", "write each doctor's Result to DIR/STORAGE-RUN.json, and each soak's to DIR/STORAGE-RUN-soak-0.8x.json (-1.25x)")
	curve := flag.String("curve", "", "no doctor: --runs soaks at each of these rates (puts/s, comma-separated) per storage")
	flag.Parse()
	var rates []float64
	for _, f := range strings.FieldsFunc(*curve, func(r rune) bool { return r == ',' }) {
		r, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil || r <= 0 {
			fmt.Fprintf(os.Stderr, "capacity: --curve: %q is not a rate in puts/s\n", f)
			os.Exit(2)
		}
		rates = append(rates, r)
	}
	if len(rates) > 0 && *soak <= 0 {
		fmt.Fprintln(os.Stderr, "capacity: --curve needs --soak above 0")
		os.Exit(2)
	}
	keepDir = *keep
	if keepDir != "" {
		// Made before any doctor runs: a run's Result is not lost to a
		// folder missing at its end.
		if err := os.MkdirAll(keepDir, 0o755); err != nil {
			fmt.Fprintln(os.Stderr, "capacity: --keep:", err)
			os.Exit(2)
		}
	}
	if err := run(*runs, *soak, *disk, *only, rates); err != nil {
		fmt.Fprintln(os.Stderr, "capacity:", err)
		os.Exit(2)
	}
}

func run(runs int, soak time.Duration, disk, only string, curve []float64) error {
	tmp, err := os.MkdirTemp("", "capacity-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	bin := filepath.Join(tmp, "etcdperf")
	if out, err := exec.Command("go", "build", "-o", bin, "./cmd/etcdperf").CombinedOutput(); err != nil {
		return fmt.Errorf("build etcdperf (run from the repository root): %v\n%s", err, out)
	}
	onDisk := func() (string, func(), error) {
		d, err := os.MkdirTemp(disk, "capacity-")
		return d, func() { os.RemoveAll(d) }, err
	}
	volume := func(iops int) []string { return []string{"--fault", "1:volume-iops=" + strconv.Itoa(iops)} }
	all := []storage{
		{"ram", ramDisk, nil},
		{"disk", onDisk, nil},
		{"loop", onDisk, volume(1000000)},
		{"loop-1500", onDisk, volume(1500)},
		{"loop-600", onDisk, volume(600)},
	}
	for _, s := range all {
		if only != "" && !contains(strings.Split(only, ","), s.name) {
			continue
		}
		dir, done, err := s.dir()
		if err != nil {
			return fmt.Errorf("%s: %w", s.name, err)
		}
		if len(curve) > 0 {
			err = soakCurve(bin, s, dir, runs, soak, curve)
		} else {
			err = measure(bin, s, dir, runs, soak)
		}
		done()
		if err != nil {
			return fmt.Errorf("%s: %w", s.name, err)
		}
	}
	return nil
}

// measure runs doctor runs times on a storage, each followed by its soaks,
// and prints them and their counts.
func measure(bin string, s storage, dir string, runs int, soak time.Duration) error {
	args := append([]string{"--data-dir", dir}, s.args...)
	var secs []float64
	holds, breaks, soaked := 0, 0, 0
	for r := 1; r <= runs; r++ {
		d, err := doctor(bin, args, fmt.Sprintf("%s-%d", s.name, r))
		if err != nil {
			return err
		}
		secs = append(secs, d.seconds)
		line := fmt.Sprintf("%-10s %d  %5.1fs  %5.0f puts/s  %-16s steps: %s", s.name, r, d.seconds, d.puts, d.cause, d.steps)
		if soak > 0 && d.puts > 0 {
			name := fmt.Sprintf("%s-%d", s.name, r)
			lo, err := soakAt(bin, args, math.Round(0.8*d.puts), soak, name+"-soak-0.8x")
			if err != nil {
				return err
			}
			hi, err := soakAt(bin, args, math.Round(1.25*d.puts), soak, name+"-soak-1.25x")
			if err != nil {
				return err
			}
			soaked++
			if lo.held() {
				holds++
			}
			if !hi.held() {
				breaks++
			}
			line += fmt.Sprintf("\n%-10s    soaks of %s: 0.8x %s; 1.25x %s", "", soak, lo, hi)
		}
		fmt.Println(line)
	}
	sort.Float64s(secs)
	fmt.Printf("=> %s: 0.8x held in %d of %d, 1.25x broke in %d of %d; doctor median %.1fs, slowest %.1fs\n\n",
		s.name, holds, soaked, breaks, soaked, secs[len(secs)/2], secs[len(secs)-1])
	return nil
}

// soakCurve runs runs soaks at each rate of curve on a storage, and
// prints each with its last part's figures, and per rate how many held.
func soakCurve(bin string, s storage, dir string, runs int, soak time.Duration, curve []float64) error {
	args := append([]string{"--data-dir", dir}, s.args...)
	var summary []string
	for _, rate := range curve {
		held := 0
		for r := 1; r <= runs; r++ {
			sr, err := soakAt(bin, args, rate, soak, fmt.Sprintf("%s-curve-%.0f-%d", s.name, rate, r))
			if err != nil {
				return err
			}
			if sr.held() {
				held++
			}
			fmt.Printf("%-10s %6.0f puts/s  %d  %-60s last part: %.0f puts/s, WAL fsync p99 %.1fms, commit p99 %.1fms, request p99 %.1fms\n",
				s.name, rate, r, sr, sr.achieved, sr.wal*1000, sr.commit*1000, sr.request*1000)
		}
		summary = append(summary, fmt.Sprintf("%.0f held %d of %d", rate, held, runs))
	}
	fmt.Printf("=> %s, soaks of %s: %s\n\n", s.name, soak, strings.Join(summary, "; "))
	return nil
}

// keepDir, when set (--keep), receives each doctor's Result.
var keepDir string

// doctor runs doctor at its defaults with args and returns the storage's
// capacity, its cause, its steps and the wall time; with keepDir, its
// Result goes to keepDir/name.json.
func doctor(bin string, args []string, name string) (doctorRun, error) {
	start := time.Now()
	out, err := etcdperf(bin, append([]string{"doctor", "--no-report"}, args...))
	secs := time.Since(start).Seconds()
	if err != nil {
		return doctorRun{}, err
	}
	if keepDir != "" {
		if err := os.WriteFile(filepath.Join(keepDir, name+".json"), out, 0o644); err != nil {
			return doctorRun{}, err
		}
	}
	var res struct {
		Runs []struct {
			Capacity *struct {
				PutsPerS float64 `json:"puts_per_s"`
				Cause    string  `json:"cause"`
				Steps    []struct {
					Offered float64  `json:"offered"`
					Seconds float64  `json:"seconds"`
					Confirm bool     `json:"confirm"`
					Broke   []string `json:"broke"`
					Tight   []string `json:"tight"`
				} `json:"steps"`
			} `json:"capacity"`
		} `json:"runs"`
	}
	if err := json.Unmarshal(out, &res); err != nil {
		return doctorRun{}, fmt.Errorf("doctor %v: %v", args, err)
	}
	if len(res.Runs) != 1 || res.Runs[0].Capacity == nil {
		return doctorRun{}, fmt.Errorf("doctor %v: no capacity sweep in the Result", args)
	}
	c := res.Runs[0].Capacity
	var steps []string
	for _, st := range c.Steps {
		w := fmt.Sprintf("%.0f", st.Offered)
		if st.Confirm {
			w += fmt.Sprintf("/%.0fs", st.Seconds)
		}
		switch {
		case len(st.Broke) > 0:
			w += "x"
		case len(st.Tight) > 0:
			w += "~"
		}
		steps = append(steps, w)
	}
	return doctorRun{puts: c.PutsPerS, cause: c.Cause, seconds: secs, steps: strings.Join(steps, " ")}, nil
}

// soakAt holds rate for d as the sweep writes (check --soak, after a
// second of check perf's load) and says whether its last part held; with
// keepDir, its Result goes to keepDir/name.json.
func soakAt(bin string, args []string, rate float64, d time.Duration, name string) (soakRun, error) {
	out, err := etcdperf(bin, append([]string{"check", "--duration", "1s", "--soak", d.String(), "--soak-rate", strconv.FormatFloat(rate, 'f', 0, 64)}, args...))
	if err != nil {
		return soakRun{}, err
	}
	if keepDir != "" {
		if err := os.WriteFile(filepath.Join(keepDir, name+".json"), out, 0o644); err != nil {
			return soakRun{}, err
		}
	}
	var res struct {
		Soak *struct {
			Broke     []string `json:"broke"`
			Sustained float64  `json:"sustained_puts_per_s"`
			Achieved  float64  `json:"last_achieved"`
			WAL       float64  `json:"last_wal_fsync_p99"`
			Commit    float64  `json:"last_backend_commit_p99"`
			Request   float64  `json:"last_request_p99"`
		} `json:"soak"`
	}
	if err := json.Unmarshal(out, &res); err != nil || res.Soak == nil {
		return soakRun{}, fmt.Errorf("check --soak-rate %.0f %v: no soak in the Result (%v)", rate, args, err)
	}
	k := res.Soak
	return soakRun{rate: rate, broke: k.Broke, sustained: k.Sustained, achieved: k.Achieved, wal: k.WAL, commit: k.Commit, request: k.Request}, nil
}

// etcdperf runs the binary with args, -q -o json, and returns its
// stdout; exit 1 (a verdict that failed) is not an error.
func etcdperf(bin string, args []string) ([]byte, error) {
	cmd := exec.Command(bin, append(args, "-q", "-o", "json")...)
	cmd.Dir = os.TempDir()
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var ee *exec.ExitError
	if err != nil && !(errors.As(err, &ee) && ee.ExitCode() == 1) {
		return nil, fmt.Errorf("etcdperf %v: %v: %s", args, err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}

// ramDisk makes ext4 on a zram device of its own, mounted on a new
// directory; done unmounts and removes it.
func ramDisk() (string, func(), error) {
	b, err := os.ReadFile("/sys/class/zram-control/hot_add")
	if err != nil {
		return "", nil, fmt.Errorf("a RAM disk needs zram (root): %w", err)
	}
	n := strings.TrimSpace(string(b))
	dev := "/dev/zram" + n
	remove := func() {
		os.WriteFile("/sys/block/zram"+n+"/reset", []byte("1"), 0)
		os.WriteFile("/sys/class/zram-control/hot_remove", []byte(n), 0)
	}
	if err := os.WriteFile("/sys/block/zram"+n+"/disksize", []byte("4G"), 0); err != nil {
		remove()
		return "", nil, err
	}
	if out, err := exec.Command("mkfs.ext4", "-q", dev).CombinedOutput(); err != nil {
		remove()
		return "", nil, fmt.Errorf("mkfs.ext4 %s: %v: %s", dev, err, out)
	}
	dir, err := os.MkdirTemp("", "capacity-ram-")
	if err != nil {
		remove()
		return "", nil, err
	}
	if out, err := exec.Command("mount", dev, dir).CombinedOutput(); err != nil {
		os.Remove(dir)
		remove()
		return "", nil, fmt.Errorf("mount %s: %v: %s", dev, err, out)
	}
	return dir, func() {
		exec.Command("umount", dir).Run()
		os.Remove(dir)
		remove()
	}, nil
}

func contains(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}
