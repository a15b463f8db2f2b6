package cli

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/etcdperf/etcdperf/internal/capacity"
	"github.com/etcdperf/etcdperf/internal/judge"
	"github.com/etcdperf/etcdperf/internal/limits"
	"github.com/etcdperf/etcdperf/internal/profile"
	"github.com/etcdperf/etcdperf/internal/promexport"
	"github.com/etcdperf/etcdperf/internal/result"
	"github.com/etcdperf/etcdperf/internal/units"
)

// sizeValue is a flag holding a byte size written as 2300, 4k, 22m or 1GiB.
type sizeValue struct{ v *int64 }

func (s sizeValue) String() string {
	if s.v == nil {
		return "0"
	}
	return units.Size(*s.v) // 22 MiB, as people write it
}

func (s sizeValue) Set(str string) error {
	n, err := units.ParseSize(str)
	if err != nil {
		return err
	}
	if n < 0 {
		return strconv.ErrRange
	}
	*s.v = n
	return nil
}

func (sizeValue) Type() string { return "size" }

// autoInt is an int flag whose default depends on other flags: a negative
// value means "not given", and help shows no "(default -1)"; the usage
// text says what the default is.
type autoInt struct{ v *int }

func (a autoInt) String() string {
	if a.v == nil || *a.v < 0 {
		return ""
	}
	return strconv.Itoa(*a.v)
}

func (a autoInt) Set(s string) error {
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		return errors.New("want a whole number, 0 or more")
	}
	*a.v = n
	return nil
}

func (autoInt) Type() string { return "int" }

// limitsValue collects --limit NAME=VALUE[,WARN] overrides of the limits;
// the same value may sit under several flag names (bench's old
// --threshold), each use adding to the list.
type limitsValue struct{ v *[]string }

func (l limitsValue) String() string {
	if l.v == nil || len(*l.v) == 0 {
		return ""
	}
	return "[" + strings.Join(*l.v, ",") + "]"
}

func (l limitsValue) Set(s string) error { *l.v = append(*l.v, s); return nil }

func (limitsValue) Type() string { return "stringArray" }

// rangeLimitValue is --limit of bench range and txn-mixed: a number is
// etcd benchmark's limit (keys per range), NAME=VALUE[,WARN] overrides a
// check's limit as --limit does in every other command.
type rangeLimitValue struct {
	keys      *int64
	overrides *[]string
}

func (r rangeLimitValue) String() string { return strconv.FormatInt(*r.keys, 10) }

func (r rangeLimitValue) Set(s string) error {
	if strings.Contains(s, "=") {
		*r.overrides = append(*r.overrides, s)
		return nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return errors.New("want keys per range (a whole number, 0 for no limit) or a check's NAME=VALUE[,WARN]")
	}
	*r.keys = n
	return nil
}

func (rangeLimitValue) Type() string { return "int|NAME=VALUE" }

// volumeFlags are the volume's provisioned figures as the user states
// them (--volume-iops, --volume-mbps): the levels volume_iops and
// volume_write_bps, which a cap below the guest is judged against.
type volumeFlags struct{ iops, mibps float64 }

func (v *volumeFlags) add(fl *pflag.FlagSet) {
	fl.Float64Var(&v.iops, "volume-iops", 0, "the volume's provisioned write IOPS, e.g. 3000 for an AWS gp3 volume's default or 900 for a 300 GiB gp2: the writes are judged against it (a cap used, the headroom left)")
	fl.Float64Var(&v.mibps, "volume-mbps", 0, "the volume's provisioned throughput in MiB/s, e.g. 125 for gp3's default")
}

// overrides are the --limit settings the flags stand for, or an error for a
// value that is not a positive figure.
func (v *volumeFlags) overrides() ([]string, error) {
	var out []string
	for _, f := range []struct {
		flag, level string
		v, scale    float64
	}{{"--volume-iops", limits.VolumeIOPS, v.iops, 1}, {"--volume-mbps", limits.VolumeWriteBPS, v.mibps, 1 << 20}} {
		switch {
		case f.v < 0 || math.IsNaN(f.v) || math.IsInf(f.v, 0):
			return nil, fmt.Errorf("%s %g: want the volume's provisioned figure, more than 0", f.flag, f.v)
		case f.v > 0:
			out = append(out, fmt.Sprintf("%s=%.0f", f.level, f.v*f.scale))
		}
	}
	return out, nil
}

