package scale

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/etcdperf/etcdperf/internal/cluster"
	"github.com/etcdperf/etcdperf/internal/hist"
	"github.com/etcdperf/etcdperf/internal/lab"
	"github.com/etcdperf/etcdperf/internal/load"
	"github.com/etcdperf/etcdperf/internal/memberwatch"
	"github.com/etcdperf/etcdperf/internal/promscrape"
	"github.com/etcdperf/etcdperf/internal/result"
)

// Options configure `etcdperf scale`.
type Options struct {
	// Target is the etcd to grow: external endpoints or embedded members.
	Target lab.TargetOptions
	// Prefix holds every key; default /etcdperf/<run id>/.
	Prefix string
	// Counts are the kinds and how many objects of each the run grows to.
	Counts []Count
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
	// RandomState makes the objects' names and sizes reproducible; 0 picks one.
	RandomState uint64
	// Progress, when not nil, follows the run.
	Progress *Progress
}

// Progress follows a scale run from another goroutine.
type Progress struct {
	// Step is the step under way (0 while etcd starts).
	Step atomic.Int64
	// Puts counts the objects written so far, all steps.
	Puts load.Progress
}

// Defaults of Options' zero values.
const (
	DefaultSteps          = 10
	DefaultClients        = 16
	DefaultLists          = 3
	DefaultEventTTL       = time.Minute
	DefaultNamespaces     = 100
	DefaultCatchUpTimeout = 10 * time.Second
)

// Defaults fills the zero values of o.
func (o *Options) Defaults() {
	if o.Target.RunID == "" {
		o.Target.RunID = cluster.NewRunID()
	}
	if o.Prefix == "" {
		o.Prefix = "/etcdperf/" + o.Target.RunID + "/"
	}
	if o.Steps == 0 {
		o.Steps = DefaultSteps
	}
	if o.Clients == 0 {
		o.Clients = DefaultClients
	}
	if o.PageLimit == 0 {
		o.PageLimit = DefaultPageLimit
	}
	if o.EventTTL == 0 {
		o.EventTTL = DefaultEventTTL
	}
	if o.Namespaces == 0 {
		o.Namespaces = DefaultNamespaces
	}
	if o.CatchUpTimeout == 0 {
		o.CatchUpTimeout = DefaultCatchUpTimeout
	}
	if o.RandomState == 0 {
		o.RandomState = uint64(time.Now().UnixNano())
	}
}

