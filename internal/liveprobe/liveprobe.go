// Package liveprobe is the disk probe beside a live etcd member (doctor
// --node, or --endpoints with --data-dir): etcd's own WAL fsyncs over the
// window it was watched judge its disk, and a probe of ours runs only when
// the member was too idle for its histogram to, paced, and stopped as soon
// as the member's WAL fsyncs or the device show it is in the way.
package liveprobe

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/etcdperf/etcdperf/internal/cluster"
	"github.com/etcdperf/etcdperf/internal/discover"
	"github.com/etcdperf/etcdperf/internal/diskprobe"
	"github.com/etcdperf/etcdperf/internal/hoststats"
	"github.com/etcdperf/etcdperf/internal/lab"
	"github.com/etcdperf/etcdperf/internal/limits"
	"github.com/etcdperf/etcdperf/internal/memberwatch"
	"github.com/etcdperf/etcdperf/internal/promscrape"
	"github.com/etcdperf/etcdperf/internal/result"
	"github.com/etcdperf/etcdperf/internal/units"
)

// Beside a live member (doctor --node, or --endpoints with --data-dir)
// etcd's own WAL fsyncs are the disk probe: etcd_disk_wal_fsync_duration
// measures the disk under the real load. A probe of ours runs only when
// the member is too idle for its histogram to judge (fewer WAL fsyncs in
// the window than limits.MemberFsyncsEnough), paced, and it yields (at
// limits.ProbeDeviceBusy, or the member's WAL fsync p99 past its limit).
const (
	// DefaultLiveDiskRate is the probe's pace beside a live member, in
	// fdatasyncs per second: a fifth of what a modest cloud volume (gp2's
	// 100-IOPS floor is the lowest) leaves free, 2.3 KiB each.
	DefaultLiveDiskRate = 50
	// guardWindow is how far back the guard looks: the member's WAL fsync
	// p99 and the device's utilisation over the last 3 seconds.
	guardWindow = 3 * time.Second
)

// mark is what the guard read at one tick: the members' metrics and the
// host's counters.
type mark struct {
	at      time.Time
	scrapes []promscrape.MemberScrape
	host    hoststats.Snapshot
	hasHost bool
}

// guardCheck says why the probe must stop between the marks first and m,
// nil if it may go on: a member's WAL fsync p99 past limit (seconds), or
// the device busier than busy (a fraction).
func guardCheck(first, m mark, device string, limit, busy float64) *guardStop {
	span := units.Seconds(m.at.Sub(first.at).Round(100 * time.Millisecond).Seconds())
	for i, s := range m.scrapes {
		if s.Err != nil || first.scrapes[i].Err != nil {
			continue
		}
		h, ok := promscrape.HistDelta(first.scrapes[i].Snap, s.Snap, promscrape.MetricWALFsync)
		if !ok || h.Count == 0 {
			continue
		}
		if p99, _, _ := h.Quantile(0.99); p99 > limit {
			return &guardStop{fmt.Sprintf("member %s's WAL fsync p99 over the last %s rose to %s (over %s)",
				s.Member.Name, span, units.Seconds(p99), units.Seconds(limit))}
		}
	}
	if m.hasHost && first.hasHost {
		if hs := hoststats.Between(first.host, m.host); hs.Util > busy {
			return &guardStop{fmt.Sprintf("the device %s was %.0f%% busy over the last %s (over %.0f%%)",
				device, hs.Util*100, span, busy*100)}
		}
	}
	return nil
}

// guardStop is why the guard stopped the probe.
type guardStop struct{ why string }

func (g *guardStop) Error() string { return g.why }

// memberFsyncs is the fewest WAL fsyncs any observed member made over the
// window (the member whose disk is probed is one of them); false when no
// member's histogram was read.
func memberFsyncs(srv *result.Server) (int64, bool) {
	if srv == nil {
		return 0, false
	}
	n, known := int64(-1), false
	for _, m := range srv.Members {
		if m.WALFsync == nil {
			continue
		}
		if c := m.WALFsync.Count; !known || c < n {
			n, known = c, true
		}
	}
	if !known && srv.WALFsync != nil {
		return srv.WALFsync.Count, true
	}
	return n, known
}

// Options configure a probe beside a live member.
type Options struct {
	// Conn reaches the member; Node, when set, is the member on this node
	// (the probe then runs in a folder of its own beside its data dir).
	Conn cluster.ConnOptions
	Node *discover.Node
	// Disk is the probe (its Dir is set); Window the time the member was
	// watched (or loaded) over; Explicit says the user asked for the probe
	// by name, which then runs even when the member's fsyncs judge its disk.
	Disk     diskprobe.Options
	Window   time.Duration
	Explicit bool
	// Criteria hold the run's levels (limits.Table's unless set with
	// --limit): the member's WAL fsyncs enough to judge its disk, and the
	// WAL fsync limit and device utilisation the guard stops the probe at.
	Criteria []limits.Criterion
	RunID    string
	// Probe runs the disk probe; Progress, when set, is told what it does.
	Probe    func(ctx context.Context, o diskprobe.Options) (*result.Result, error)
	Progress func(phase string)
}

// Outcome is what the probe beside a live member did: Row says it for the
// target's row (DoctorTarget.DiskProbe); Disk is the probe's section when
// it ran (Stopped set when the guard stopped it), Error the probe's own
// error text, for the caller to put in its Result.
type Outcome struct {
	Row   string
	Disk  *result.Disk
	Error string
}

