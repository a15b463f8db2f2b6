package cli

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/etcdperf/etcdperf/internal/check"
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

// limitsValue collects --limit NAME=VALUE[,WARN] overrides of check limits;
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
	keys   *int64
	limits *[]string
}

func (r rangeLimitValue) String() string { return strconv.FormatInt(*r.keys, 10) }

func (r rangeLimitValue) Set(s string) error {
	if strings.Contains(s, "=") {
		*r.limits = append(*r.limits, s)
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

// limits are the --limit settings the flags stand for, or an error for a
// value that is not a positive figure.
func (v *volumeFlags) limits() ([]string, error) {
	var out []string
	for _, f := range []struct {
		flag, level string
		v, scale    float64
	}{{"--volume-iops", check.VolumeIOPS, v.iops, 1}, {"--volume-mbps", check.VolumeWriteBPS, v.mibps, 1 << 20}} {
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
// (--db-size, filled into the sweep's own etcd first).
type sweepFlags struct{ valueSize, dbSize int64 }

// maxValueSize is etcd's default --max-request-bytes (1.5 MiB): a larger
// put is refused.
const maxValueSize = 3 << 19

func (s *sweepFlags) add(fl *pflag.FlagSet) {
	fl.Var(sizeValue{&s.valueSize}, "value-size", "the puts' value size, as the cluster's writes have it (default check perf's 1 KiB), e.g. 4k")
	fl.Var(sizeValue{&s.dbSize}, "db-size", "fill the capacity sweep's own etcd with this much data first, as the cluster's database has (backend commits slow as it grows), e.g. 2g; not with --endpoints or --node")
}

// apply sets the profile's value size, or says why the flags cannot be.
func (s *sweepFlags) apply(prof *check.Profile, external, capacity bool) error {
	if s.valueSize > maxValueSize {
		return usageError("--value-size %s: etcd refuses a request over %s (--max-request-bytes)", units.Size(s.valueSize), units.Size(maxValueSize))
	}
	if s.valueSize > 0 {
		prof.ValSize = int(s.valueSize)
	}
	switch {
	case s.dbSize > 0 && external:
		return usageError("--db-size fills the sweep's own etcd: it would fill the cluster; run doctor on a directory of that storage instead")
	case s.dbSize > 0 && !capacity:
		return usageError("--db-size fills the capacity sweep's etcd: drop --capacity=false")
	}
	return nil
}

// criteriaOf is check.Table with --limit's settings and the volume's
// stated figures applied; an error is a usage error.
func criteriaOf(limits []string, vol *volumeFlags) ([]check.Criterion, error) {
	vl, err := vol.limits()
	if err != nil {
		return nil, usageError("%v", err)
	}
	criteria, err := check.Override(check.Table, append(slices.Clone(limits), vl...))
	if err != nil {
		return nil, usageError("%v", err)
	}
	return criteria, nil
}
