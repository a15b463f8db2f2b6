package pipeline

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/etcdperf/etcdperf/internal/check"
	"github.com/etcdperf/etcdperf/internal/cluster"
	"github.com/etcdperf/etcdperf/internal/diagnose"
	"github.com/etcdperf/etcdperf/internal/load"
	"github.com/etcdperf/etcdperf/internal/render"
	"github.com/etcdperf/etcdperf/internal/result"
	"github.com/etcdperf/etcdperf/internal/scale"
	"github.com/etcdperf/etcdperf/internal/units"
)

// ScaleOptions configure `etcdperf scale`.
type ScaleOptions struct {
	// Target is the etcd to grow: external endpoints or embedded members.
	Target cluster.TargetOptions
	// Prefix holds every key; default /etcdperf/<run id>/.
	Prefix string
	// Counts are the kinds and how many objects of each the run grows to.
	Counts []scale.Count
	// Steps is the number of steps the objects are written in.
	Steps int
	// Clients write the objects over Conns connections, at Rate puts per
	// second (0: as fast as they can).
	Clients, Conns int
	Rate           float64
	// UpdateRate is the status updates per second made during each step.
	UpdateRate float64
	// PageLimit is the page size of lists; Lists the lists of every
	// resource measured after each step's writes; ListInterval the pause
	// between the background lists made during the writes (0: none).
	PageLimit    int64
	Lists        int
	ListInterval time.Duration
	// EventTTL is the TTL of the leases leased kinds (events) are written
	// with.
	EventTTL time.Duration
	// Namespaces spread the namespaced objects.
	Namespaces int
	// CatchUpTimeout bounds the wait for the watches at the end of a step.
	CatchUpTimeout time.Duration
	// Criteria are the limits the steps and the run are judged by.
	Criteria []check.Criterion
	// Seed makes the objects' names and sizes reproducible; 0 picks one.
	Seed uint64
	// Progress, when not nil, follows the run.
	Progress *ScaleProgress
}

// ScaleProgress follows a scale run from another goroutine.
type ScaleProgress struct {
	// Step is the step under way (0 while etcd starts).
	Step atomic.Int64
	// Puts counts the objects written so far, all steps.
	Puts load.Progress
}

// Defaults of ScaleOptions' zero values.
const (
	DefaultScaleSteps      = 10
	DefaultScaleClients    = 16
	DefaultScaleLists      = 3
	DefaultEventTTL        = time.Minute
	DefaultScaleNamespaces = 100
	DefaultCatchUpTimeout  = 10 * time.Second
)

// DefaultQuota is etcd's default --quota-backend-bytes, for members that
// do not report theirs.
const DefaultQuota = diagnose.DefaultQuota

func (o *ScaleOptions) defaults() {
	if o.Target.RunID == "" {
		o.Target.RunID = NewRunID()
	}
	if o.Prefix == "" {
		o.Prefix = "/etcdperf/" + o.Target.RunID + "/"
	}
	if o.Steps == 0 {
		o.Steps = DefaultScaleSteps
	}
	if o.Clients == 0 {
		o.Clients = DefaultScaleClients
	}
	if o.PageLimit == 0 {
		o.PageLimit = scale.DefaultPageLimit
	}
	if o.EventTTL == 0 {
		o.EventTTL = DefaultEventTTL
	}
	if o.Namespaces == 0 {
		o.Namespaces = DefaultScaleNamespaces
	}
	if o.CatchUpTimeout == 0 {
		o.CatchUpTimeout = DefaultCatchUpTimeout
	}
	if o.Criteria == nil {
		o.Criteria = check.Table
	}
	if o.Seed == 0 {
		o.Seed = uint64(time.Now().UnixNano())
	}
}

