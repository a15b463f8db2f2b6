package cli

import (
	"io"
	"strings"
	"testing"

	"github.com/etcdperf/etcdperf/internal/limits"
)

// --volume-iops and --volume-mbps set the levels a cap below the guest is
// judged against; a figure that is not positive is a usage error.
func TestVolumeFlags(t *testing.T) {
	c, err := criteriaOf([]string{"wal_fsync_p99=5ms"}, &volumeFlags{iops: 3000, mibps: 125})
	if err != nil {
		t.Fatal(err)
	}
	if v := limits.LimitOf(c, limits.VolumeIOPS); v != 3000 {
		t.Errorf("volume_iops %g, want 3000", v)
	}
	if v := limits.LimitOf(c, limits.VolumeWriteBPS); v != 125<<20 {
		t.Errorf("volume_write_bps %g, want 125 MiB", v)
	}
	if v := limits.LimitOf(c, limits.WALFsyncP99); v != 0.005 {
		t.Errorf("--limit lost beside the volume's figures: wal_fsync_p99 %g", v)
	}
	if c, _ := criteriaOf(nil, &volumeFlags{}); limits.LimitOf(c, limits.VolumeIOPS) != 0 {
		t.Error("volume_iops set though not stated")
	}
	for _, v := range []volumeFlags{{iops: -1}, {mibps: -5}} {
		_, err := criteriaOf(nil, &v)
		if err == nil || !strings.Contains(err.Error(), "--volume-") || ExitCode(err, io.Discard) != ExitError {
			t.Errorf("%+v: error %v, want a usage error naming the flag", v, err)
		}
	}
}