// Validate checks the options before anything starts.
func (o *Options) Validate() error {
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

// Run is one density run under way: its objects, leases and members.
type Run struct {
	o       Options
	t       *lab.Target
	cli     *cluster.Client
	conns   []load.Conn
	objs    *Objects
	httpc   *http.Client
	members []cluster.Member
	mu      sync.Mutex // guards leases
	leases  []clientv3.LeaseID
}

// NewRun prepares a run of o on target t over conns (load.Dial).
func NewRun(o Options, t *lab.Target, conns []load.Conn) *Run {
	members := t.Members()
	sort.Slice(members, func(i, j int) bool { return members[i].Name < members[j].Name })
	return &Run{o: o, t: t, cli: t.Client(), conns: conns,
		objs:  NewObjects(o.Prefix, o.Counts, o.Namespaces, o.RandomState),
		httpc: t.Client().HTTPClient(), members: members}
}

// pendingInterval is how often etcd's proposals pending is read while a
// step writes.
const pendingInterval = 200 * time.Millisecond

// meanSample bounds the objects whose sizes make a kind's mean value size.
const meanSample = 10000

// StopFunc says why a run stops after step st ("" to go on); prev is the
// step before it (nil after the first) and quota etcd's backend quota in
// bytes (0: not known). It is the judge's reading of the step, passed in
// so that measuring stays apart from judging.
type StopFunc func(st result.ScaleStep, prev *result.ScaleStep, quota float64) string

// Measure makes the steps until the last, a stop, or the end of ctx. It
// returns the scale section, and the server section over the whole run.
func (r *Run) Measure(ctx context.Context, stop StopFunc) (*result.Scale, *result.Server, error) {
	o := r.o
	sc := &result.Scale{Planned: o.Steps}
	var prefixes []string
	for k, c := range o.Counts {
		sk := result.ScaleKind{Name: c.Kind.Name, Target: c.N, Prefix: r.objs.KindPrefix(k), ValueSize: c.Kind.Size.String()}
		var sum float64
		n := min(c.N, meanSample)
		for i := range n {
			sum += float64(r.objs.Size(k, i))
		}
		sk.MeanValueSize = sum / float64(n)
		if c.Kind.Leased {
			sk.LeaseTTL = o.EventTTL.Seconds()
		}
		sc.Kinds = append(sc.Kinds, sk)
		prefixes = append(prefixes, sk.Prefix)
	}
	var logFiles []string
	for _, m := range r.members {
		if m.LogFile != "" {
			logFiles = append(logFiles, m.LogFile)
		}
		if r.t.Kind() == lab.Embedded && inProcess(m) {
			sc.Notes = append(sc.Notes, "the embedded member runs inside etcdperf: its RSS includes etcdperf's own memory")
		}
	}
	logs := NewLogTail(logFiles)
	if len(logFiles) == 0 {
		sc.Notes = append(sc.Notes, "the members' logs are not at hand (external cluster): log warnings are not counted; slow applies come from etcd_server_slow_apply_total")
	}
	watches, err := StartWatches(ctx, r.cli.Client, prefixes)
	if err != nil {
		return sc, nil, err
	}
	defer watches.Close()

	win := memberwatch.Start(ctx, r.httpc, r.members, memberwatch.Options{})
	start := time.Now()
	var runErr error
	for s := 1; s <= o.Steps; s++ {
		if o.Progress != nil {
			o.Progress.Step.Store(int64(s))
		}
		st, after, err := r.step(ctx, s, start, win, watches, logs)
		if st != nil {
			sc.Steps = append(sc.Steps, *st)
			if q := quotaOf(after); q > 0 {
				sc.Quota = q
			}
		}
		if err != nil {
			runErr = err
			break
		}
		var before *result.ScaleStep
		if len(sc.Steps) > 1 {
			before = &sc.Steps[len(sc.Steps)-2]
		}
		if why := stop(*st, before, sc.Quota); why != "" {
			if s < o.Steps {
				sc.Stopped = why
			}
			break
		}
	}
	sc.Seconds = time.Since(start).Seconds()
	// The run's window ends at the last step's scrape.
	obs := win.End()
	sc.Notes = append(sc.Notes, obs.Notes...)
	return sc, obs.Server, runErr
}

// step writes step s's objects with the background traffic, lists every
// resource, and reads etcd's figures. It returns the step (nil when it
// could not be measured) and the members' scrapes after it, which mark the
// step in win.
func (r *Run) step(ctx context.Context, s int, runStart time.Time, win *memberwatch.Window, watches *Watches, logs *LogTail) (*result.ScaleStep, []promscrape.MemberScrape, error) {
	o := r.o
	t0 := time.Now()
	errs := &errCounts{m: map[string]int64{}}
	var lease atomic.Int64
	if r.leased() {
		id, err := r.grant(ctx)
		if err != nil {
			return nil, nil, fmt.Errorf("grant a lease for step %d's events: %w", s, err)
		}
		lease.Store(int64(id))
	}
	bg := r.startBackground(ctx, s, &lease, errs)
	defer bg.stop()

	// The step's objects.
	batch := NewBatch(o.Counts, o.Steps, s)
	lo := load.Options{Workload: load.Put, Prefix: o.Prefix, Clients: o.Clients, Total: batch.Len(), Rate: o.Rate,
		CommandTimeout: r.cli.CommandTimeout(), Objects: func(i int64, req *pb.PutRequest) {
			k, idx := batch.At(i)
			var l int64
			if o.Counts[k].Kind.Leased {
				l = lease.Load()
			}
			r.objs.Put(req, k, idx, l)
		}}
	if o.Progress != nil {
		lo.Progress = &o.Progress.Puts
	}
	grown, err := load.Run(ctx, r.conns, lo)
	if err != nil {
		return nil, nil, err
	}
	lists, err := r.lists(ctx, errs)
	if err != nil {
		return nil, nil, err
	}
	updates, pending := bg.stop()

	// The watches have seen everything written by now.
	rev, err := r.revision(ctx)
	if err != nil {
		return nil, nil, err
	}
	if !watches.CatchUp(ctx, rev, o.CatchUpTimeout) && ctx.Err() == nil {
		errs.add(fmt.Sprintf("watch: the events up to revision %d did not arrive within %s", rev, o.CatchUpTimeout), 1)
	}
	if ctx.Err() != nil {
		return nil, nil, ctx.Err()
	}
	lag, events, werrs := watches.Take()
	mark := win.Mark(ctx)
	after := mark.After

	st := &result.ScaleStep{Step: s, T: time.Since(runStart).Seconds(), Seconds: time.Since(t0).Seconds(),
		Kinds: map[string]int64{}, Written: grown.Ops, Lists: lists, WatchEvents: events}
	for k, c := range o.Counts {
		n, err := r.cli.CountKeys(ctx, r.objs.KindPrefix(k))
		if err != nil {
			return nil, nil, fmt.Errorf("count the %s: %w", c.Kind.Name, err)
		}
		st.Kinds[c.Kind.Name] = n
		st.Objects += n
	}
	st.Put = histLatency(grown.Latency)
	errs.merge("put: ", grown.Errors)
	if updates != nil {
		st.Updates, st.Update = updates.Ops, histLatency(updates.Latency)
		errs.merge("update: ", updates.Errors)
	}
	st.WatchLag = histLatency(lag)
	errs.merge("", werrs)
	if len(errs.m) > 0 {
		st.Errors = errs.m
	}
	st.ProposalsPending = pending.most
	serverFigures(st, mark, pending.byMember)
	if w, err := logs.Count(); err != nil {
		return st, after, err
	} else if len(w) > 0 {
		st.LogWarnings = w
	}
	return st, after, nil
}

func histLatency(h *hist.Histogram) *result.Latency {
	if h == nil || h.Count() == 0 {
		return nil
	}
	l := h.Latency(false)
	return &l
}

// errCounts counts a step's failures by reason, from several goroutines.
type errCounts struct {
	mu sync.Mutex
	m  map[string]int64
}

func (e *errCounts) add(key string, n int64) {
	e.mu.Lock()
	e.m[key] += n
	e.mu.Unlock()
}

func (e *errCounts) merge(prefix string, m map[string]int64) {
	for k, v := range m {
		e.add(prefix+k, v)
	}
}

func (r *Run) leased() bool {
	for _, c := range r.o.Counts {
		if c.Kind.Leased {
			return true
		}
	}
	return false
}

// pendingMax is the most proposals pending seen, over the members and per
// member.
type pendingMax struct {
	most     float64
	byMember map[string]float64
}

// background is the traffic a control plane makes besides the step's
// creations: status updates, proposals pending read, event leases
// renewed, and lists of each resource, until stop.
type background struct {
	cancel  context.CancelFunc
	end     chan struct{}
	once    sync.Once
	wg      sync.WaitGroup
	updates *load.Stats
	mu      sync.Mutex
	pending pendingMax
}

func (r *Run) startBackground(ctx context.Context, s int, lease *atomic.Int64, errs *errCounts) *background {
	o := r.o
	bgctx, cancel := context.WithCancel(ctx)
	b := &background{cancel: cancel, end: make(chan struct{}), pending: pendingMax{byMember: map[string]float64{}}}
	// The updates end gracefully (Stop): a cancelled put would count as a
	// failed proposal in etcd's metrics.
	if upd := NewUpdates(o.Counts, o.Steps, s, o.RandomState); o.UpdateRate > 0 && upd.Len() > 0 {
		b.wg.Add(1)
		go func() {
			defer b.wg.Done()
			b.updates, _ = load.Run(ctx, r.conns, load.Options{Workload: load.Put, Prefix: o.Prefix, Stop: b.end,
				Clients: min(16, max(2, int(o.UpdateRate/50))), Rate: o.UpdateRate, Duration: 24 * time.Hour,
				CommandTimeout: r.cli.CommandTimeout(), Objects: func(i int64, req *pb.PutRequest) {
					k, idx := upd.At(i)
					r.objs.Put(req, k, idx, 0)
				}})
		}()
	}
	b.wg.Add(1)
	go func() {
		defer b.wg.Done()
		memberwatch.Watch(bgctx, r.httpc, r.members, memberwatch.WatchOptions{Interval: pendingInterval, SkipLate: true}, func(t memberwatch.Tick) bool {
			b.mu.Lock()
			defer b.mu.Unlock()
			for _, m := range t.Mark.After {
				if m.Err != nil {
					continue
				}
				v := m.Snap.EtcdSignals().Values["proposals_pending"]
				b.pending.most = max(b.pending.most, v)
				b.pending.byMember[m.Member.Name] = max(b.pending.byMember[m.Member.Name], v)
			}
			return true
		})
	}()
	if r.leased() {
		// A new lease every quarter TTL, as the API server reuses one for a
		// short while: an event lives from 3/4 of the TTL to the TTL, and
		// no put goes out with a lease that has expired.
		every(bgctx, &b.wg, o.EventTTL/4, func() {
			id, err := r.grant(bgctx)
			if err != nil {
				if bgctx.Err() == nil {
					errs.add("lease grant: "+load.ErrorKey(err), 1)
				}
				return
			}
			lease.Store(int64(id))
		})
	}
	if o.ListInterval > 0 {
		for k := range o.Counts {
			b.wg.Add(1)
			go func() {
				defer b.wg.Done()
				for bgctx.Err() == nil {
					if _, err := ListAll(bgctx, r.cli.Client, r.objs.KindPrefix(k), o.PageLimit, r.cli.CommandTimeout()); err != nil && bgctx.Err() == nil {
						errs.add("background list: "+listErrorKey(err), 1)
					}
					select {
					case <-bgctx.Done():
					case <-time.After(o.ListInterval):
					}
				}
			}()
		}
	}
	return b
}

// stop ends the background traffic and returns the updates' figures and
// the proposals pending seen; it may be called again.
func (b *background) stop() (*load.Stats, pendingMax) {
	b.once.Do(func() {
		close(b.end)
		b.cancel()
		b.wg.Wait()
	})
	return b.updates, b.pending
}

// lists lists every resource whole Lists times, as a controller's relist
// or kubectl get --all-namespaces does, with the updates going on.
func (r *Run) lists(ctx context.Context, errs *errCounts) ([]result.ScaleList, error) {
	o := r.o
	out := make([]result.ScaleList, len(o.Counts))
	for k, c := range o.Counts {
		h := hist.New()
		sl := result.ScaleList{Kind: c.Kind.Name}
		for range o.Lists {
			l, err := ListAll(ctx, r.cli.Client, r.objs.KindPrefix(k), o.PageLimit, r.cli.CommandTimeout())
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			if err != nil {
				errs.add("list: "+listErrorKey(err), 1)
				continue
			}
			h.Record(l.Took)
			sl.SlowestPage = max(sl.SlowestPage, l.SlowestPage.Seconds())
			sl.Pages, sl.Keys, sl.Bytes = l.Pages, l.Keys, l.Bytes
		}
		sl.Latency = histLatency(h)
		out[k] = sl
	}
	return out, nil
}

// every calls f every interval until ctx ends, from a goroutine that wg
// counts.
func every(ctx context.Context, wg *sync.WaitGroup, interval time.Duration, f func()) {
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(interval)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				f()
			}
		}
	}()
}

