package cli

import (
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/etcdperf/etcdperf/internal/capacity"
	"github.com/etcdperf/etcdperf/internal/pipeline"
)

// soakFlags are --soak, --soak-rate and --soak-interval (doctor, check).
type soakFlags struct {
	duration, interval time.Duration
	rate               float64
}

func (s *soakFlags) add(fl *pflag.FlagSet) {
	fl.DurationVar(&s.duration, "soak", 0, "after the capacity sweep, hold its answer (or --soak-rate) this long, e.g. 10m, recording a sample every --soak-interval: the figure that held over the last third, and a drop when the storage gives less after a while (burst credits or a write cache that ran out) (0: no soak)")
	fl.Float64Var(&s.rate, "soak-rate", 0, "with --soak, the puts/s to hold instead of the sweep's answer (also with --capacity=false: hold a rate without a sweep)")
	fl.DurationVar(&s.interval, "soak-interval", capacity.DefaultSoakInterval, "with --soak, the span of each sample of its series")
}

// settings checks the flags (before anything is measured) and returns
// them; capacity says whether a sweep runs to give the rate.
func (s *soakFlags) settings(cmd *cobra.Command, capacity bool) (pipeline.SoakSettings, error) {
	fl := cmd.Flags()
	switch {
	case s.duration < 0:
		return pipeline.SoakSettings{}, usageError("--soak cannot be negative, got %s", s.duration)
	case fl.Changed("soak-rate") && s.rate <= 0:
		return pipeline.SoakSettings{}, usageError("--soak-rate must be a positive rate of puts per second, got %g", s.rate)
	case s.interval <= 0:
		return pipeline.SoakSettings{}, usageError("--soak-interval must be positive, got %s", s.interval)
	case s.duration == 0 && (fl.Changed("soak-rate") || fl.Changed("soak-interval")):
		return pipeline.SoakSettings{}, usageError("--soak-rate and --soak-interval shape a soak: give --soak DURATION")
	case s.duration > 0 && s.rate == 0 && !capacity:
		return pipeline.SoakSettings{}, usageError("--soak holds the capacity sweep's answer: with --capacity=false, give the rate to hold with --soak-rate N")
	case s.duration > 0 && s.duration < 3*s.interval:
		return pipeline.SoakSettings{}, usageError("--soak %s is shorter than three --soak-interval (%s): its last third would judge less than one sample; give a longer --soak or a shorter --soak-interval", s.duration, s.interval)
	}
	return pipeline.SoakSettings{Duration: s.duration, Rate: s.rate, Interval: s.interval}, nil
}