// Beside runs the disk probe in dir beside the live member at o.Conn,
// after the window it was watched (or loaded) over, whose server section
// is srv: not at all when the member's own WAL fsyncs in the window judge
// its disk (unless o.Explicit), nor when the guard cannot read what it
// guards on; else paced at o.Disk.Rate and stopped as soon as the
// member's WAL fsync p99 over the last seconds passes etcd's limit or the
// device is busier than probe_device_busy. It returns what it did.
func Beside(ctx context.Context, o Options, srv *result.Server, dir, device string) (out Outcome, err error) {
	n, known := memberFsyncs(srv)
	window := units.Seconds(o.Window.Seconds())
	enough := limits.LimitOf(o.Criteria, limits.MemberFsyncsEnough)
	if known && float64(n) >= enough && !o.Explicit {
		out.Row = fmt.Sprintf("not run: the member's own %d WAL fsyncs in %s judge its disk (%.0f are enough); nothing was written beside it",
			n, window, enough)
		return out, nil
	}
	why := fmt.Sprintf("the member made only %d WAL fsyncs in %s, too few to judge its disk (%.0f are enough)", n, window, enough)
	if o.Explicit {
		why = "asked for by --disk-runtime or --disk-rate"
	}
	// The guard must see what it guards on: the member's WAL fsyncs and
	// the device. Blind, it does not start beside a live member unless the
	// probe was asked for by name; then the row says what it could not see.
	blind := guardBlind(known, device)
	if blind != "" && !o.Explicit {
		out.Row = "not run: " + blind + ", so nothing would stop the probe if it slowed the member; nothing was written beside it"
		return out, nil
	}
	if blind != "" {
		why += "; the guard could not watch everything: " + blind
	}
	if o.Node != nil {
		// The node's member: a folder of its own beside its data dir.
		d, err := discover.MakeProbeDir(o.Node, o.RunID)
		if err != nil {
			return out, err
		}
		defer os.RemoveAll(d)
		dir = d
	}
	t, err := lab.Open(ctx, lab.TargetOptions{Conn: o.Conn})
	if err != nil {
		return out, err
	}
	defer t.Close()
	limit, busy := limits.LimitOf(o.Criteria, limits.WALFsyncP99), limits.LimitOf(o.Criteria, limits.ProbeDeviceBusy)
	gctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	guarded := make(chan struct{})
	go func() {
		defer close(guarded)
		guardProbe(gctx, stop, t.Client().HTTPClient(), t.Members(), device, limit, busy)
	}()
	probe := o.Disk
	probe.Dir = dir
	if probe.Rate > 0 && probe.Runtime > 0 {
		// A paced probe needs no more than its pace allows: no larger a
		// file beside the member.
		bs := int64(probe.BlockSize)
		probe.Size = min(probe.Size, int64(math.Ceil(probe.Rate*probe.Runtime.Seconds())+1)*bs)
	}
	pace := "as fast as the device allows"
	if probe.Rate > 0 {
		pace = fmt.Sprintf("at most %g fdatasyncs/s", probe.Rate)
	}
	if o.Progress != nil {
		o.Progress(fmt.Sprintf("probing the disk under %s, %s", dir, pace))
	}
	dres, derr := o.Probe(gctx, probe)
	stop(nil)
	<-guarded
	out.Row = fmt.Sprintf("ran %s for at most %s: %s", pace, units.Seconds(probe.Runtime.Seconds()), why)
	var gs *guardStop
	if errors.As(context.Cause(gctx), &gs) && ctx.Err() == nil {
		// The guard's stop is the probe yielding, not a failure.
		derr = nil
		out.Row += "; stopped early: " + gs.why
		if dres != nil {
			dres.Error = ""
			dres.Disk.Stopped = gs.why
		}
	}
	if dres != nil {
		dres.Disk.Rate = probe.Rate
		out.Disk, out.Error = dres.Disk, dres.Error
	}
	return out, derr
}

// guardBlind says what the guard cannot see ("" when it sees all it
// guards on): the member's WAL fsync histogram (known) and the device under
// the probe, when there is one (a FUSE or network file system has none:
// the member's fsyncs alone guard it).
func guardBlind(known bool, device string) string {
	var blind []string
	if !known {
		blind = append(blind, "the member's WAL fsync histogram could not be read")
	}
	if device != "" {
		if _, err := hoststats.Take(device); err != nil {
			blind = append(blind, fmt.Sprintf("the device %s could not be read (%v)", device, err))
		}
	}
	return strings.Join(blind, "; ")
}

// guardProbe watches the live members' WAL fsync histograms and the device
// every second while the probe runs (memberwatch.Watch), and stops it
// (stop with a *guardStop) when any member's WAL fsync p99 over the last
// guardWindow passes limit (seconds), or the device is busier than busy (a
// fraction) over it.
func guardProbe(ctx context.Context, stop context.CancelCauseFunc, httpc *http.Client, members []cluster.Member, device string, limit, busy float64) {
	var marks []mark
	memberwatch.Watch(ctx, httpc, members, memberwatch.WatchOptions{Interval: time.Second, SkipLate: true}, func(t memberwatch.Tick) bool {
		m := mark{at: t.At, scrapes: t.Mark.After}
		if device != "" {
			s, err := hoststats.Take(device)
			if err != nil {
				stop(&guardStop{why: fmt.Sprintf("the device %s could no longer be read (%v)", device, err)})
				return false
			}
			m.host, m.hasHost = s, true
		}
		marks = append(marks, m)
		for len(marks) > 2 && m.at.Sub(marks[1].at) >= guardWindow {
			marks = marks[1:]
		}
		if len(marks) > 1 {
			if gs := guardCheck(marks[0], m, device, limit, busy); gs != nil {
				stop(gs)
				return false
			}
		}
		return true
	})
}
