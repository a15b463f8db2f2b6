package kubescale

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/flowcontrol"

	"github.com/etcdperf/etcdperf/internal/cluster"
	"github.com/etcdperf/etcdperf/internal/lab"
	"github.com/etcdperf/etcdperf/internal/memberwatch"
	"github.com/etcdperf/etcdperf/internal/promscrape"
	"github.com/etcdperf/etcdperf/internal/result"
)

// Progress follows a run from another goroutine.
type Progress struct {
	// Step is the step under way (0 while connecting).
	Step atomic.Int64
	// Created counts the objects created so far, all steps.
	Created atomic.Int64
}

// StopFunc says why a run stops after a step ("" to go on): the judge's
// reading of the step, passed in so that measuring stays apart from
// judging.
type StopFunc func(st result.KubeStep) string

// Run is one density run through an API server.
type Run struct {
	o     Options
	cfg   *rest.Config
	cs    *kubernetes.Clientset
	res   map[string]resourceCalls // the calls of each resource in the namespace
	httpc *http.Client             // the API server's /metrics, authenticated as cs
	calls *calls
	mu    sync.Mutex // guards created
	// created counts the objects of each resource created; next is the
	// number of the next one (a failed creation leaves a gap).
	created, next map[string]int64
	// leases holds the last answer to each lease's renewal.
	leases map[string]*coordinationv1.Lease
	nsMade bool
	rnd    *rand.Rand
	// etcd, when the run was given its endpoints.
	etcd    *lab.Target
	members []cluster.Member
	etcdc   *http.Client
}

// connectTimeout bounds the first call to the API server (its version,
// which does not read etcd).
const connectTimeout = 15 * time.Second

// New connects to the API server (and etcd when o names it) and checks
// that the run's namespace does not exist. Nothing is created yet.
func New(ctx context.Context, o Options) (*Run, *result.Kube, error) {
	cfg, err := o.Conn.restConfig(&o)
	if err != nil {
		return nil, nil, err
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, nil, fmt.Errorf("API server %s: %w", cfg.Host, err)
	}
	httpc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, nil, fmt.Errorf("API server %s: %w", cfg.Host, err)
	}
	r := &Run{o: o, cfg: cfg, cs: cs, httpc: httpc, res: resources(cs, o.Namespace), created: map[string]int64{}, next: map[string]int64{}, leases: map[string]*coordinationv1.Lease{},
		calls: newCalls(flowcontrol.NewTokenBucketRateLimiter(float32(o.QPS), o.Burst)),
		rnd:   rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 1))}
	kube := &result.Kube{Server: cfg.Host, Namespace: o.Namespace, QPS: o.QPS, Burst: o.Burst, Clients: o.Clients, Planned: o.Steps}
	for _, c := range o.Counts {
		if _, ok := r.res[c.Resource]; !ok {
			return nil, nil, fmt.Errorf("%q cannot be grown through the API server", c.Resource)
		}
		kube.Kinds = append(kube.Kinds, result.KubeKind{Resource: c.Resource, Target: c.N})
	}
	vcfg := rest.CopyConfig(cfg)
	vcfg.Timeout = connectTimeout
	vcs, err := kubernetes.NewForConfig(vcfg)
	if err != nil {
		return nil, nil, fmt.Errorf("API server %s: %w", cfg.Host, err)
	}
	v, err := vcs.Discovery().ServerVersion()
	if err != nil {
		return nil, nil, fmt.Errorf("reach the API server at %s: %w", cfg.Host, err)
	}
	kube.Version = v.GitVersion
	// A read of etcd: as slow as etcd is (the call timeout bounds it).
	switch _, err := cs.CoreV1().Namespaces().Get(ctx, o.Namespace, metav1.GetOptions{}); {
	case err == nil:
		return nil, nil, fmt.Errorf("namespace %s exists on %s: the run needs a namespace of its own", o.Namespace, cfg.Host)
	case !apierrors.IsNotFound(err):
		return nil, nil, fmt.Errorf("read namespace %s on %s: %w", o.Namespace, cfg.Host, err)
	}
	if len(o.Etcd.Conn.Endpoints) > 0 {
		t, err := lab.Open(ctx, o.Etcd)
		if err != nil {
			return nil, nil, err
		}
		r.etcd, r.members, r.etcdc = t, t.Members(), t.Client().HTTPClient()
		sort.Slice(r.members, func(i, j int) bool { return r.members[i].Name < r.members[j].Name })
	}
	return r, kube, nil
}