// sweepFlags shape the puts of a load and its capacity sweep as the
// cluster has them: the values' size (--value-size) and the database's
// (--db-size, filled into the sweep's own etcd first). With doctor's
// --demand-from, either may be "from-prometheus": read from the
// cluster's metrics there (readProm).
type sweepFlags struct {
	valueSize, dbSize         int64
	valueFromProm, dbFromProm bool
	// prom says the command reads a Prometheus (doctor's --demand-from).
	prom bool
}

// maxValueSize is etcd's default --max-request-bytes (1.5 MiB): a larger
// put is refused.
const maxValueSize = 3 << 19

// fromProm is the word that asks for a size from the cluster's metrics.
const fromProm = "from-prometheus"

// add registers the flags; prom says that the command has --demand-from.
func (s *sweepFlags) add(fl *pflag.FlagSet, prom bool) {
	s.prom = prom
	value := "the puts' value size, as the cluster's writes have it (default check perf's 1 KiB), e.g. 4k"
	db := "fill the capacity sweep's own etcd with this much data first, as the cluster's database has (backend commits slow as it grows), e.g. 2g; not with --endpoints or --node"
	if prom {
		value += "; " + fromProm + ": the cluster's mean write, read from the Prometheus of --demand-from (the bytes etcd wrote to its WAL per committed write)"
		db += "; " + fromProm + ": the largest database in use of the cluster's members, read from the Prometheus of --demand-from"
	}
	fl.Var(clusterSize{&s.valueSize, &s.valueFromProm}, "value-size", value)
	fl.Var(clusterSize{&s.dbSize, &s.dbFromProm}, "db-size", db)
}

// apply sets the profile's value size, or says why the flags cannot be.
func (s *sweepFlags) apply(prof *profile.Profile, external, capacity bool) error {
	if s.valueSize > maxValueSize {
		return usageError("--value-size %s: etcd refuses a request over %s (--max-request-bytes)", units.Size(s.valueSize), units.Size(maxValueSize))
	}
	if s.valueSize > 0 {
		prof.ValSize = int(s.valueSize)
	}
	for _, f := range []struct {
		name string
		on   bool
	}{{"--value-size", s.valueFromProm}, {"--db-size", s.dbFromProm}} {
		if f.on && !s.prom {
			return usageError("%s %s reads the cluster's metrics with etcdperf doctor --demand-from URL; here give a size, e.g. %s 2k", f.name, fromProm, f.name)
		}
	}
	fill := s.dbSize > 0 || s.dbFromProm
	switch {
	case fill && external:
		return usageError("--db-size fills the sweep's own etcd: it would fill the cluster; run doctor on a directory of that storage instead")
	case fill && !capacity:
		return usageError("--db-size fills the capacity sweep's etcd: drop --capacity=false")
	}
	return nil
}

// readProm reads the sizes asked for by name (from-prometheus) from the
// Prometheus at conn over since, sets them, and says where they came
// from. It is called before anything is measured: an error is a usage
// error of one line.
func (s *sweepFlags) readProm(ctx context.Context, prof *profile.Profile, conn promexport.Options, since string) (capacity.SizesFrom, error) {
	var from capacity.SizesFrom
	if (s.dbFromProm || s.valueFromProm) && conn.URL == "" {
		return from, usageError("%s reads the cluster's metrics from the Prometheus of --demand-from URL: give it too", s.promFlags())
	}
	if s.dbFromProm {
		n, words, err := promexport.ClusterDBSize(ctx, conn, since)
		if err != nil {
			return from, usageError("--db-size %s (%s): %v; give the size instead, e.g. --db-size 2g", fromProm, conn.URL, err)
		}
		s.dbSize, from.DB = n, words
	}
	if s.valueFromProm {
		n, words, err := promexport.ClusterMeanWrite(ctx, conn, since)
		if err != nil {
			return from, usageError("--value-size %s (%s): %v; give the size instead, e.g. --value-size 2k", fromProm, conn.URL, err)
		}
		if n > maxValueSize {
			return from, usageError("--value-size %s (%s): the cluster's mean write, %s, is over etcd's request limit %s", fromProm, conn.URL, units.Size(int64(n)), units.Size(maxValueSize))
		}
		s.valueSize, prof.ValSize, from.Value = int64(n), n, words
	}
	return from, nil
}

