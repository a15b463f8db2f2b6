package pipeline

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/etcdperf/etcdperf/internal/cluster"
	"github.com/etcdperf/etcdperf/internal/hist"
	"github.com/etcdperf/etcdperf/internal/load"
	"github.com/etcdperf/etcdperf/internal/promscrape"
	"github.com/etcdperf/etcdperf/internal/result"
	"github.com/etcdperf/etcdperf/internal/scale"
)

// scaleRun is one scale run under way.
type scaleRun struct {
	o       ScaleOptions
	t       *cluster.Target
	cli     *cluster.Client
	conns   []load.Conn
	objs    *scale.Objects
	httpc   *http.Client
	members []cluster.Member
	mu      sync.Mutex // guards leases
	leases  []clientv3.LeaseID
}

func newScaleRun(o ScaleOptions, t *cluster.Target, conns []load.Conn) *scaleRun {
	return &scaleRun{o: o, t: t, cli: t.Client(), conns: conns,
		objs:  scale.NewObjects(o.Prefix, o.Counts, o.Namespaces, o.Seed),
		httpc: t.Client().HTTPClient(), members: t.Members()}
}

// pendingInterval is how often etcd's proposals pending is read while a
// step writes.
const pendingInterval = 200 * time.Millisecond

// meanSample bounds the objects whose sizes make a kind's mean value size.
const meanSample = 10000

// run makes the steps until the last, a stop, or the end of ctx. It
// returns the scale section, and the server section over the whole run.
func (r *scaleRun) run(ctx context.Context) (*result.Scale, *result.Server, error) {
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
		if r.t.Kind() == cluster.Embedded && inProcess(m) {
			sc.Notes = append(sc.Notes, "the embedded member runs inside etcdperf: its RSS includes etcdperf's own memory")
		}
	}
	logs := scale.NewLogTail(logFiles)
	if len(logFiles) == 0 {
		sc.Notes = append(sc.Notes, "the members' logs are not at hand (external cluster): log warnings are not counted; slow applies come from etcd_server_slow_apply_total")
	}
	watches, err := scale.StartWatches(ctx, r.cli.Client, prefixes)
	if err != nil {
		return sc, nil, err
	}
	defer watches.Close()

	first := scrapeMembers(ctx, r.httpc, r.members)
	prev := first
	start := time.Now()
	var runErr error
	for s := 1; s <= o.Steps; s++ {
		if o.Progress != nil {
			o.Progress.Step.Store(int64(s))
		}
		st, after, err := r.step(ctx, s, start, prev, watches, logs)
		if st != nil {
			sc.Steps = append(sc.Steps, *st)
			prev = after
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
		if why := stopReason(*st, before, sc.Quota, o.Criteria); why != "" {
			if s < o.Steps {
				sc.Stopped = why
			}
			break
		}
	}
	sc.Seconds = time.Since(start).Seconds()
	srv, notes := serverSection(first, prev)
	sc.Notes = append(sc.Notes, notes...)
	return sc, srv, runErr
}