// Close closes the connection to etcd.
func (r *Run) Close() error {
	if r.etcd != nil {
		return r.etcd.Close()
	}
	return nil
}

// Measure makes the namespace and the steps until the last, a stop, or
// the end of ctx, and fills kube. It returns etcd's server section over
// the whole run when the run reads etcd.
func (r *Run) Measure(ctx context.Context, kube *result.Kube, stop StopFunc) (*result.Server, error) {
	o := r.o
	if err := r.makeNamespace(ctx); err != nil {
		return nil, err
	}
	var watchEvents atomic.Int64
	wctx, stopWatches := context.WithCancel(ctx)
	var wwg sync.WaitGroup
	defer func() { stopWatches(); wwg.Wait() }()
	for _, res := range []string{"pods", "leases"} {
		if r.target(res) == 0 {
			continue
		}
		wwg.Add(1)
		go func() { defer wwg.Done(); r.watch(wctx, res, &watchEvents) }()
	}

	before, err := r.scrapeAPIServer(ctx)
	if err != nil {
		kube.Notes = append(kube.Notes, "the API server's /metrics could not be read ("+err.Error()+"): the latencies are etcdperf's own, not the API server's histograms")
	}
	kube.ServerMetrics = err == nil
	var win *memberwatch.Window
	if r.etcd != nil {
		win = memberwatch.Start(ctx, r.etcdc, r.members, memberwatch.Options{})
	}
	start := time.Now()
	var runErr error
	for s := 1; s <= o.Steps; s++ {
		if o.Progress != nil {
			o.Progress.Step.Store(int64(s))
		}
		t0 := time.Now()
		r.step(ctx, s)
		if ctx.Err() != nil {
			runErr = ctx.Err()
			break
		}
		st := result.KubeStep{Step: s, T: time.Since(start).Seconds(), Seconds: time.Since(t0).Seconds(),
			Calls: r.calls.take(), WatchEvents: watchEvents.Swap(0)}
		for _, n := range r.created {
			st.Objects += n
		}
		if kube.ServerMetrics {
			if after, err := r.scrapeAPIServer(ctx); err == nil {
				serverLatencies(&st, before, after)
				before = after
			}
		}
		if win != nil {
			etcdFigures(&st, win.Mark(ctx))
		}
		kube.Steps = append(kube.Steps, st)
		if why := stop(st); why != "" {
			if s < o.Steps {
				kube.Stopped = why
			}
			break
		}
	}
	kube.Seconds = time.Since(start).Seconds()
	if r.etcd == nil {
		kube.Notes = append(kube.Notes, "etcd's own figures (WAL fsync, backend commit) were not read: give etcd's --endpoints to see whether etcd explains the API server's latency")
		return nil, runErr
	}
	// etcd's window ends at the last step's scrape.
	obs := win.End()
	kube.Notes = append(kube.Notes, obs.Notes...)
	return obs.Server, runErr
}

func (r *Run) target(res string) int64 {
	for _, c := range r.o.Counts {
		if c.Resource == res {
			return c.N
		}
	}
	return 0
}