// promFlags names the flags given as from-prometheus.
func (s *sweepFlags) promFlags() string {
	var f []string
	if s.valueFromProm {
		f = append(f, "--value-size")
	}
	if s.dbFromProm {
		f = append(f, "--db-size")
	}
	return strings.Join(f, " and ") + " " + fromProm
}

// clusterSize is a size flag that also takes from-prometheus: the
// cluster's figure, read from its metrics.
type clusterSize struct {
	v    *int64
	prom *bool
}

func (c clusterSize) String() string {
	if c.prom != nil && *c.prom {
		return fromProm
	}
	return sizeValue{c.v}.String()
}

func (c clusterSize) Set(str string) error {
	if strings.EqualFold(strings.TrimSpace(str), fromProm) {
		*c.prom, *c.v = true, 0
		return nil
	}
	if err := (sizeValue{c.v}).Set(str); err != nil {
		return fmt.Errorf("%w (a size such as 4k or 2g, or %s)", err, fromProm)
	}
	*c.prom = false
	return nil
}

func (clusterSize) Type() string { return "size" }

// criteriaOf is limits.Table with --limit's settings and the volume's
// stated figures applied; an error is a usage error.
func criteriaOf(overrides []string, vol *volumeFlags) ([]limits.Criterion, error) {
	vl, err := vol.overrides()
	if err != nil {
		return nil, usageError("%v", err)
	}
	criteria, err := limits.Override(limits.Table, append(slices.Clone(overrides), vl...))
	if err != nil {
		return nil, usageError("%v", err)
	}
	return criteria, nil
}

// currentFlags is --current-flag: etcd's flags in force, as the user
// states them, for the tuning to compare its suggestions with.
type currentFlags struct{ raw []string }

func addCurrentFlag(fl *pflag.FlagSet) *currentFlags {
	c := &currentFlags{}
	fl.StringArrayVar(&c.raw, "current-flag", nil, "an etcd flag in force on the members, NAME=VALUE, for the tuning section to compare with "+
		"(repeatable): heartbeat-interval and election-timeout in milliseconds or as a duration (100, 100ms, 1s), quota-backend-bytes in bytes or as a size (8GiB), "+
		"auto-compaction-mode (periodic, revision), auto-compaction-retention and snapshot-count as etcd takes them")
	return c
}

// values parses the flags stated; a name the tuning does not know, a
// value that is not a time, or a flag stated twice is a usage error.
func (c *currentFlags) values() ([]result.FlagValue, error) {
	var out []result.FlagValue
	for _, s := range c.raw {
		name, val, ok := strings.Cut(s, "=")
		name = strings.TrimLeft(strings.TrimSpace(name), "-")
		if !ok || name == "" || strings.TrimSpace(val) == "" {
			return nil, usageError("--current-flag %q: want NAME=VALUE, e.g. --current-flag heartbeat-interval=100", s)
		}
		if slices.ContainsFunc(out, func(f result.FlagValue) bool { return f.Name == name }) {
			return nil, usageError("--current-flag: %s is stated twice", name)
		}
		v, text, err := judge.ParseFlag(name, val)
		if err != nil {
			return nil, usageError("--current-flag %q: %v", s, err)
		}
		out = append(out, result.FlagValue{Name: name, Value: v, Text: text, From: "--current-flag"})
	}
	return out, nil
}