// step writes step s's objects with the background traffic, lists every
// resource, and reads etcd's figures. It returns the step (nil when it
// could not be measured) and the members' scrapes after it.
func (r *scaleRun) step(ctx context.Context, s int, runStart time.Time, before []memberScrape, watches *scale.Watches, logs *scale.LogTail) (*result.ScaleStep, []memberScrape, error) {
	o := r.o
	t0 := time.Now()
	batch := scale.NewBatch(o.Counts, o.Steps, s)
	leased := false
	for _, c := range o.Counts {
		leased = leased || c.Kind.Leased
	}
	var lease atomic.Int64
	if leased {
		id, err := r.grant(ctx)
		if err != nil {
			return nil, before, fmt.Errorf("grant a lease for step %d's events: %w", s, err)
		}
		lease.Store(int64(id))
	}
	errs := map[string]int64{}
	var mu sync.Mutex
	fail := func(key string) {
		mu.Lock()
		errs[key]++
		mu.Unlock()
	}

	// The background traffic, until the step's lists are done. The
	// updates end gracefully: a cancelled put would count as a failed
	// proposal in etcd's metrics.
	bg, cancelBg := context.WithCancel(ctx)
	endUpdates := make(chan struct{})
	var stopOnce sync.Once
	stopBg := func() {
		stopOnce.Do(func() {
			close(endUpdates)
			cancelBg()
		})
	}
	defer stopBg()
	var wg sync.WaitGroup
	var updates *load.Stats
	if upd := scale.NewUpdates(o.Counts, o.Steps, s, o.Seed); o.UpdateRate > 0 && upd.Len() > 0 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			updates, _ = load.Run(ctx, r.conns, load.Options{Workload: load.Put, Prefix: o.Prefix, Stop: endUpdates,
				Clients: min(16, max(2, int(o.UpdateRate/50))), Rate: o.UpdateRate, Duration: 24 * time.Hour,
				CommandTimeout: r.cli.CommandTimeout(), Objects: func(i int64, req *pb.PutRequest) {
					k, idx := upd.At(i)
					req.Key = r.objs.Key(req.Key[:0], k, idx)
					req.Value = r.objs.Value(req.Value[:0], k, idx, time.Now())
					req.Lease = 0
				}})
		}()
	}
	var pending float64
	memberPending := map[string]float64{}
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(pendingInterval)
		defer tick.Stop()
		for {
			select {
			case <-bg.Done():
				return
			case <-tick.C:
				for _, m := range scrapeMembers(bg, r.httpc, r.members) {
					if m.err != nil {
						continue
					}
					v := m.snap.EtcdSignals().Values["proposals_pending"]
					mu.Lock()
					pending = max(pending, v)
					memberPending[m.member.Name] = max(memberPending[m.member.Name], v)
					mu.Unlock()
				}
			}
		}
	}()
	if leased {
		// A new lease every quarter TTL, as the API server reuses one for a
		// short while: an event lives from 3/4 of the TTL to the TTL, and
		// no put goes out with a lease that has expired.
		wg.Add(1)
		go func() {
			defer wg.Done()
			tick := time.NewTicker(o.EventTTL / 4)
			defer tick.Stop()
			for {
				select {
				case <-bg.Done():
					return
				case <-tick.C:
					id, err := r.grant(bg)
					if err != nil {
						if bg.Err() == nil {
							fail("lease grant: " + load.ErrorKey(err))
						}
						continue
					}
					lease.Store(int64(id))
				}
			}
		}()
	}
	if o.ListInterval > 0 {
		for k := range o.Counts {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for bg.Err() == nil {
					if _, err := scale.ListAll(bg, r.cli.Client, r.objs.KindPrefix(k), o.PageLimit, r.cli.CommandTimeout()); err != nil && bg.Err() == nil {
						fail("background list: " + listErrorKey(err))
					}
					select {
					case <-bg.Done():
					case <-time.After(o.ListInterval):
					}
				}
			}()
		}
	}

	// The step's objects.
	lo := load.Options{Workload: load.Put, Prefix: o.Prefix, Clients: o.Clients, Total: batch.Len(), Rate: o.Rate,
		CommandTimeout: r.cli.CommandTimeout(), Objects: func(i int64, req *pb.PutRequest) {
			k, idx := batch.At(i)
			req.Key = r.objs.Key(req.Key[:0], k, idx)
			req.Value = r.objs.Value(req.Value[:0], k, idx, time.Now())
			req.Lease = 0
			if o.Counts[k].Kind.Leased {
				req.Lease = lease.Load()
			}
		}}
	if o.Progress != nil {
		lo.Progress = &o.Progress.Puts
	}
	grown, err := load.Run(ctx, r.conns, lo)
	if err != nil {
		stopBg()
		wg.Wait()
		return nil, before, err
	}

	// Every resource listed whole, as a controller's relist or kubectl get
	// --all-namespaces does, with the updates going on.
	lists := make([]result.ScaleList, len(o.Counts))
	for k, c := range o.Counts {
		h := hist.New()
		sl := result.ScaleList{Kind: c.Kind.Name}
		for range o.Lists {
			l, err := scale.ListAll(ctx, r.cli.Client, r.objs.KindPrefix(k), o.PageLimit, r.cli.CommandTimeout())
			if ctx.Err() != nil {
				stopBg()
				wg.Wait()
				return nil, before, ctx.Err()
			}
			if err != nil {
				fail("list: " + listErrorKey(err))
				continue
			}
			h.Record(l.Took)
			sl.SlowestPage = max(sl.SlowestPage, l.SlowestPage.Seconds())
			sl.Pages, sl.Keys, sl.Bytes = l.Pages, l.Keys, l.Bytes
		}
		if h.Count() > 0 {
			lat := h.Latency(false)
			sl.Latency = &lat
		}
		lists[k] = sl
	}
	stopBg()
	wg.Wait()

	// The watches have seen everything written by now.
	rev, err := r.revision(ctx)
	if err != nil {
		return nil, before, err
	}
	if !watches.CatchUp(ctx, rev, o.CatchUpTimeout) && ctx.Err() == nil {
		fail(fmt.Sprintf("watch: the events up to revision %d did not arrive within %s", rev, o.CatchUpTimeout))
	}
	if ctx.Err() != nil {
		return nil, before, ctx.Err()
	}
	lag, events, werrs := watches.Take()
	after := scrapeMembers(ctx, r.httpc, r.members)

	st := &result.ScaleStep{Step: s, T: time.Since(runStart).Seconds(), Seconds: time.Since(t0).Seconds(),
		Kinds: map[string]int64{}, Written: grown.Ops, Lists: lists, WatchEvents: events}
	for k, c := range o.Counts {
		n, err := countKeys(ctx, r.cli, r.objs.KindPrefix(k))
		if err != nil {
			return nil, before, fmt.Errorf("count the %s: %w", c.Kind.Name, err)
		}
		st.Kinds[c.Kind.Name] = n
		st.Objects += n
	}
	if grown.Latency != nil && grown.Latency.Count() > 0 {
		l := grown.Latency.Latency(false)
		st.Put = &l
	}
	if updates != nil && updates.Latency != nil && updates.Latency.Count() > 0 {
		st.Updates = updates.Ops
		l := updates.Latency.Latency(false)
		st.Update = &l
	}
	if lag.Count() > 0 {
		l := lag.Latency(false)
		st.WatchLag = &l
	}
	for k, v := range grown.Errors {
		errs["put: "+k] += v
	}
	if updates != nil {
		for k, v := range updates.Errors {
			errs["update: "+k] += v
		}
	}
	for k, v := range werrs {
		errs[k] += v
	}
	if len(errs) > 0 {
		st.Errors = errs
	}
	st.ProposalsPending = pending
	r.serverFigures(st, before, after, memberPending)
	if w, err := logs.Count(); err != nil {
		return st, after, err
	} else if len(w) > 0 {
		st.LogWarnings = w
	}
	return st, after, nil
}