// Validate checks the options before anything starts.
func (o *ScaleOptions) Validate() error {
	switch {
	case len(o.Counts) == 0:
		return errors.New("--objects names no object")
	case o.Steps < 1 || o.Steps > 1000:
		return fmt.Errorf("--steps must be between 1 and 1000, got %d", o.Steps)
	case o.Clients < 1:
		return fmt.Errorf("--clients must be at least 1, got %d", o.Clients)
	case o.Conns < 0:
		return fmt.Errorf("--conns must be at least 1, got %d", o.Conns)
	case o.Rate < 0 || o.UpdateRate < 0:
		return errors.New("--rate and --update-rate cannot be negative")
	case o.PageLimit < 0:
		return fmt.Errorf("--page-limit must be at least 1, got %d", o.PageLimit)
	case o.Lists < 0:
		return errors.New("--lists cannot be negative")
	case o.ListInterval < 0:
		return errors.New("--list-interval cannot be negative")
	case o.EventTTL < 0 || (o.EventTTL > 0 && o.EventTTL < 2*time.Second) || o.EventTTL%time.Second != 0:
		return fmt.Errorf("--event-ttl must be whole seconds, at least 2s (etcd's shortest lease with its default election timeout), got %s", o.EventTTL)
	case o.Prefix != "" && !strings.HasSuffix(o.Prefix, "/"):
		return fmt.Errorf("the prefix %q must end in /", o.Prefix)
	}
	for _, c := range o.Counts {
		if int64(o.Steps) > c.N {
			return fmt.Errorf("--steps %d is more than the %d %s: every step writes some of every kind", o.Steps, c.N, c.Kind.Name)
		}
	}
	return nil
}

// Scale grows Kubernetes-shaped data in etcd step by step, with the
// background traffic of a control plane, and records etcd's figures after
// each step. It stops after a step whose figures break a limit or that
// had failed requests. It writes only under its prefix, refuses a prefix
// that has keys, and deletes its keys and leases at the end, also when ctx
// ends midway; an embedded etcd is removed. An interrupted run returns
// its partial Result with the error.
func Scale(ctx context.Context, o ScaleOptions) (res *result.Result, err error) {
	o.defaults()
	if err := o.Validate(); err != nil {
		return nil, err
	}
	res = result.New("scale")
	res.Params = scaleParams(o)

	t, err := cluster.Open(ctx, o.Target)
	if err != nil {
		return nil, err
	}
	defer closeTarget(t, &res, &err)
	res.Env = benchEnv(t, BenchOptions{})
	res.Target = targetSection(t)
	if err := prefixFree(ctx, t.Client(), o.Prefix, o.Target.Conn.User); err != nil {
		return nil, err
	}
	conns, err := openConns(ctx, t, BenchOptions{Conns: max(o.Conns, 1), Load: load.Options{Workload: load.Put}})
	defer closeConns(conns)
	if err != nil {
		return nil, err
	}

	run := newScaleRun(o, t, conns)
	// Whatever happens from here on, the keys and leases go.
	defer func() {
		if cerr := run.cleanup(context.WithoutCancel(ctx)); cerr != nil {
			err = errors.Join(err, cerr)
			if res != nil {
				res.Error = joinErr(res.Error, cerr.Error())
			}
		}
	}()
	sc, srv, runErr := run.run(ctx)
	res.Scale = sc
	res.Server = srv
	if o.Target.KeepData && t.RunDir() != "" {
		sc.Notes = append(sc.Notes, "kept the embedded etcd's data and logs in "+t.RunDir()+" (--keep-data)")
	}
	if runErr != nil {
		res.Error = runErr.Error()
		if errors.Is(runErr, context.Canceled) {
			res.Error = "interrupted"
		}
		if len(sc.Steps) == 0 && !errors.Is(runErr, context.Canceled) {
			return nil, runErr
		}
	}
	JudgeScale(res, o.Criteria)
	res.Finish()
	return res, runErr
}

// cleanup deletes the run's keys (external clusters: an embedded one goes
// as a whole) and revokes its leases.
func (r *scaleRun) cleanup(ctx context.Context) error {
	var errs []error
	if r.t.Kind() == cluster.External {
		if err := deletePaged(ctx, r.cli, r.o.Prefix); err != nil {
			errs = append(errs, err)
		}
	}
	for _, id := range r.leases {
		lctx, cancel := context.WithTimeout(ctx, r.cli.CommandTimeout())
		_, err := r.cli.Revoke(lctx, id)
		cancel()
		if err != nil && !strings.Contains(err.Error(), "requested lease not found") {
			errs = append(errs, fmt.Errorf("revoke the run's lease %x (etcdctl lease revoke %x): %w", int64(id), int64(id), err))
		}
	}
	return errors.Join(errs...)
}

// deletePageKeys bounds one delete of the cleanup: a cluster in use is
// spared one huge delete range.
const deletePageKeys = 5000

