package pipeline

import (
	"context"
	"strings"
	"time"

	"github.com/etcdperf/etcdperf/internal/cluster"
	"github.com/etcdperf/etcdperf/internal/etcdlog"
	"github.com/etcdperf/etcdperf/internal/judge"
	"github.com/etcdperf/etcdperf/internal/lab"
	"github.com/etcdperf/etcdperf/internal/loadrun"
	"github.com/etcdperf/etcdperf/internal/memberwatch"
	"github.com/etcdperf/etcdperf/internal/promscrape"
	"github.com/etcdperf/etcdperf/internal/result"
	"github.com/etcdperf/etcdperf/internal/sysinfo"
)

// doctorNode judges the member on this node: watched (or loaded, without
// Observe) over Duration; the disk probe, when its own fsyncs cannot judge
// its disk, in a folder of its own beside its data dir, made only then and
// removed at the end, also on Ctrl-C (liveprobe.Beside); and what the
// member logged meanwhile.
func doctorNode(ctx context.Context, o DoctorOptions, runID string) (*result.Result, error) {
	n := o.Node
	o.Conn = n.Conn
	d, err := newDoctorRun(o, "", runID)
	if err != nil {
		return nil, err
	}
	d.r.Name, d.row.Name = n.Name(), n.Name()
	// The findings and the summary are about this member.
	d.row.Member = n.Found.Name
	if d.row.Member == "" {
		d.row.Member = "etcd"
	}
	d.row.Dir = n.DataDir
	d.r.Tuning = &result.Tuning{Known: judge.FlagsInForce(n.Found), Layout: &result.FlagLayout{Member: d.row.Member, Source: n.Found.Source, File: n.Found.File}}
	d.r.Env = sysinfo.DirEnv(n.DataDir)
	d.device = d.r.Env.Device
	began := time.Now()
	err = d.measure(ctx)
	if d.measured() && (n.LogFile != "" || n.Unit != "") {
		log := etcdlog.MemberLog{File: n.LogFile, Unit: n.Unit, Root: n.Root, Member: n.Found.Name}
		if logs := log.ReadSince(ctx, began, nodeLogParams(d.r)); logs != nil {
			d.r.Logs = logs
		}
	}
	return d.finish(err)
}

// nodeLogParams are where r's params say where its log came from: those
// of its load, or params of their own when it put none.
func nodeLogParams(r *result.Result) *result.NodeLogParams {
	p, ok := r.Params.(*result.CheckParams)
	if !ok {
		p = &result.CheckParams{}
		r.Params = p
	}
	return &p.NodeLogParams
}

// observeMembers watches the cluster without loading it for d: each
// member's /metrics before and after (WAL fsync, backend commit, slow
// applies, heartbeats, peer round trips), the processes of the members on
// this host, the host's CPUs and device. It fills r's Server, Host and
// Target, and the stall a defragmentation of member (the one on this
// node; "": none) would cause, from its last scrape.
func observeMembers(ctx context.Context, r *result.Result, conn cluster.ConnOptions, device string, d time.Duration, member string) error {
	t, err := lab.Open(ctx, lab.TargetOptions{Conn: conn})
	if err != nil {
		return err
	}
	defer t.Close()
	r.Target = loadrun.TargetSection(t)
	if r.Env == nil {
		r.Env = sysinfo.HostEnv()
	}
	r.Env.EtcdVersion = t.Client().Version()
	r.Env.Endpoints = strings.Join(conn.Endpoints, ",")
	win := memberwatch.StartTarget(ctx, t, memberwatch.Options{Host: true, Device: device})
	timer := time.NewTimer(d)
	defer timer.Stop()
	var runErr error
	select {
	case <-ctx.Done():
		runErr = ctx.Err()
	case <-timer.C:
	}
	obs := win.Stop(context.WithoutCancel(ctx))
	r.Server, r.Host = obs.Server, obs.Host
	r.ExpectedDefrag = promscrape.ExpectedOfMember(member, obs.Last, "")
	if r.Server != nil {
		r.Server.Notes = obs.Notes
	}
	return runErr
}
