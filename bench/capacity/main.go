// Command capacity measures how often etcdperf doctor's capacity sweep
// agrees with itself and with a slow reference sweep, and how long doctor
// takes with it, on three locations: a directory of the disk, a tmpfs,
// and the disk with the member's writes capped at --iops-limit IOPS
// (cgroup blkio or io.max; root):
//
//	go run ./bench/capacity --runs 5 --ref-step 60s --disk /var/tmp --tmpfs /dev/shm
//
// It prints each run's wall time, capacity and cause, then per location
// how many runs agree with the most frequent capacity and cause, the
// median time, and the reference run's capacity and cause (one run per
// location with --capacity-step --ref-step; --ref-step 0 skips it).
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
	"strconv"
	"strings"
	"time"
)

type location struct {
	name string
	args []string
}

// outcome is one doctor run's capacity.
type outcome struct {
	puts    float64
	cause   string
	seconds float64
	// steps is the sweep's steps in the order they ran, each its offered
	// rate and a mark: "x" broke a limit, "~" came near one (its warning
	// level), "/10s" held for a confirm of that long.
	steps string
}

func (o outcome) String() string { return fmt.Sprintf("%.0f puts/s, %s", o.puts, o.cause) }

func main() {
	runs := flag.Int("runs", 5, "doctor runs at the defaults per location")
	refStep := flag.Duration("ref-step", time.Minute, "the reference run's --capacity-step (0: no reference run)")
	disk := flag.String("disk", "/var/tmp", "a directory on a disk")
	tmpfs := flag.String("tmpfs", "/dev/shm", "a directory on tmpfs")
	iops := flag.Int("iops-limit", 1500, "the capped location's write IOPS cap (0: no capped location)")
	only := flag.String("only", "", "run only the location of this name (disk, tmpfs, or the capped one's)")
	flag.Parse()
	if err := run(*runs, *refStep, *disk, *tmpfs, *iops, *only); err != nil {
		fmt.Fprintln(os.Stderr, "capacity:", err)
		os.Exit(2)
	}
}

func run(runs int, refStep time.Duration, disk, tmpfs string, iops int, only string) error {
	tmp, err := os.MkdirTemp("", "capacity-")
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
		d, err := os.MkdirTemp(parent, "capacity-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(d)
		dirs = append(dirs, d)
	}
	locs := []location{{"disk", []string{"--data-dir", dirs[0]}}, {"tmpfs", []string{"--data-dir", dirs[1]}}}
	if iops > 0 {
		locs = append(locs, location{fmt.Sprintf("disk, %d IOPS cap", iops), []string{"--data-dir", dirs[0], "--fault", "1:iops-limit=" + strconv.Itoa(iops)}})
	}
	fmt.Printf("%-22s %4s %8s  %s\n", "location", "run", "seconds", "capacity, cause")
	for _, l := range locs {
		if only != "" && l.name != only {
			continue
		}
		var got []outcome
		text := filepath.Join(tmp, fmt.Sprintf("%d.txt", len(l.name)))
		for r := 1; r <= runs; r++ {
			args := l.args
			if r == 1 {
				// The first run's text, to show.
				args = append(append([]string{}, l.args...), "-o", text)
			}
			o, err := doctor(bin, args)
			if err != nil {
				return fmt.Errorf("%s: %w", l.name, err)
			}
			fmt.Printf("%-22s %4d %8.1f  %s  (steps: %s)\n", l.name, r, o.seconds, o, o.steps)
			got = append(got, o)
		}
		ref := "-"
		if refStep > 0 {
			// The reference's steps are long: it holds no confirm step.
			o, err := doctor(bin, append(l.args, "--capacity-step", refStep.String(), "--capacity-confirm", "0"))
			if err != nil {
				return fmt.Errorf("%s, reference: %w", l.name, err)
			}
			within := 0
			for _, g := range got {
				if g.puts >= 0.75*o.puts && g.puts <= 1.25*o.puts {
					within++
				}
			}
			ref = fmt.Sprintf("%s (%s per step, %.0fs; steps: %s); %d of %d runs within ±25%% of it", o, refStep, o.seconds, o.steps, within, len(got))
		}
		mode, n := mostFrequent(got)
		secs := make([]float64, len(got))
		for i, o := range got {
			secs[i] = o.seconds
		}
		sort.Float64s(secs)
		fmt.Printf("=> %s: %d of %d runs at %s; median %.1fs, slowest %.1fs; reference: %s\n\n", l.name, n, len(got), mode, secs[len(secs)/2], secs[len(secs)-1], ref)
		if b, err := os.ReadFile(text); err == nil {
			fmt.Printf("the first run's text:\n%s\n", b)
		}
	}
	return nil
}

// mostFrequent is the most frequent capacity and cause, and how many runs
// gave it.
func mostFrequent(os []outcome) (string, int) {
	count := map[string]int{}
	best, n := "", 0
	for _, o := range os {
		k := o.String()
		count[k]++
		if count[k] > n {
			best, n = k, count[k]
		}
	}
	return best, n
}

// doctor runs doctor at its defaults with args and returns the location's
// capacity, its cause and the wall time.
func doctor(bin string, args []string) (outcome, error) {
	start := time.Now()
	cmd := exec.Command(bin, append([]string{"doctor", "--no-report", "-q", "-o", "json"}, args...)...)
	cmd.Dir = os.TempDir()
	out, err := cmd.Output()
	secs := time.Since(start).Seconds()
	var ee *exec.ExitError
	if err != nil && !(errors.As(err, &ee) && ee.ExitCode() == 1) {
		return outcome{}, fmt.Errorf("doctor %v: %v", args, err)
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
		return outcome{}, fmt.Errorf("doctor %v: %v", args, err)
	}
	if len(res.Runs) != 1 || res.Runs[0].Capacity == nil {
		return outcome{}, fmt.Errorf("doctor %v: no capacity sweep in the Result", args)
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
	return outcome{puts: c.PutsPerS, cause: c.Cause, seconds: secs, steps: strings.Join(steps, " ")}, nil
}