// grant grants a lease of the events' TTL and keeps it to revoke it at the
// end.
func (r *Run) grant(ctx context.Context) (clientv3.LeaseID, error) {
	ctx, cancel := context.WithTimeout(ctx, r.cli.CommandTimeout())
	defer cancel()
	g, err := r.cli.Grant(ctx, int64(max(r.o.EventTTL/time.Second, 1)))
	if err != nil {
		return 0, err
	}
	r.mu.Lock()
	r.leases = append(r.leases, g.ID)
	r.mu.Unlock()
	return g.ID, nil
}

// revision returns etcd's current revision.
func (r *Run) revision(ctx context.Context) (int64, error) {
	ctx, cancel := context.WithTimeout(ctx, r.cli.CommandTimeout())
	defer cancel()
	g, err := r.cli.Get(ctx, r.o.Prefix, clientv3.WithCountOnly(), clientv3.WithLimit(1))
	if err != nil {
		return 0, fmt.Errorf("read etcd's revision: %w", err)
	}
	return g.Header.Revision, nil
}

// serverFigures fills the step's figures from etcd's metrics: sizes and
// memory after the step, the disk histograms and slow applies over it.
func serverFigures(st *result.ScaleStep, mark memberwatch.Mark, pending map[string]float64) {
	for i, a := range mark.After {
		if a.Err != nil {
			continue
		}
		sig := a.Snap.EtcdSignals()
		m := result.ScaleMember{Name: a.Member.Name, DBSize: sig.Values["db_size"], DBSizeInUse: sig.Values["db_size_in_use"],
			RSS: sig.Values["rss"], ProposalsPending: pending[a.Member.Name]}
		st.DBSize = max(st.DBSize, m.DBSize)
		st.DBSizeInUse = max(st.DBSizeInUse, m.DBSizeInUse)
		st.RSS = max(st.RSS, m.RSS)
		st.Members = append(st.Members, m)
		if b := mark.Before[i]; b.Err == nil {
			st.SlowApplies += promscrape.CounterDelta(b.Snap, a.Snap, promscrape.EtcdNames.SlowApplies[0])
		}
	}
	if wal := mark.Hist(promscrape.MetricWALFsync); len(wal.Buckets) > 0 {
		l := wal.Latency()
		st.WALFsync = &l
	}
	if commit := mark.Hist(promscrape.MetricBackendCommit); len(commit.Buckets) > 0 {
		l := commit.Latency()
		st.BackendCommit = &l
	}
}

