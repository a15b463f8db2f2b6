package pipeline

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/etcdperf/etcdperf/internal/cluster"
	"github.com/etcdperf/etcdperf/internal/lab"
	"github.com/etcdperf/etcdperf/internal/limits"
	"github.com/etcdperf/etcdperf/internal/result"
	"github.com/etcdperf/etcdperf/internal/scale"
	"github.com/etcdperf/etcdperf/internal/testutil"
)

func counts(t *testing.T, spec string) []scale.Count {
	t.Helper()
	cs, err := scale.ParseObjects(spec)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

func TestScaleEmbedded(t *testing.T) {
	dir := t.TempDir()
	o := ScaleOptions{Options: scale.Options{Target: lab.TargetOptions{DataDir: dir}, Counts: counts(t, "pods=600,services=60,events=60"),
		Steps: 3, Clients: 4, UpdateRate: 200, Lists: 2, ListInterval: 50 * time.Millisecond}}
	res, err := Scale(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	sameTextReadBack(t, res)
	sc := res.Scale
	if res.Kind != "scale" || sc == nil || len(sc.Steps) != 3 || sc.Planned != 3 || sc.Stopped != "" || res.Error != "" {
		t.Fatalf("scale %+v error %q", sc, res.Error)
	}
	if len(sc.Kinds) != 3 || sc.Kinds[0].Prefix != "/etcdperf/"+strings.Split(sc.Kinds[0].Prefix, "/")[2]+"/registry/pods/" ||
		sc.Kinds[2].LeaseTTL != scale.DefaultEventTTL.Seconds() || sc.Kinds[0].MeanValueSize < 2000 || sc.Kinds[1].ValueSize != "lognormal:1024:0.3" {
		t.Errorf("kinds %+v", sc.Kinds)
	}
	for i, st := range sc.Steps {
		n := int64(i+1) * 240
		if st.Step != i+1 || st.Objects != n || st.Kinds["pods"] != n*10/12 || st.Written != 240 || len(st.Errors) != 0 {
			t.Errorf("step %d: %d objects %v, %d written, errors %v", st.Step, st.Objects, st.Kinds, st.Written, st.Errors)
		}
		if st.DBSize <= 0 || st.DBSizeInUse <= 0 || st.Put == nil || st.Put.Count != 240 || st.WALFsync == nil || st.BackendCommit == nil {
			t.Errorf("step %d: db %v/%v put %+v wal %+v", st.Step, st.DBSize, st.DBSizeInUse, st.Put, st.WALFsync)
		}
		// Every put of the step, and the updates, reach the watches.
		if st.WatchLag == nil || st.WatchLag.Count < 240 || st.WatchEvents != st.WatchLag.Count || st.WatchEvents < 240+st.Updates {
			t.Errorf("step %d: watch lag %+v, %d events, %d updates", st.Step, st.WatchLag, st.WatchEvents, st.Updates)
		}
		if len(st.Lists) != 3 || st.Lists[0].Kind != "pods" || st.Lists[0].Keys != st.Kinds["pods"] || st.Lists[0].Latency.Count != 2 ||
			st.Lists[0].Pages != int((st.Kinds["pods"]+499)/500) {
			t.Errorf("step %d: lists %+v", st.Step, st.Lists)
		}
		if len(st.Members) != 1 || st.Members[0].DBSize != st.DBSize {
			t.Errorf("step %d: members %+v", st.Step, st.Members)
		}
		if i > 0 && (st.DBSize < sc.Steps[i-1].DBSize || st.T <= sc.Steps[i-1].T || st.Updates == 0 || st.Update == nil) {
			t.Errorf("step %d: db %v after %v, t %v, %d updates", st.Step, st.DBSize, sc.Steps[i-1].DBSize, st.T, st.Updates)
		}
	}
	// The in-process member shares etcdperf's memory: the result says so.
	if !strings.Contains(strings.Join(sc.Notes, " "), "RSS includes etcdperf's own memory") {
		t.Errorf("notes %v", sc.Notes)
	}
	names := map[string]bool{}
	for _, c := range res.Checks {
		names[c.Name] = true
	}
	for _, id := range []string{limits.WALFsyncP99, limits.BackendCommitP99, limits.PutP99, limits.ListAllP99, limits.DBQuotaUsed} {
		if !names[id] {
			t.Errorf("no %s check in %v", id, names)
		}
	}
	if res.Server == nil || res.Server.WALFsync == nil || res.Verdict == "" || !strings.Contains(res.Summary, "720 objects in 3 of 3 steps") {
		t.Errorf("server %+v verdict %q summary %q", res.Server, res.Verdict, res.Summary)
	}
	if p, ok := res.Params.(*result.ScaleParams); !ok || p.Objects != "pods=600,services=60,events=60" {
		t.Errorf("params %v", res.Params)
	}
	testutil.AssertEmptyDir(t, dir)
}

// A limit broken at the first step stops the run there, with a critical
// finding that says at how many objects.
func TestScaleStopsAtALimit(t *testing.T) {
	criteria, err := limits.Override(limits.Table, []string{"put_p99=1ns"})
	if err != nil {
		t.Fatal(err)
	}
	o := ScaleOptions{Options: scale.Options{Target: lab.TargetOptions{DataDir: t.TempDir()}, Counts: counts(t, "pods=200"), Steps: 4, Lists: 1}, Criteria: criteria}
	res, err := Scale(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	sc := res.Scale
	if len(sc.Steps) != 1 || !strings.Contains(sc.Stopped, "put p99") || !strings.Contains(sc.Stopped, "at 50 objects (step 1)") {
		t.Fatalf("%d steps, stopped %q", len(sc.Steps), sc.Stopped)
	}
	i := slices.IndexFunc(res.Findings, func(f result.Finding) bool { return f.ID == "scale_stopped" })
	if res.Verdict != result.Fail || i < 0 || res.Findings[i].Severity != result.Critical {
		t.Errorf("verdict %s findings %+v", res.Verdict, res.Findings)
	}
}

// Against a cluster: the prefix must be free, events expire with their
// leases, and the keys and leases are gone at the end, also after an
// interruption.
func TestScaleExternal(t *testing.T) {
	ep, cli := external(t)
	ctx := context.Background()
	conn := cluster.ConnOptions{Endpoints: []string{ep}}
	leases := func() int {
		l, err := cli.Leases(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return len(l.Leases)
	}
	if _, err := cli.Put(ctx, "/etcdperf/taken/x", "1"); err != nil {
		t.Fatal(err)
	}
	o := ScaleOptions{Options: scale.Options{Target: lab.TargetOptions{Conn: conn}, Counts: counts(t, "pods=20,events=16"), Steps: 2, Clients: 1, Lists: 1, Prefix: "/etcdperf/taken/"}}
	if _, err := Scale(ctx, o); !errors.Is(err, ErrPrefixInUse) {
		t.Errorf("a used prefix: %v", err)
	}

	// 18 objects a step at 6/s: each step lasts 3s, the events' leases 2s.
	o.Prefix, o.Rate, o.EventTTL = "", 6, 2*time.Second
	res, err := Scale(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	sc := res.Scale
	if len(sc.Steps) != 2 || res.Target.Kind != lab.External {
		t.Fatalf("%d steps, target %+v", len(sc.Steps), res.Target)
	}
	if ev := sc.Steps[1].Kinds["events"]; ev >= 16 {
		t.Errorf("%d events after step 2: none expired", ev)
	}
	if sc.Steps[1].Kinds["pods"] != 20 || sc.Steps[0].Written != 18 {
		t.Errorf("steps %+v", sc.Steps)
	}
	if !strings.Contains(strings.Join(sc.Notes, " "), "log warnings are not counted") {
		t.Errorf("notes %v", sc.Notes)
	}
	if n := countPrefix(t, cli, "/etcdperf/"); n != 1 || leases() != 0 {
		t.Errorf("%d keys (the taken one is 1) and %d leases left", n, leases())
	}

	// Interrupted in its first step: a partial Result, nothing left.
	cctx, cancel := context.WithCancel(ctx)
	prog := &scale.Progress{}
	o.Progress, o.Counts, o.Rate, o.EventTTL = prog, counts(t, "pods=100000,events=100"), 0, time.Minute
	go func() {
		for prog.Puts.Done() < 200 {
			time.Sleep(10 * time.Millisecond)
		}
		cancel()
	}()
	res, err = Scale(cctx, o)
	if !errors.Is(err, context.Canceled) || res == nil || res.Error != "interrupted" {
		t.Errorf("interrupted run: %v, %+v", err, res)
	}
	if n := countPrefix(t, cli, "/etcdperf/"); n != 1 || leases() != 0 {
		t.Errorf("after the interruption: %d keys (the taken one is 1) and %d leases left", n, leases())
	}
}

func TestScaleOptionsValidate(t *testing.T) {
	good := ScaleOptions{Options: scale.Options{Counts: []scale.Count{{Kind: scale.Kinds[0], N: 10}}, Steps: 2, Clients: 1}}
	for want, mod := range map[string]func(o *ScaleOptions){
		"names no object":    func(o *ScaleOptions) { o.Counts = nil },
		"--steps must be":    func(o *ScaleOptions) { o.Steps = 0 },
		"more than the 10":   func(o *ScaleOptions) { o.Steps = 11 },
		"--clients":          func(o *ScaleOptions) { o.Clients = 0 },
		"cannot be negative": func(o *ScaleOptions) { o.UpdateRate = -1 },
		"--event-ttl":        func(o *ScaleOptions) { o.EventTTL = time.Second },
		"whole seconds":      func(o *ScaleOptions) { o.EventTTL = 2500 * time.Millisecond },
		"must end in /":      func(o *ScaleOptions) { o.Prefix = "/p" },
	} {
		o := good
		mod(&o)
		if err := o.Validate(); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v", want, err)
		}
	}
	if err := good.Validate(); err != nil {
		t.Error(err)
	}
}