// deletePaged deletes every key under prefix a page of keys at a time,
// then the prefix as a whole for what was left.
func deletePaged(ctx context.Context, c *cluster.Client, prefix string) error {
	ctx, cancel := context.WithTimeout(ctx, 4*max(cleanupTimeout, c.CommandTimeout()))
	defer cancel()
	end := load.PrefixEnd(prefix)
	for {
		r, err := c.Get(ctx, prefix, clientv3.WithRange(end), clientv3.WithKeysOnly(), clientv3.WithLimit(deletePageKeys))
		if err != nil {
			return fmt.Errorf("list the run's keys under %s to delete them (delete them with etcdctl del --prefix %s): %w", prefix, prefix, err)
		}
		if len(r.Kvs) == 0 {
			break
		}
		last := string(r.Kvs[len(r.Kvs)-1].Key) + "\x00"
		if _, err := c.Delete(ctx, string(r.Kvs[0].Key), clientv3.WithRange(last)); err != nil {
			return fmt.Errorf("delete the run's keys under %s (delete them with etcdctl del --prefix %s): %w", prefix, prefix, err)
		}
		if !r.More {
			break
		}
	}
	_, err := deleteKeys(ctx, c, prefix, false)
	return err
}

func scaleParams(o ScaleOptions) map[string]any {
	var objects []string
	sizes := map[string]string{}
	for _, c := range o.Counts {
		objects = append(objects, fmt.Sprintf("%s=%d", c.Kind.Name, c.N))
		sizes[c.Kind.Name] = c.Kind.Size.String()
	}
	p := map[string]any{
		"objects":       strings.Join(objects, ","),
		"value_size":    sizes,
		"steps":         o.Steps,
		"clients":       o.Clients,
		"conns":         max(o.Conns, 1),
		"prefix":        o.Prefix,
		"update_rate":   o.UpdateRate,
		"page_limit":    o.PageLimit,
		"lists":         o.Lists,
		"list_interval": o.ListInterval.Seconds(),
		"event_ttl":     o.EventTTL.Seconds(),
		"namespaces":    o.Namespaces,
		"seed":          o.Seed,
	}
	if o.Rate > 0 {
		p["rate"] = o.Rate
	}
	targetParams(p, o.Target)
	return p
}

// JudgeScale adds the checks (the worst step, the disk histograms over the
// whole run), the findings, the verdict and the summary to res.
func JudgeScale(res *result.Result, criteria []check.Criterion) {
	sc := res.Scale
	if sc == nil {
		return
	}
	add := func(ch result.Check, ok bool) {
		if ok {
			res.Checks = append(res.Checks, ch)
		}
	}
	if s := res.Server; s != nil {
		if s.WALFsync != nil && s.WALFsync.Count > 0 {
			ch, ok := evaluate(criteria, check.WALFsyncP99, s.WALFsync.P99)
			ch.Bound = atFloor(s.WALFsync)
			add(ch, ok)
		}
		if s.BackendCommit != nil && s.BackendCommit.Count > 0 {
			ch, ok := evaluate(criteria, check.BackendCommitP99, s.BackendCommit.P99)
			ch.Bound = atFloor(s.BackendCommit)
			add(ch, ok)
		}
	}
	for _, id := range []string{check.PutP99, check.ListAllP99, check.DBQuotaUsed} {
		var worst result.Check
		found := false
		for _, st := range sc.Steps {
			for _, ch := range stepChecks(st, sc.Quota, criteria) {
				if ch.Name == id && (!found || worse(ch, worst)) {
					worst, found = ch, true
				}
			}
		}
		add(worst, found)
	}
	res.Findings = diagnose.Run(res)
	res.Verdict = diagnose.Verdict(res.Checks, res.Findings)
	res.Summary = scaleSummary(res)
}

func evaluate(criteria []check.Criterion, id string, v float64) (result.Check, bool) {
	c, ok := check.Lookup(criteria, id)
	if !ok {
		return result.Check{}, false
	}
	return check.Evaluate(c, v), true
}

// worse reports whether a is further on the wrong side of its limit than b.
func worse(a, b result.Check) bool {
	if a.Op == string(check.AtLeast) {
		return a.Observed < b.Observed
	}
	return a.Observed > b.Observed
}

