package cli

import (
	"time"

	"github.com/spf13/pflag"

	"github.com/etcdperf/etcdperf/internal/capacity"
	"github.com/etcdperf/etcdperf/internal/pipeline"
)

// capacityFlags are the capacity sweep's flags and the soak's (doctor,
// check): --capacity, --capacity-step, --capacity-confirm, the puts'
// and the database's sizes, and --soak*.
type capacityFlags struct {
	on            bool
	step, confirm time.Duration
	sizes         sweepFlags
	soak          soakFlags
}

// newCapacityFlags are the flags as none is given; on: the sweep runs
// by default (doctor).
func newCapacityFlags(on bool) capacityFlags {
	return capacityFlags{on: on, step: capacity.DefaultStep, confirm: capacity.DefaultConfirm,
		soak: soakFlags{interval: capacity.DefaultSoakInterval}}
}

// add registers the flags, their defaults the values c holds
// (newCapacityFlags); doctor reads a Prometheus (--demand-from) that the
// sizes may come from.
func (c *capacityFlags) add(fl *pflag.FlagSet, doctor bool) {
	with := "with --capacity, "
	if doctor {
		with = ""
		fl.BoolVar(&c.on, "capacity", c.on, "after the verdict, raise the offered write rate step by step until a limit breaks: how much this storage carries (on by default for a directory; with --endpoints or --node only when given, since it loads that cluster)")
	} else {
		fl.BoolVar(&c.on, "capacity", c.on, "after the profile's load, raise the offered write rate step by step until a limit breaks: how many puts/s the cluster carries, and what breaks first (it loads the cluster up to 15,000 puts/s)")
	}
	fl.DurationVar(&c.step, "capacity-step", c.step, with+"how long each step of the capacity sweep loads etcd")
	fl.DurationVar(&c.confirm, "capacity-confirm", c.confirm, with+"after the knee, hold the answer at most this long, then rates above it while the holds hold and under it once one breaks, each judged as a soak is (the median of its intervals' p99s) and ended once its intervals decide it, so that the capacity is one that held (0: no confirm step)")
	c.sizes.add(fl, doctor)
	c.soak.add(fl)
}

// validate checks the sweep's own flags by their values.
func (c *capacityFlags) validate() error {
	switch {
	case c.confirm < 0:
		return usageError("--capacity-confirm cannot be negative, got %s", c.confirm)
	case c.step <= 0:
		return usageError("--capacity-step must be positive, got %s", c.step)
	}
	return nil
}

// soakFlags are --soak, --soak-rate and --soak-interval (doctor, check).
type soakFlags struct {
	duration, interval time.Duration
	rate               float64
}

func (s *soakFlags) add(fl *pflag.FlagSet) {
	fl.DurationVar(&s.duration, "soak", 0, "after the capacity sweep, hold its answer (or --soak-rate) this long, e.g. 10m, recording a sample every --soak-interval: the figure that held over the last third, and a drop when the storage gives less after a while (burst credits or a write cache that ran out) (0: no soak)")
	fl.Float64Var(&s.rate, "soak-rate", 0, "with --soak, the puts/s to hold instead of the sweep's answer (also with --capacity=false: hold a rate without a sweep)")
	fl.DurationVar(&s.interval, "soak-interval", s.interval, "with --soak, the span of each sample of its series")
}

// settings checks the flags (before anything is measured; given says
// which were given by name) and returns them; sweeps says whether a
// sweep runs to give the rate.
func (s *soakFlags) settings(given func(string) bool, sweeps bool) (pipeline.SoakSettings, error) {
	switch {
	case s.duration < 0:
		return pipeline.SoakSettings{}, usageError("--soak cannot be negative, got %s", s.duration)
	case given("soak-rate") && s.rate <= 0:
		return pipeline.SoakSettings{}, usageError("--soak-rate must be a positive rate of puts per second, got %g", s.rate)
	case s.interval <= 0:
		return pipeline.SoakSettings{}, usageError("--soak-interval must be positive, got %s", s.interval)
	case s.duration == 0 && (given("soak-rate") || given("soak-interval")):
		return pipeline.SoakSettings{}, usageError("--soak-rate and --soak-interval shape a soak: give --soak DURATION")
	case s.duration > 0 && s.rate == 0 && !sweeps:
		return pipeline.SoakSettings{}, usageError("--soak holds the capacity sweep's answer, and no sweep runs here (--capacity=false, or a cluster reached without --capacity): give the rate to hold with --soak-rate N")
	case s.duration > 0 && s.duration < 3*s.interval:
		return pipeline.SoakSettings{}, usageError("--soak %s is shorter than three --soak-interval (%s): its last third would judge less than one sample; give a longer --soak or a shorter --soak-interval", s.duration, s.interval)
	}
	return pipeline.SoakSettings{Duration: s.duration, Rate: s.rate, Interval: s.interval}, nil
}