// makeNamespace creates the run's namespace and makes sure its default
// service account exists (the API server's admission wants it for pods;
// the controller manager makes it, but a bare API server has none).
func (r *Run) makeNamespace(ctx context.Context) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: r.o.Namespace, Labels: map[string]string{label: "etcdperf"}}}
	// A create that timed out may have been made: from then on the
	// namespace is the run's to delete, and a retry finds it.
	err := retry(ctx, func(ctx context.Context) error {
		_, err := r.cs.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{})
		switch {
		case err == nil || (r.nsMade && apierrors.IsAlreadyExists(err)):
			r.nsMade = true
			return nil
		case apierrors.IsAlreadyExists(err):
			// Made by someone else since New looked: not the run's.
			return fmt.Errorf("namespace %s exists: the run needs a namespace of its own", r.o.Namespace)
		}
		r.nsMade = r.nsMade || transient(err)
		return err
	})
	if err != nil {
		return fmt.Errorf("create namespace %s: %w", r.o.Namespace, err)
	}
	if r.target("pods") == 0 {
		return nil
	}
	deadline := time.Now().Add(3 * time.Second)
	for {
		_, err := r.cs.CoreV1().ServiceAccounts(r.o.Namespace).Get(ctx, "default", metav1.GetOptions{})
		if err == nil {
			return nil
		}
		if !apierrors.IsNotFound(err) && !transient(err) {
			return fmt.Errorf("read the default service account of %s: %w", r.o.Namespace, err)
		}
		if time.Now().After(deadline) {
			break
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}
	err = retry(ctx, func(ctx context.Context) error {
		_, err := r.cs.CoreV1().ServiceAccounts(r.o.Namespace).Create(ctx, sa, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			return nil
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("create the default service account of %s: %w", r.o.Namespace, err)
	}
	return nil
}

// step creates step s's share of every resource with the background
// traffic running, then reads objects one by one and lists every resource.
func (r *Run) step(ctx context.Context, s int) {
	o := r.o
	type job struct {
		res string
		i   int64
	}
	var jobs []job
	for _, c := range o.Counts {
		upTo := c.N * int64(s) / int64(o.Steps)
		for i := r.next[c.Resource]; i < upTo; i++ {
			jobs = append(jobs, job{c.Resource, i})
		}
		r.mu.Lock()
		r.next[c.Resource] = max(r.next[c.Resource], upTo)
		r.mu.Unlock()
	}
	// Interleaved, as a cluster's objects come.
	r.rnd.Shuffle(len(jobs), func(i, j int) { jobs[i], jobs[j] = jobs[j], jobs[i] })

	bgctx, stopBackground := context.WithCancel(ctx)
	var bg sync.WaitGroup
	r.background(bgctx, &bg)

	ch := make(chan job)
	var wg sync.WaitGroup
	for range o.Clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range ch {
				if r.create(ctx, j.res, j.i) == nil {
					r.mu.Lock()
					r.created[j.res]++
					r.mu.Unlock()
					if o.Progress != nil {
						o.Progress.Created.Add(1)
					}
				}
			}
		}()
	}
feed:
	for _, j := range jobs {
		select {
		case ch <- j:
		case <-ctx.Done():
			break feed
		}
	}
	close(ch)
	wg.Wait()
	stopBackground()
	bg.Wait()
	if ctx.Err() != nil {
		return
	}
	r.reads(ctx)
}

// create makes object i of res. Objects are numbered from 0 in each
// resource; a failed creation leaves a gap that later reads skip.
func (r *Run) create(ctx context.Context, res string, i int64) error {
	return r.calls.do(ctx, callKey{res, "POST", ScopeResource}, func(ctx context.Context) error {
		return r.res[res].create(ctx, name(res, i), time.Now())
	})
}

// some returns the number of an object of res created so far, -1 when
// there is none. It may fall in a gap that a failed creation left.
func (r *Run) some(res string, rnd *rand.Rand) int64 {
	r.mu.Lock()
	n, made := r.next[res], r.created[res]
	r.mu.Unlock()
	if made == 0 {
		return -1
	}
	return rnd.Int64N(n)
}

func (r *Run) createdOf(res string) int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.created[res]
}

// background runs a control plane's traffic until ctx ends: kubelets'
// pod status updates (--update-rate) and node lease renewals (each lease
// every LeaseRenew), and a controller's paged list of the pods every
// ListInterval.
func (r *Run) background(ctx context.Context, wg *sync.WaitGroup) {
	o := r.o
	ns := o.Namespace
	every := func(interval time.Duration, f func(rnd *rand.Rand)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rnd := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 2))
			t := time.NewTicker(interval)
			defer t.Stop()
			for {
				select {
				case <-ctx.Done():
					return
				case <-t.C:
					f(rnd)
				}
			}
		}()
	}
	if o.UpdateRate > 0 && r.target("pods") > 0 {
		every(time.Duration(float64(time.Second)/o.UpdateRate), func(rnd *rand.Rand) {
			i := r.some("pods", rnd)
			if i < 0 {
				return
			}
			patch := fmt.Sprintf(`{"status":{"conditions":[{"type":"PodScheduled","status":"False","reason":"Unschedulable","lastProbeTime":%q,"message":"etcdperf density test"}]}}`,
				time.Now().UTC().Format(time.RFC3339))
			_ = r.calls.do(ctx, callKey{"pods/status", "PATCH", ScopeResource}, func(ctx context.Context) error {
				_, err := r.cs.CoreV1().Pods(ns).Patch(ctx, name("pods", i), types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{}, "status")
				return ignoreGap(err)
			})
		})
	}
	if n := r.createdOf("leases"); n > 0 {
		next := int64(0)
		every(max(o.LeaseRenew/time.Duration(n), time.Millisecond), func(*rand.Rand) {
			i := next % n
			next++
			r.renewLease(ctx, name("leases", i))
		})
	}
	if o.ListInterval > 0 && r.target("pods") > 0 {
		every(o.ListInterval, func(*rand.Rand) { r.list(ctx, "pods") })
	}
}