// stepChecks judges one step: its put p99, its slowest list of a whole
// resource and its database size against the quota.
func stepChecks(st result.ScaleStep, quota float64, criteria []check.Criterion) []result.Check {
	var out []result.Check
	if st.Put != nil && st.Put.Count > 0 {
		if ch, ok := evaluate(criteria, check.PutP99, st.Put.P99); ok {
			out = append(out, ch)
		}
	}
	var slowest float64
	for _, l := range st.Lists {
		if l.Latency != nil && l.Latency.Count > 0 {
			slowest = max(slowest, l.Latency.P99)
		}
	}
	if slowest > 0 {
		if ch, ok := evaluate(criteria, check.ListAllP99, slowest); ok {
			out = append(out, ch)
		}
	}
	if quota <= 0 {
		quota = DefaultQuota
	}
	if st.DBSize > 0 {
		if ch, ok := evaluate(criteria, check.DBQuotaUsed, st.DBSize/quota); ok {
			out = append(out, ch)
		}
	}
	return out
}

// stopReason says why the run must not go on after step st (prev is the
// step before, nil for the first): a limit broken, a failed request, or a
// database that the next step would take past the quota's limit.
func stopReason(st result.ScaleStep, prev *result.ScaleStep, quota float64, criteria []check.Criterion) string {
	at := fmt.Sprintf("at %d objects (step %d)", st.Objects, st.Step)
	if errs := result.ErrorTotal(st.Errors); errs > 0 {
		top, n := "", int64(0)
		for k, v := range st.Errors {
			if v > n || (v == n && k < top) {
				top, n = k, v
			}
		}
		return fmt.Sprintf("%d requests failed %s, most with %q", errs, at, top)
	}
	for _, ch := range stepChecks(st, quota, criteria) {
		if ch.Status == result.StatusFail {
			return fmt.Sprintf("%s %s %s is over its limit (%s %s)", ch.Title, render.FormatValue(ch.Observed, ch.Unit), at, ch.Op, render.FormatValue(ch.Limit, ch.Unit))
		}
	}
	if quota <= 0 {
		quota = DefaultQuota
	}
	if c, ok := check.Lookup(criteria, check.DBQuotaUsed); ok && prev != nil && st.DBSize > prev.DBSize {
		next := st.DBSize + (st.DBSize - prev.DBSize)
		if next/quota >= c.Limit {
			return fmt.Sprintf("the next step would take the database to %s, %.0f%% of the quota %s %s (limit %s %.0f%%)",
				units.Bytes(next), 100*next/quota, units.Bytes(quota), at, c.Op, 100*c.Limit)
		}
	}
	return ""
}

func scaleSummary(res *result.Result) string {
	sc := res.Scale
	if len(sc.Steps) == 0 {
		return "no step completed."
	}
	last := sc.Steps[len(sc.Steps)-1]
	var s strings.Builder
	fmt.Fprintf(&s, "%d objects in %d of %d steps (%s): db %s", last.Objects, len(sc.Steps), sc.Planned, units.Seconds(sc.Seconds), units.Bytes(last.DBSize))
	if last.RSS > 0 {
		fmt.Fprintf(&s, ", etcd RSS %s", units.Bytes(last.RSS))
	}
	if last.Put != nil && last.Put.Count > 0 {
		fmt.Fprintf(&s, ", put p99 %s", units.Seconds(last.Put.P99))
	}
	for _, l := range last.Lists {
		if l.Latency != nil && l.Latency.Count > 0 {
			fmt.Fprintf(&s, ", list %s %s", l.Kind, units.Seconds(l.Latency.P50))
		}
	}
	if last.WatchLag != nil && last.WatchLag.Count > 0 {
		fmt.Fprintf(&s, ", watch lag p99 %s", units.Seconds(last.WatchLag.P99))
	}
	if sc.Stopped != "" {
		fmt.Fprintf(&s, "; stopped: %s", sc.Stopped)
	} else {
		// A check over the whole run (etcd's WAL fsync, backend commit)
		// fails the verdict without stopping a step: say which.
		s.WriteString(overLimits(res.Checks))
	}
	s.WriteString(".")
	return s.String()
}

// inProcess reports whether an embedded member shares this process.
func inProcess(m cluster.Member) bool { return m.PID == os.Getpid() }
