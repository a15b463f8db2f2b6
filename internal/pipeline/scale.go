package pipeline

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/etcdperf/etcdperf/internal/judge"
	"github.com/etcdperf/etcdperf/internal/kubescale"
	"github.com/etcdperf/etcdperf/internal/lab"
	"github.com/etcdperf/etcdperf/internal/limits"
	"github.com/etcdperf/etcdperf/internal/load"
	"github.com/etcdperf/etcdperf/internal/loadrun"
	"github.com/etcdperf/etcdperf/internal/result"
	"github.com/etcdperf/etcdperf/internal/scale"
)

// ScaleOptions configure `etcdperf scale`, either way: on etcd itself
// (Options), or through Kubernetes' API server when Kube.Conn is given
// (Kube; its Etcd is the etcd behind the API server, read beside the
// calls).
type ScaleOptions struct {
	scale.Options
	Kube kubescale.Options
	// Criteria are the limits the steps and the run are judged by
	// (default limits.Table).
	Criteria []limits.Criterion
	// Follow, when set, follows the run, either way.
	Follow *ScaleProgress
}

// Through says whether the run goes through Kubernetes' API server.
func (o ScaleOptions) Through() bool { return o.Kube.Conn.Given() }

// ScaleProgress follows a scale run, either way: the step under way (0
// while etcd starts or the API server is reached) and the objects
// written so far.
type ScaleProgress struct {
	etcd scale.Progress
	kube kubescale.Progress
}

// Step is the step under way, 0 before the first.
func (p *ScaleProgress) Step() int64 { return max(p.etcd.Step.Load(), p.kube.Step.Load()) }

// Objects are the objects written (or created) so far, all steps.
func (p *ScaleProgress) Objects() int64 { return p.etcd.Puts.Done() + p.kube.Created.Load() }

// Scale grows Kubernetes-shaped data in etcd step by step, with the
// background traffic of a control plane, and records etcd's figures after
// each step. It stops after a step whose figures break a limit or that
// had failed requests. It writes only under its prefix, refuses a prefix
// that has keys, and deletes its keys and leases at the end, also when ctx
// ends midway; an embedded etcd is removed. An interrupted run returns
// its partial Result with the error. Through Kubernetes' API server
// (o.Through) it creates real objects instead (kubeScale).
func Scale(ctx context.Context, o ScaleOptions) (res *result.Result, err error) {
	if o.Criteria == nil {
		o.Criteria = limits.Table
	}
	if o.Follow != nil {
		o.Progress, o.Kube.Progress = &o.Follow.etcd, &o.Follow.kube
	}
	if o.Through() {
		return kubeScale(ctx, o.Kube, o.Criteria)
	}
	o.Defaults()
	if err := o.Validate(); err != nil {
		return nil, err
	}
	res = result.New(result.KindScale)
	res.Params = scaleParams(o)

	t, err := lab.Open(ctx, o.Target)
	if err != nil {
		return nil, err
	}
	defer loadrun.CloseTarget(t, &err, func(msg string) {
		if res != nil {
			res.AddError(msg)
		}
	})
	res.Env = loadrun.Env(t)
	res.Target = loadrun.TargetSection(t)
	if err := loadrun.PrefixFree(ctx, t.Client(), o.Prefix, o.Target.Conn.User); err != nil {
		return nil, err
	}
	conns, err := loadrun.OpenConns(ctx, t, loadrun.Options{Conns: max(o.Conns, 1), Load: load.Options{Workload: load.Put}})
	defer load.Close(conns)
	if err != nil {
		return nil, err
	}

	run := scale.NewRun(o.Options, t, conns)
	// Whatever happens from here on, the keys and leases go.
	defer func() {
		if cerr := run.Cleanup(context.WithoutCancel(ctx)); cerr != nil {
			err = errors.Join(err, cerr)
			if res != nil {
				res.AddError(cerr.Error())
			}
		}
	}()
	sc, srv, runErr := run.Measure(ctx, func(st result.ScaleStep, prev *result.ScaleStep, quota float64) string {
		return judge.StopReason(st, prev, quota, o.Criteria)
	})
	res.Scale = sc
	res.Server = srv
	if o.Target.KeepData && t.RunDir() != "" {
		sc.Notes = append(sc.Notes, "kept the embedded etcd's data and logs in "+t.RunDir()+" (--keep-data)")
	}
	return finishSteps(res, runErr, len(sc.Steps), o.Criteria)
}

// finishSteps ends a run of steps: one that failed before its first step
// returns only its error; an interrupted one, or one that failed later,
// its partial Result with the error; then the Result is judged.
func finishSteps(res *result.Result, runErr error, steps int, criteria []limits.Criterion) (*result.Result, error) {
	if runErr != nil {
		res.Error = runErr.Error()
		if errors.Is(runErr, context.Canceled) {
			res.Error = "interrupted"
		}
		if steps == 0 && !errors.Is(runErr, context.Canceled) {
			return nil, runErr
		}
	}
	judge.Judge(res, criteria)
	res.Finish()
	return res, runErr
}

func scaleParams(o ScaleOptions) *result.ScaleParams {
	var objects []string
	sizes := map[string]string{}
	for _, c := range o.Counts {
		objects = append(objects, fmt.Sprintf("%s=%d", c.Kind.Name, c.N))
		sizes[c.Kind.Name] = c.Kind.Size.String()
	}
	return &result.ScaleParams{
		Objects:      strings.Join(objects, ","),
		ValueSize:    sizes,
		Steps:        o.Steps,
		Clients:      o.Clients,
		Conns:        max(o.Conns, 1),
		Prefix:       o.Prefix,
		UpdateRate:   o.UpdateRate,
		PageLimit:    o.PageLimit,
		Lists:        o.Lists,
		ListInterval: o.ListInterval.Seconds(),
		EventTTL:     o.EventTTL.Seconds(),
		Namespaces:   o.Namespaces,
		RandomState:  o.RandomState,
		Rate:         max(o.Rate, 0),
		TargetParams: loadrun.TargetParams(o.Target),
	}
}