// renewLease renews a lease as a kubelet renews its node's: an update of
// the copy it holds (its last answer), read first when it holds none or
// its copy was stale.
func (r *Run) renewLease(ctx context.Context, n string) {
	leases := r.cs.CoordinationV1().Leases(r.o.Namespace)
	r.mu.Lock()
	l := r.leases[n]
	r.mu.Unlock()
	if l == nil {
		err := r.calls.do(ctx, callKey{"leases", "GET", ScopeResource}, func(ctx context.Context) error {
			var err error
			l, err = leases.Get(ctx, n, metav1.GetOptions{})
			return ignoreGap(err)
		})
		if err != nil || l == nil {
			return
		}
	}
	l = l.DeepCopy()
	now := metav1.NewMicroTime(time.Now())
	l.Spec.RenewTime = &now
	var renewed *coordinationv1.Lease
	_ = r.calls.do(ctx, callKey{"leases", "PUT", ScopeResource}, func(ctx context.Context) error {
		var err error
		renewed, err = leases.Update(ctx, l, metav1.UpdateOptions{})
		if apierrors.IsConflict(err) {
			return nil // a stale copy: read again next time, as a kubelet does
		}
		return err
	})
	r.mu.Lock()
	r.leases[n] = renewed
	r.mu.Unlock()
}

// ignoreGap drops the NotFound of an object whose creation failed.
func ignoreGap(err error) error {
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// reads gets Gets objects of each resource one by one, then lists each
// resource whole Lists times.
func (r *Run) reads(ctx context.Context) {
	for _, c := range r.o.Counts {
		for range r.o.Gets {
			i := r.some(c.Resource, r.rnd)
			if i < 0 {
				break
			}
			_ = r.calls.do(ctx, callKey{c.Resource, "GET", ScopeResource}, func(ctx context.Context) error {
				return ignoreGap(r.res[c.Resource].get(ctx, name(c.Resource, i)))
			})
		}
		for range r.o.Lists {
			r.list(ctx, c.Resource)
		}
	}
}

// list lists res in the namespace whole, page by page (each page is one
// LIST call of namespace scope).
func (r *Run) list(ctx context.Context, res string) {
	opts := metav1.ListOptions{Limit: r.o.PageLimit}
	for {
		var cont string
		err := r.calls.do(ctx, callKey{res, "LIST", ScopeNamespace}, func(ctx context.Context) error {
			var err error
			_, cont, err = r.res[res].list(ctx, opts)
			return err
		})
		if err != nil || cont == "" {
			return
		}
		opts.Continue = cont
	}
}

// watch counts the events of res in the namespace until ctx ends,
// watching again when the API server closes the watch.
func (r *Run) watch(ctx context.Context, res string, events *atomic.Int64) {
	for ctx.Err() == nil {
		w, err := r.res[res].watch(ctx)
		if err != nil {
			select {
			case <-ctx.Done():
				return
			case <-time.After(time.Second):
				continue
			}
		}
		for range w.ResultChan() {
			events.Add(1)
		}
		w.Stop()
	}
}

// Cleanup deletes the run's objects one by one (concurrently, each call
// retried: a delete-collection is one call that a slow etcd makes longer
// than the API server lets a call run), then its namespace, and waits up
// to wait for the namespace to go. It returns a note when the namespace
// is still being deleted (the namespace controller finishes that).
func (r *Run) Cleanup(ctx context.Context, wait time.Duration) (string, error) {
	if !r.nsMade {
		return "", nil
	}
	ctx, cancel := context.WithTimeout(ctx, cleanupTimeout)
	defer cancel()
	ns := r.o.Namespace
	var errs []error
	for _, c := range r.o.Counts {
		if err := r.deleteAll(ctx, c.Resource); err != nil {
			errs = append(errs, fmt.Errorf("delete the %s of namespace %s: %w", c.Resource, ns, err))
		}
	}
	err := retry(ctx, func(ctx context.Context) error {
		// Conflict: a delete that timed out was made; it is under way.
		if err := r.cs.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			return err
		}
		return nil
	})
	if err != nil {
		return "", errors.Join(append(errs, fmt.Errorf("delete namespace %s: %w", ns, err))...)
	}
	deadline := time.Now().Add(wait)
	for {
		if _, err := r.cs.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{}); apierrors.IsNotFound(err) {
			return "", errors.Join(errs...)
		}
		if !time.Now().Before(deadline) {
			break
		}
		time.Sleep(250 * time.Millisecond)
	}
	if len(errs) > 0 {
		return "", errors.Join(errs...)
	}
	return fmt.Sprintf("namespace %s is being deleted: its objects are gone, and Kubernetes' namespace controller removes it (kubectl get namespace %s)",
		ns, ns), nil
}

