package pipeline

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/etcdperf/etcdperf/internal/judge"
	"github.com/etcdperf/etcdperf/internal/kubescale"
	"github.com/etcdperf/etcdperf/internal/limits"
	"github.com/etcdperf/etcdperf/internal/result"
)

// namespaceWait bounds the wait for the run's namespace to go at the end
// (Kubernetes' namespace controller removes it once it is empty; a bare
// API server has none).
const namespaceWait = 3 * time.Second

// kubeScale is Scale through a real API server: it grows Kubernetes
// objects step by step, in a namespace of its own, and judges the latency
// of the calls by Kubernetes' SLO with etcd's figures beside. It stops
// after a step that broke the SLO or had failed calls. The namespace and
// its objects are deleted at the end, also when ctx ends midway; an
// interrupted run returns its partial Result with the error.
func kubeScale(ctx context.Context, o kubescale.Options, criteria []limits.Criterion) (res *result.Result, err error) {
	o.Defaults()
	if err := o.Validate(); err != nil {
		return nil, err
	}
	res = result.New(result.KindScale)
	res.Params = o.Params()
	run, kube, err := kubescale.New(ctx, o)
	if err != nil {
		return nil, err
	}
	defer func() {
		if cerr := run.Close(); cerr != nil {
			err = errors.Join(err, cerr)
		}
	}()
	res.Kube = kube
	// Whatever happens from here on, the namespace goes. A cleanup that
	// failed leaves the measurements whole: it is said, and the command
	// fails.
	defer func() {
		note, cerr := run.Cleanup(context.WithoutCancel(ctx), namespaceWait)
		if note != "" {
			kube.Notes = append(kube.Notes, note)
		}
		if cerr != nil {
			err = errors.Join(err, cerr)
			kube.Notes = append(kube.Notes, fmt.Sprintf("the run's objects could not all be deleted (%v): delete them with kubectl delete namespace %s", cerr, kube.Namespace))
		}
	}()
	srv, runErr := run.Measure(ctx, kube, func(st result.KubeStep) string { return judge.KubeStopReason(st, criteria) })
	res.Server = srv
	return finishSteps(res, runErr, len(kube.Steps), criteria)
}
