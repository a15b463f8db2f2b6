package pipeline

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/etcdperf/etcdperf/internal/cluster"
	"github.com/etcdperf/etcdperf/internal/discover"
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
	d.r.Tuning = &result.Tuning{Known: nodeFlags(n.Found), Layout: &result.FlagLayout{Member: d.row.Member, Source: n.Found.Source, File: n.Found.File}}
	d.r.Env = sysinfo.DirEnv(n.DataDir)
	d.device = d.r.Env.Device
	began := time.Now()
	err = d.measure(ctx)
	if d.measured() {
		switch {
		case n.LogFile != "":
			readNodeLog(ctx, d.r, n.LogFile, began)
		case n.Unit != "":
			readNodeJournal(ctx, d.r, n, began)
		}
	}
	return d.finish(err)
}

// readNodeLog reads the member's log lines written since the run began
// into r.Logs, for the judgement. A log that cannot be read is said in the
// Result's parameters; it does not stop the run.
func readNodeLog(ctx context.Context, r *result.Result, path string, since time.Time) {
	inputs, err := etcdlog.Inputs([]string{path}, nil)
	scanNodeLog(ctx, r, "log_file", path, inputs, err, since)
}

// scanNodeLog scans inputs (unless err) into r.Logs, and says in the
// Result's parameters where the log came from (param: source) and what
// went wrong reading it.
func scanNodeLog(ctx context.Context, r *result.Result, param, source string, inputs []etcdlog.Input, err error, since time.Time) {
	if err == nil {
		var sum *etcdlog.Summary
		sum, err = etcdlog.Scan(context.WithoutCancel(ctx), inputs, etcdlog.ScanOptions{Summary: etcdlog.SummaryOptions{Since: since, Bucket: time.Minute}})
		if sum != nil {
			r.Logs = sum.Result()
		}
	}
	p := nodeLogParams(r)
	if param == "log_file" {
		p.LogFile = source
	} else {
		p.LogJournal = source
	}
	if err != nil {
		p.LogError = err.Error()
	}
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

// journalTimeout bounds reading the member's journal.
const journalTimeout = 30 * time.Second

// readNodeJournal reads what the member's systemd unit logged since the
// run began from the node's journal (etcdlog.OpenJournal) into r.Logs. A
// journal that cannot be read is said in the Result's parameters.
func readNodeJournal(ctx context.Context, r *result.Result, n *discover.Node, since time.Time) {
	jctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), journalTimeout)
	defer cancel()
	j, err := etcdlog.OpenJournal(jctx, n.Unit, n.Root, n.Found.Name, since)
	scanNodeLog(ctx, r, "log_journal", j.Source, j.Inputs, err, since)
	if p, err := nodeLogParams(r), j.Wait(); err != nil && p.LogError == "" {
		p.LogError = err.Error()
	}
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

// nodeFlags are etcd's tunable flags in force on the node: as its
// configuration sets them, else etcd's defaults (the quota is left to
// the member's own gauge); a value etcd would not take is left unknown.
func nodeFlags(f result.FoundEtcd) []result.FlagValue {
	defaults := map[string]string{judge.FlagHeartbeat: strconv.Itoa(judge.DefaultHeartbeatMs), judge.FlagElection: strconv.Itoa(judge.DefaultElectionMs), judge.FlagCompactionMode: "periodic", judge.FlagCompactionRetention: "0"}
	var out []result.FlagValue
	for _, name := range judge.TunableFlags {
		raw, set := f.Flags[name]
		from := f.File
		if !set {
			if raw, set = defaults[name]; !set {
				continue
			}
			from = "etcd's default (" + f.File + " does not set it)"
		}
		if v, text, err := judge.ParseFlag(name, raw); err == nil {
			out = append(out, result.FlagValue{Name: name, Value: v, Text: text, From: from})
		}
	}
	return out
}