// grant grants a lease of the events' TTL and keeps it to revoke it at the
// end.
func (r *scaleRun) grant(ctx context.Context) (clientv3.LeaseID, error) {
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
func (r *scaleRun) revision(ctx context.Context) (int64, error) {
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
func (r *scaleRun) serverFigures(st *result.ScaleStep, before, after []memberScrape, pending map[string]float64) {
	var wal, commit promscrape.Histogram
	for i, a := range after {
		if a.err != nil {
			continue
		}
		sig := a.snap.EtcdSignals()
		m := result.ScaleMember{Name: a.member.Name, DBSize: sig.Values["db_size"], DBSizeInUse: sig.Values["db_size_in_use"],
			RSS: sig.Values["rss"], ProposalsPending: pending[a.member.Name]}
		st.DBSize = max(st.DBSize, m.DBSize)
		st.DBSizeInUse = max(st.DBSizeInUse, m.DBSizeInUse)
		st.RSS = max(st.RSS, m.RSS)
		st.Members = append(st.Members, m)
		b := before[i]
		if b.err != nil {
			continue
		}
		if h, ok := histDelta(b.snap, a.snap, metricWALFsync); ok {
			wal = addHist(wal, h)
		}
		if h, ok := histDelta(b.snap, a.snap, metricBackendCommit); ok {
			commit = addHist(commit, h)
		}
		st.SlowApplies += counterDelta(b.snap, a.snap, promscrape.EtcdNames.SlowApplies[0])
	}
	if len(wal.Buckets) > 0 {
		l := wal.Latency()
		st.WALFsync = &l
	}
	if len(commit.Buckets) > 0 {
		l := commit.Latency()
		st.BackendCommit = &l
	}
}

// quotaOf is the backend quota the members report (the smallest).
func quotaOf(scrapes []memberScrape) float64 {
	var q float64
	for _, m := range scrapes {
		if m.err != nil {
			continue
		}
		if v, ok := m.snap.EtcdSignals().Values["quota"]; ok && v > 0 && (q == 0 || v < q) {
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