// quotaOf is the backend quota the members report (the smallest).
func quotaOf(scrapes []promscrape.MemberScrape) float64 {
	var q float64
	for _, m := range scrapes {
		if m.Err != nil {
			continue
		}
		if v, ok := m.Snap.EtcdSignals().Values["quota"]; ok && v > 0 && (q == 0 || v < q) {
			q = v
		}
	}
	return q
}

// listErrorKey names a list's failure by its request's error.
func listErrorKey(err error) string {
	if u := errors.Unwrap(err); u != nil {
		err = u
	}
	return load.ErrorKey(err)
}

// Cleanup deletes the run's keys (external clusters: an embedded one goes
// as a whole) and revokes its leases.
func (r *Run) Cleanup(ctx context.Context) error {
	var errs []error
	if r.t.Kind() == lab.External {
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

// cleanupTimeout bounds one delete of the cleanup, at least.
const cleanupTimeout = 30 * time.Second

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
	if _, err := c.Delete(ctx, prefix, clientv3.WithPrefix()); err != nil {
		return fmt.Errorf("delete the run's keys under %s (delete them with etcdctl del --prefix %s): %w", prefix, prefix, err)
	}
	return nil
}

// inProcess reports whether an embedded member shares this process.
func inProcess(m cluster.Member) bool { return m.PID == os.Getpid() }