// deleteAll deletes every object of res the run made, Clients at a time.
func (r *Run) deleteAll(ctx context.Context, res string) error {
	var names []string
	err := retry(ctx, func(ctx context.Context) error {
		var err error
		names, err = r.names(ctx, res)
		return err
	})
	if err != nil {
		return err
	}
	ch := make(chan string)
	var mu sync.Mutex
	var errs []error
	var wg sync.WaitGroup
	for range min(r.o.Clients, len(names)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := range ch {
				if err := retry(ctx, func(ctx context.Context) error { return ignoreGap(r.deleteObject(ctx, res, n)) }); err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
				}
			}
		}()
	}
	for _, n := range names {
		ch <- n
	}
	close(ch)
	wg.Wait()
	if len(errs) > 0 {
		return fmt.Errorf("%d of %d left: %w", len(errs), len(names), errs[0])
	}
	return nil
}

// names lists the names of the run's objects of res, page by page.
func (r *Run) names(ctx context.Context, res string) ([]string, error) {
	opts := metav1.ListOptions{LabelSelector: label + "=etcdperf", Limit: r.o.PageLimit}
	var out []string
	for {
		page, cont, err := r.res[res].list(ctx, opts)
		if err != nil {
			return nil, err
		}
		out = append(out, page...)
		if opts.Continue = cont; cont == "" {
			return out, nil
		}
	}
}

// deleteObject deletes one object of res (a pod at once: nothing runs it).
func (r *Run) deleteObject(ctx context.Context, res, n string) error {
	var opts metav1.DeleteOptions
	if res == "pods" {
		zero := int64(0)
		opts.GracePeriodSeconds = &zero
	}
	return r.res[res].delete(ctx, n, opts)
}

// names of a run's call keys as the API server's metrics label them.
func labelsOf(k result.KubeCall) promscrape.Labels {
	res, sub, _ := strings.Cut(k.Resource, "/")
	return promscrape.Labels{"verb": k.Verb, "resource": res, "subresource": sub, "scope": k.Scope}
}

// cleanupTimeout bounds the deletion of a run's objects and namespace.
const cleanupTimeout = 10 * time.Minute

// Retries of the calls that set a run up and clean it up: a slow etcd
// makes the API server answer with a timeout now and then, and these calls
// must be made all the same.
const (
	retries    = 5
	retryPause = time.Second
)

// retry makes f until it succeeds, fails for good, or has failed retries
// times with an error worth another try.
func retry(ctx context.Context, f func(ctx context.Context) error) error {
	var err error
	for range retries {
		if err = f(ctx); err == nil || !transient(err) {
			return err
		}
		select {
		case <-ctx.Done():
			return errors.Join(err, ctx.Err())
		case <-time.After(retryPause):
		}
	}
	return err
}

// transient says whether a call that failed with err may succeed when
// made again: the API server timed out (waiting for etcd), was busy, or
// failed inside.
func transient(err error) bool {
	var st apierrors.APIStatus
	if !errors.As(err, &st) {
		// No answer: the connection or the stream broke, or the client
		// gave up (a call the API server cut at its own timeout).
		return !errors.Is(err, context.Canceled)
	}
	return apierrors.IsTimeout(err) || apierrors.IsServerTimeout(err) || apierrors.IsTooManyRequests(err) ||
		apierrors.IsServiceUnavailable(err) || apierrors.IsInternalError(err) || apierrors.IsUnexpectedServerError(err)
}
